"""Where the person leaves the window and its dividers is where they find them at the next start."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QPoint, QSettings, Qt
from PySide6.QtWidgets import QLabel, QMainWindow, QSplitter

from core import Console
from gui.window.kit.remembered import fit_default_size, keep_splitter, restore_geometry, save_geometry
from gui.window.workspace.window import MainWindow
from tests.conftest import ROOT
from tests.desktop import headless_desktop
from tests.gui.window.workspace.test_window import in_window

LEFT = Qt.MouseButton.LeftButton


def _drag_handle(qtbot: Any, split: QSplitter, by: int) -> None:
    """Drag the splitter's first divider `by` pixels sideways with the mouse, as a person does."""
    handle = split.handle(1)
    middle = handle.rect().center()
    qtbot.mousePress(handle, LEFT, pos=middle)
    qtbot.mouseMove(handle, middle + QPoint(by // 2, 0))
    qtbot.mouseMove(handle, middle + QPoint(by, 0))
    qtbot.mouseRelease(handle, LEFT, pos=middle + QPoint(by, 0))


def _window(settings: QSettings) -> tuple[QMainWindow, QSplitter]:
    window = QMainWindow()
    fit_default_size(window, 700, 400)
    restore_geometry(window, "test/geometry", settings)
    split = QSplitter(Qt.Orientation.Horizontal)
    split.addWidget(QLabel("left"))
    split.addWidget(QLabel("right"))
    split.setSizes([350, 350])
    keep_splitter(split, "test/split", settings)
    window.setCentralWidget(split)
    return window, split


def test_a_dragged_divider_comes_back_in_the_next_window(qtbot: Any, tmp_path: Path) -> None:
    """The divider anywhere; the window's size only on a real screen (the next test): offscreen the designed
    size stands, so a screenshot taken without a display neither takes nor changes the person's size."""
    settings = QSettings(str(tmp_path / "window.ini"), QSettings.Format.IniFormat)
    first, split = _window(settings)
    qtbot.addWidget(first)
    first.show()
    qtbot.waitExposed(first)
    before = split.sizes()
    _drag_handle(qtbot, split, -120)
    dragged = split.sizes()
    assert dragged[0] < before[0] - 60, f"the drag did not move the divider: {before} -> {dragged}"
    save_geometry(first, "test/geometry", settings)
    first.close()

    second, again = _window(QSettings(str(tmp_path / "window.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(second)
    second.show()
    qtbot.waitExposed(second)
    assert (second.width(), second.height()) == (700, 400)  # offscreen: the designed size
    assert again.sizes() == dragged


def test_a_saved_layout_that_no_longer_fits_is_ignored(qtbot: Any, tmp_path: Path) -> None:
    """A hand-edited or foreign value leaves the defaults instead of a broken layout."""
    fresh, fresh_split = _window(QSettings(str(tmp_path / "fresh.ini"), QSettings.Format.IniFormat))
    odd = QSettings(str(tmp_path / "window.ini"), QSettings.Format.IniFormat)
    odd.setValue("test/split", "not a splitter state")
    odd.setValue("test/geometry", 42)
    window, split = _window(odd)
    for each in (fresh, window):
        qtbot.addWidget(each)
        each.show()
        qtbot.waitExposed(each)
    assert split.sizes() == fresh_split.sizes()
    assert (window.width(), window.height()) == (fresh.width(), fresh.height()) == (700, 400)


SIZE_CHILD = r"""
import sys
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication, QMainWindow
from gui.window.kit.remembered import fit_default_size, restore_geometry, save_geometry
app = QApplication(sys.argv[:1])
settings = QSettings(sys.argv[2], QSettings.Format.IniFormat)
window = QMainWindow()
fit_default_size(window, 1400, 860)
restored = restore_geometry(window, "test/geometry", settings)
window.show()
app.processEvents()
room = window.screen().availableGeometry()
print(app.platformName(), window.width(), window.height(), room.width(), room.height(), restored)
if sys.argv[1] == "leave":
    window.resize(900, 500)
    app.processEvents()
    save_geometry(window, "test/geometry", settings)
    settings.sync()
"""


def _sized(platform: str, step: str, ini: Path) -> list[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("QT_QPA_PLATFORM", "DISPLAY", "WAYLAND_DISPLAY")}
    command = [sys.executable, "-c", SIZE_CHILD, step, str(ini)]
    if platform == "xcb":
        command = ["xvfb-run", "-a", "-s", "-screen 0 1024x640x24", *command]
    else:
        env["QT_QPA_PLATFORM"] = platform
    shown = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert shown.returncode == 0, shown.stderr
    return shown.stdout.split()


def test_on_a_small_real_screen_the_window_fits_it_and_comes_back_at_the_size_left(tmp_path: Path) -> None:
    """A 1024x640 X screen: the console's first size fits it, and the size the person leaves comes back.
    Offscreen (a screenshot without a display) the designed size stands and the person's is left alone."""
    if shutil.which("xvfb-run") is None:
        pytest.skip("needs xvfb-run (Debian: apt-get install xvfb; make system-deps)")
    ini = tmp_path / "window.ini"
    assert _sized("xcb", "leave", ini) == ["xcb", "1024", "640", "1024", "640", "False"]
    assert _sized("xcb", "look", ini)[1:3] == ["900", "500"]
    assert _sized("offscreen", "leave", ini)[:3] == ["offscreen", "1400", "860"]
    assert _sized("xcb", "look", ini)[1:3] == ["900", "500"]  # the offscreen window did not change it


def test_the_console_opens_with_the_timeline_divider_where_it_was_left(qtbot: Any, loop: Any,
                                                                       workspace: Path) -> None:
    left: list[list[int]] = []

    async def drag(console: Console, window: MainWindow) -> None:
        window.resize(1300, 760)  # room to move: the offscreen screen (800 wide) opens it at its smallest
        await qtbot_wait_exposed(qtbot, window)
        before = window.split.sizes()
        _drag_handle(qtbot, window.split, -150)
        assert window.split.sizes()[0] < before[0] - 100
        left.append(window.split.sizes())

    async def reopen(console: Console, window: MainWindow) -> None:
        window.resize(1300, 760)
        await qtbot_wait_exposed(qtbot, window)
        assert window.split.sizes() == left[0]

    in_window(qtbot, loop, workspace, drag)
    in_window(qtbot, loop, workspace, reopen)


async def qtbot_wait_exposed(qtbot: Any, window: MainWindow) -> None:
    from tests.conftest import wait_until
    await wait_until(lambda: window.isVisible() and window.split.handle(1).isVisible(), what="the window")


FRAME_CHILD = r"""
import asyncio, json, sys
from pathlib import Path
from PySide6.QtWidgets import QApplication
from core import Console
from gui.window.runtime.loop import EventLoop
from gui.window.workspace.window import MainWindow


def rect(r):
    return [r.x(), r.y(), r.width(), r.height()]


async def main(workspace):
    console = Console(workspace)
    await console.open()
    window = MainWindow(console)
    window.start()
    window.show()
    seen, still = None, 0
    for _ in range(250):  # until the window manager has framed it and nothing moves for a while
        await asyncio.sleep(0.02)
        now = (rect(window.frameGeometry()), rect(window.geometry()))
        framed = now[0] != now[1]
        still = still + 1 if now == seen and framed else 0
        seen = now
        if still >= 25:
            break
    print(json.dumps({"frame": rect(window.frameGeometry()), "room": rect(window.screen().availableGeometry()),
                      "inner": rect(window.geometry())}))
    await window.tasks.aclose()
    await console.close()
    window.close()


app = QApplication(sys.argv[:1])
with asyncio.Runner(loop_factory=lambda: EventLoop(app)) as runner:
    runner.run(main(Path(sys.argv[1])))
"""


def test_under_a_window_manager_the_first_window_and_its_frame_fit_the_screen(tmp_path: Path) -> None:
    """Xvfb at 1024x640 with openbox framing windows: the console's first window, title bar and borders
    included, lies inside the screen's available geometry (its size alone used to, its frame did not)."""
    missing = [tool for tool in ("Xvfb", "openbox", "xprop") if shutil.which(tool) is None]
    if missing:
        pytest.skip(f"needs {', '.join(missing)} (Debian: apt-get install xvfb openbox x11-utils)")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("QT_QPA_PLATFORM", "WAYLAND_DISPLAY")}
    with headless_desktop("1024x640x24", bus=False) as desktop:
        desktop.start("openbox")
        for _ in range(200):  # openbox says it manages the screen
            probe = subprocess.run(["xprop", "-root", "_NET_SUPPORTING_WM_CHECK"], env=desktop.env(),
                                   capture_output=True, text=True)
            if "window id" in probe.stdout:
                break
            time.sleep(0.05)
        else:
            pytest.fail("openbox did not start on Xvfb")
        env.update(DISPLAY=desktop.display, QT_QPA_PLATFORM="xcb", BELAY_CONFIG_DIR=str(tmp_path / "config"))
        shown = subprocess.run([sys.executable, "-c", FRAME_CHILD, str(workspace)], cwd=ROOT, env=env,
                               capture_output=True, text=True, timeout=120)
    assert shown.returncode == 0, shown.stderr
    placed = json.loads(shown.stdout.strip().splitlines()[-1])
    (x, y, w, h), (rx, ry, rw, rh) = placed["frame"], placed["room"]
    assert placed["frame"] != placed["inner"], f"openbox did not frame the window: {placed}"
    assert rx <= x and ry <= y and x + w <= rx + rw and y + h <= ry + rh, f"the frame leaves the screen: {placed}"
