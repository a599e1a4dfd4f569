"""Following the desktop's colour scheme: the real window, a real X server and the real D-Bus protocol.

On Linux, desktops say their colour scheme through the XDG desktop portal's Settings interface (service
org.freedesktop.portal.Desktop, object /org/freedesktop/portal/desktop): "color-scheme" in the
"org.freedesktop.appearance" namespace, a uint32 (0 no preference, 1 prefer dark, 2 prefer light), read
with ReadAll / ReadOne / Read and announced with the SettingChanged signal.  Qt 6.11 hears it only through
some platform themes, and not all of them well:
- "gnome" (Qt's own; picked when XDG_CURRENT_DESKTOP names a GTK-based desktop: GNOME, XFCE, MATE,
  Cinnamon...) asks ReadAll at start and follows SettingChanged;
- "gtk3" (picked before "gnome" when GTK 3 is installed) follows SettingChanged but drops the start-up
  answer: on a dark desktop its hint says Light until the desktop changes again;
- "generic" (no XDG_CURRENT_DESKTOP, a tiling window manager, or a theme that did not load) never asks;
- "xdgdesktopportal" (Flatpak, Snap, or QT_QPA_PLATFORMTHEME) reads it at start and follows it.
So Belay's ThemeSwitch also hears the portal itself (gui/window/kit/theme.py), and these tests hold it to that
under the three themes a desktop session gets.

The portal here is a small stand-in on a private session bus (jeepney, the D-Bus library Belay already
uses), answering ReadAll, ReadOne and Read as xdg-desktop-portal does and emitting SettingChanged when the
test "switches the desktop".  Qt is the real client: a fresh interpreter on Xvfb (the xcb platform) with
the real window, and what the X server shows is what is checked.
"""
from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

import pytest

from gui.window.kit.theme import DARK, THEME_ENV
from tests.conftest import ROOT
from tests.desktop import HeadlessDesktop, headless_desktop, missing_tools

PORTAL_SERVICE = "org.freedesktop.portal.Desktop"
PORTAL_PATH = "/org/freedesktop/portal/desktop"
SETTINGS = "org.freedesktop.portal.Settings"
APPEARANCE = "org.freedesktop.appearance"
PREFER_DARK, PREFER_LIGHT = 1, 2
LINE_TIMEOUT_S = 30
"""At most this long for the child's next report (its start, with the window, is the slow part)."""


class SettingsPortal:
    """The Settings interface of xdg-desktop-portal, answering for a desktop whose colour scheme the test sets.

    It owns org.freedesktop.portal.Desktop on the bus, answers ReadAll / ReadOne / Read and the interface's
    `version` property, refuses anything else as the real portal would (UnknownMethod), keeps the calls
    it received, and announces a change with SettingChanged."""

    def __init__(self, bus: str, color_scheme: int) -> None:
        from jeepney import MessageType
        from jeepney.bus_messages import message_bus
        from jeepney.io.threading import open_dbus_connection

        self.color_scheme = color_scheme
        self.calls: list[tuple[str, str, tuple[Any, ...]]] = []
        self._connection = open_dbus_connection(bus)
        self._connection.send(message_bus.RequestName(PORTAL_SERVICE))
        reply = self._connection.receive(timeout=10)
        while reply.header.message_type is not MessageType.method_return:  # NameAcquired comes first
            reply = self._connection.receive(timeout=10)
        assert reply.body == (1,), f"could not own {PORTAL_SERVICE}: {reply.body}"  # 1: primary owner
        self._thread = threading.Thread(target=self._serve, name="settings portal", daemon=True)
        self._thread.start()

    def settings(self) -> dict[str, dict[str, tuple[str, Any]]]:
        return {APPEARANCE: {"color-scheme": ("u", self.color_scheme), "contrast": ("u", 0)}}

    def switch(self, color_scheme: int) -> None:
        """The desktop changes its colour scheme: SettingChanged, as xdg-desktop-portal sends it."""
        from jeepney import DBusAddress, new_signal

        self.color_scheme = color_scheme
        self._connection.send(new_signal(DBusAddress(PORTAL_PATH, interface=SETTINGS), "SettingChanged", "ssv",
                                         (APPEARANCE, "color-scheme", ("u", color_scheme))))

    def close(self) -> None:
        self._connection.close()
        self._thread.join(timeout=10)

    def _serve(self) -> None:
        from jeepney import HeaderFields, MessageType
        from jeepney.io.threading import ReceiveStopped

        while True:
            try:
                message = self._connection.receive()
            except (ReceiveStopped, OSError):
                return
            if message.header.message_type is MessageType.method_call:
                fields = message.header.fields
                call = (str(fields.get(HeaderFields.interface, "")), str(fields.get(HeaderFields.member)),
                        tuple(message.body))
                self.calls.append(call)
                self._connection.send(self._answer(message, *call))

    def _answer(self, message: Any, interface: str, member: str, args: tuple[Any, ...]) -> Any:
        from jeepney import new_error, new_method_return

        settings = self.settings()
        if interface == SETTINGS and member == "ReadAll":  # namespaces asked for (none: all of them)
            wanted = {name: values for name, values in settings.items() if not args[0] or name in args[0]}
            return new_method_return(message, "a{sa{sv}}", (wanted,))
        if interface == SETTINGS and member in ("ReadOne", "Read") and args[1] in settings.get(args[0], {}):
            value = settings[args[0]][args[1]]
            return new_method_return(message, "v", (value if member == "ReadOne" else ("v", value),))
        if interface == SETTINGS and member in ("ReadOne", "Read"):
            return new_error(message, "org.freedesktop.portal.Error.NotFound", "s", ("Requested setting not found",))
        if (interface, member) == ("org.freedesktop.DBus.Properties", "Get") and args == (SETTINGS, "version"):
            return new_method_return(message, "v", (("u", 2),))
        return new_error(message, "org.freedesktop.DBus.Error.UnknownMethod", "s", (f"no {interface}.{member}",))


CHILD = r"""
import asyncio, json, sys
from pathlib import Path

from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QApplication

from core import Console
from gui.window.kit import theme
from gui.window.runtime.loop import EventLoop
from gui.window.workspace.window import MainWindow


def say(**fields):
    sys.stdout.write(json.dumps(fields) + "\n")
    sys.stdout.flush()


def on_screen(widget):
    # what the X server shows of `widget` (not what Qt would draw): its average lightness, 0 black .. 255 white
    window = widget.window()
    corner = widget.mapTo(window, QPoint(0, 0))
    shot = window.screen().grabWindow(window.winId(), corner.x(), corner.y(), widget.width(), widget.height())
    image = shot.toImage().scaled(1, 1, Qt.AspectRatioMode.IgnoreAspectRatio, Qt.TransformationMode.SmoothTransformation)
    return image.pixelColor(0, 0).lightness()


def looks(name, lightness):
    return lightness < 80 if name == "dark" else lightness > 170


async def settle(widget, name):
    # the change reaches the screen: the restyle, the diff's re-render and the repaint happen on later turns
    started = asyncio.get_running_loop().time()
    lightness = on_screen(widget)
    while not looks(name, lightness) and asyncio.get_running_loop().time() - started < 5:
        await asyncio.sleep(0.05)
        lightness = on_screen(widget)
    return lightness


async def until(predicate, within=10.0):
    for _ in range(int(within / 0.02)):
        if predicate():
            return
        await asyncio.sleep(0.02)
    raise SystemExit("timed out in the child")


async def main(workspace):
    app = QApplication.instance()
    hints = app.styleHints()
    switch = theme.ThemeSwitch(app, "system")
    switch.apply()
    console = Console(workspace)
    await console.open()
    window = MainWindow(console)
    window.start()
    window.resize(1000, 700)
    window.show()
    path = workspace / "long.py"
    path.write_text("".join(f"value_{n} = {n}\n" for n in range(80)), encoding="utf-8")
    old = "".join(f"value_{n} = {n}\n" for n in range(10, 50))
    agent = await console.start_agent("lead", "scripted")
    call = asyncio.ensure_future(console.call(agent, "Edit", {"file_path": str(path), "old_string": old,
                                                              "new_string": old.replace(" = ", " = 2 * ")}))
    await until(lambda: window.approvals.current is not None and len(window.approvals.diff.canvas.rows) >= 40)
    diff = window.approvals.diff.canvas.viewport()
    changes = asyncio.Queue()
    switch.changed.connect(changes.put_nowait)
    say(event="ready", shown=theme.current().name, qt_hint=hints.colorScheme().name,
        lightness=await settle(diff, theme.current().name))
    done = asyncio.Event()
    asyncio.get_running_loop().add_reader(sys.stdin.fileno(), done.set)  # the test closes our stdin: finish
    while not done.is_set():
        waiting = asyncio.ensure_future(changes.get())
        finished = asyncio.ensure_future(done.wait())
        await asyncio.wait({waiting, finished}, return_when=asyncio.FIRST_COMPLETED)
        finished.cancel()
        if not waiting.done():
            waiting.cancel()
            break
        name = waiting.result()
        say(event="changed", shown=name, palette=theme.current().name, qt_hint=hints.colorScheme().name,
            lightness=await settle(diff, name))
    asyncio.get_running_loop().remove_reader(sys.stdin.fileno())
    console.deny(window.approvals.current.call_id)
    outcome = await asyncio.wait_for(call, 10)
    say(event="answered", status=outcome.status.name)
    await window.tasks.aclose()
    await console.close()
    window.close()


app = QApplication(sys.argv[:1])
with asyncio.Runner(loop_factory=lambda: EventLoop(app)) as runner:
    runner.run(main(Path(sys.argv[1])))
"""


FIRST_PAINT_CHILD = r"""
import json, os, sys
from gui.terminal.cli import main
from PySide6.QtCore import QEvent, QObject
from PySide6.QtGui import QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication, QWidget


class FirstPaint(QObject):
    def eventFilter(self, watched, event):
        if event.type() == QEvent.Type.Paint and isinstance(watched, QWidget) and watched.isWindow():
            from gui.window.kit import theme
            window = watched.palette().color(QPalette.ColorRole.Window).name()
            sys.stdout.write(json.dumps({"shown": theme.current().name, "window": window,
                                         "qt_hint": QGuiApplication.styleHints().colorScheme().name}) + "\n")
            sys.stdout.flush()
            os._exit(0)
        return False


app = QApplication(sys.argv[:1])
spy = FirstPaint()
app.installEventFilter(spy)
main([])
sys.exit("no paint")
"""
"""`belay` as a person types it (bench/startup.py's child): it reports the theme at its window's first paint."""


class Child:
    """The window's process: its reports (one JSON object a line), read with a timeout, and its stderr
    (in a file: a pipe nobody reads could fill and stop the child)."""

    def __init__(self, process: subprocess.Popen[str], log: IO[str]) -> None:
        self.process = process
        self.log = log
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._reader = threading.Thread(target=self._read, name="child stdout", daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self._lines.put(line)
        self._lines.put(None)

    def join(self) -> None:
        """Wait for the reader (the process has ended)."""
        self._reader.join(timeout=10)

    def stderr(self) -> str:
        self.log.seek(0)
        return self.log.read()

    def next(self, what: str) -> dict[str, Any]:
        """The child's next report; fails (with its stderr) when it ends or says nothing in time."""
        try:
            line = self._lines.get(timeout=LINE_TIMEOUT_S)
        except queue.Empty:
            line = None
        if line is None:
            self.process.kill()
            self.process.wait(timeout=10)
            pytest.fail(f"no report of {what} from the window's process (rc {self.process.returncode}):\n"
                        f"{self.stderr()[-3000:]}")
        return dict(json.loads(line))


@pytest.fixture
def desktop() -> Iterator[HeadlessDesktop]:
    missing = missing_tools()
    if missing:
        pytest.skip(f"needs {', '.join(missing)} (Debian: apt-get install xvfb dbus; make system-deps)")
    with headless_desktop() as started:
        yield started


def _qt_env(desktop: HeadlessDesktop, platform_theme: str) -> dict[str, str]:
    """A GNOME session on `desktop` whose Qt uses `platform_theme` and logs which theme it created."""
    env = desktop.env(QT_QPA_PLATFORM="xcb", XDG_CURRENT_DESKTOP="GNOME", QT_QPA_PLATFORMTHEME=platform_theme,
                      QT_LOGGING_RULES="qt.qpa.theme=true", NO_AT_BRIDGE="1", PYTHONPATH=str(ROOT))
    env.pop(THEME_ENV, None)
    return env


def _with_window(desktop: HeadlessDesktop, workspace: Path, platform_theme: str,
                 body: Callable[[Child], None]) -> str:
    """Run the window's process through `body`; its stderr (Qt's log of the platform theme it created)."""
    with tempfile.TemporaryFile("w+") as log, \
            subprocess.Popen([sys.executable, "-c", CHILD, str(workspace)], env=_qt_env(desktop, platform_theme),
                             cwd=ROOT, text=True, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=log) as process:  # closes its pipes
        child = Child(process, log)
        try:
            body(child)
            assert process.stdin is not None
            process.stdin.close()  # finish: the child answers the request and closes
            answered = child.next("the answer")
            assert answered == {"event": "answered", "status": "DENIED"}, answered  # the window still works
            assert process.wait(timeout=LINE_TIMEOUT_S) == 0
            return child.stderr()
        finally:
            if process.poll() is None:
                process.kill()
                process.wait(timeout=10)
            child.join()


@pytest.mark.parametrize("platform_theme", ["gtk3", "gnome", "generic"])
def test_the_window_opens_in_the_desktops_scheme_and_follows_it_live(desktop: HeadlessDesktop, workspace: Path,
                                                                     platform_theme: str) -> None:
    """A dark desktop: the window opens dark.  The desktop turns light and dark again while a request waits:
    each time the window and the waiting diff are repainted in the desktop's scheme, on the X server, and
    afterwards the window still answers the request.  Under the themes Qt uses on a GTK-based desktop,
    "gtk3" (when GTK 3 is installed; its hint misses the portal's answer at start-up) and "gnome" (Qt's
    own, without GTK), and under "generic", Qt's theme elsewhere (no XDG_CURRENT_DESKTOP, a tiling window
    manager), whose hint never changes: Belay hears the portal itself."""
    portal = SettingsPortal(desktop.bus, PREFER_DARK)
    seen: list[dict[str, Any]] = []

    def body(child: Child) -> None:
        seen.append(child.next("the window with its waiting diff"))
        opened = seen[0]
        assert (opened["event"], opened["shown"]) == ("ready", "dark"), seen
        assert opened["lightness"] < 80, seen  # the waiting diff, dark on the X server
        for scheme in (PREFER_LIGHT, PREFER_DARK):
            started = time.monotonic()
            portal.switch(scheme)
            seen.append(child.next("the switch") | {"seconds": round(time.monotonic() - started, 2)})

    try:
        log = _with_window(desktop, workspace, platform_theme, body)
    finally:
        portal.close()
    if f'Successfully created platform theme "{platform_theme}"' not in log:
        assert platform_theme == "gtk3", log[-2000:]
        pytest.skip("Qt's gtk3 platform theme did not load (no GTK 3 here); the gnome theme is tested alone")
    _, light, dark = seen
    assert (light["event"], light["shown"], light["palette"]) == ("changed", "light", "light"), seen
    assert light["lightness"] > 170, seen
    assert (dark["event"], dark["shown"], dark["palette"]) == ("changed", "dark", "dark"), seen
    assert dark["lightness"] < 80, seen
    asked = {member for interface, member, _ in portal.calls if interface == SETTINGS}
    assert asked & {"ReadAll", "ReadOne", "Read"}, portal.calls  # the desktop's scheme was read from the portal


@pytest.mark.parametrize("platform_theme", ["gtk3", "gnome", "generic"])
def test_belay_paints_its_first_frame_dark_on_a_dark_desktop(desktop: HeadlessDesktop, platform_theme: str) -> None:
    """`belay` started on a dark desktop: the first frame of its window is already dark, not light and then
    dark.  Qt's hint alone was Light under gtk3 and Unknown under generic there (see the test above)."""
    from gui.window.chrome.first_run import MARK

    config = Path(os.environ["BELAY_CONFIG_DIR"])  # private to this test (tests/conftest.py)
    (config / MARK).write_text("seen\n", encoding="utf-8")  # a returning user: the console, no first-run screen
    portal = SettingsPortal(desktop.bus, PREFER_DARK)
    try:
        painted = subprocess.run([sys.executable, "-c", FIRST_PAINT_CHILD], env=_qt_env(desktop, platform_theme),
                                 cwd=ROOT, text=True, capture_output=True, timeout=LINE_TIMEOUT_S)
    finally:
        portal.close()
    if f'Successfully created platform theme "{platform_theme}"' not in painted.stderr:
        assert platform_theme == "gtk3", painted.stderr[-2000:]
        pytest.skip("Qt's gtk3 platform theme did not load (no GTK 3 here)")
    assert painted.returncode == 0, painted.stderr[-2000:]
    first = json.loads(painted.stdout)
    assert (first["shown"], first["window"]) == ("dark", DARK.window_bg), first
