"""Running the window: Qt and asyncio on one thread (qasync), and the demo.

`run_demo` copies the demo workspace, opens a console on it, shows the
window and starts the scripted agent.  Unattended (`--auto-approve
--quit-when-done --screenshot FILE`), an `AutoReviewer` answers approvals,
the steps the script names in `undo_after` are undone at the end, and the
window is saved as a PNG before the program exits.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import shutil
import sys
import tempfile
from collections.abc import AsyncIterator, Callable, Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QEvent, QMessageLogContext, QObject, QtMsgType, qInstallMessageHandler
from PySide6.QtWidgets import QApplication, QMessageBox, QWidget

from core import Hub
from gui.window.hub.window import HubWindow
from gui.window.kit.remembered import window_settings
from gui.window.kit.resources import demo_script, demo_workspace_template
from gui.window.kit.theme import ThemeSwitch, saved_choice
from gui.window.runtime.collector import MainThreadCollector
from gui.window.runtime.loop import EventLoop

if TYPE_CHECKING:  # imported where used: a bare `belay` paints its window first (tests/test_startup.py)
    from core import AutoReviewer, Console, ConsoleSurface, Script, ScriptedAgent
    from gui.window.chrome.first_run import FirstRunScreen
    from gui.window.workspace.window import MainWindow

log = logging.getLogger(__name__)
DEMO_MARKER = ".belay-demo"


@dataclass(frozen=True)
class DemoOptions:
    workspace: str | None = None
    state_dir: str | None = None
    script: str | None = None
    auto_approve: bool = False
    quit_when_done: bool = False
    screenshot: str | None = None
    pace: float = 0.4


@dataclass(frozen=True)
class WatchOptions:
    workspace: str | None = None
    state_dir: str | None = None
    screenshot: str | None = None
    quit_after: float | None = None
    tray: bool = False
    """Start minimized (`belay --tray`, the autostart entry)."""
    first_run: bool = False
    """A bare `belay`: show the first-run screen unless it was seen."""
    host: str | None = None
    """ssh://host/path: also follow that workspace's console on its host."""
    ssh: str = "ssh"
    remote_belay: str = "belay"


@dataclass(frozen=True)
class ClaudeOptions:
    prompt: str | None = None
    workspace: str | None = None
    state_dir: str | None = None
    model: str | None = None
    auto_approve: bool = False
    quit_when_done: bool = False
    screenshot: str | None = None


class DemoError(Exception):
    """The demo cannot start (a bad --workspace, a missing script)."""


def prepare_workspace(target: str | None) -> Path:
    """Copy the demo workspace into `target` (or a new temp dir) and return it."""
    if target is None:
        path = Path(tempfile.mkdtemp(prefix="belay-demo-"))
    else:
        path = Path(target).expanduser().resolve()
        if path.exists() and any(path.iterdir()):
            if (path / DEMO_MARKER).exists():
                return path  # an earlier demo: show its journal again
            raise DemoError(f"{path} is not empty; give a new or empty directory for the demo workspace")
    shutil.copytree(demo_workspace_template(), path, dirs_exist_ok=True)
    (path / DEMO_MARKER).write_text("This directory was created by `belay demo`.\n", encoding="utf-8")
    return path


NOISE = ("This plugin does not support propagateSizeHints",)
"""Qt messages that say nothing about Belay (the offscreen platform's limits)."""


def _route_qt_messages(mode: QtMsgType, context: QMessageLogContext, message: str) -> None:
    """Send Qt's messages to Python logging, minus known platform noise."""
    if message.startswith(NOISE):
        return
    level = {QtMsgType.QtDebugMsg: logging.DEBUG, QtMsgType.QtInfoMsg: logging.INFO,
             QtMsgType.QtWarningMsg: logging.WARNING}.get(mode, logging.ERROR)
    logging.getLogger("qt").log(level, "%s", message)


def _qt_app() -> QApplication:
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    qInstallMessageHandler(_route_qt_messages)
    app = QApplication.instance() or QApplication(sys.argv[:1])
    assert isinstance(app, QApplication)
    app.setApplicationName("Belay")
    app.setQuitOnLastWindowClosed(False)  # the coroutine ends the loop, after closing the console
    if ThemeSwitch.of(app) is None:
        settings = window_settings()
        ThemeSwitch(app, saved_choice(settings), settings).apply()
    return app


def _run_with_window(main: Callable[[], Coroutine[Any, Any, int]]) -> int:
    """Run `main()` on the loop that serves Qt and asyncio on this thread (gui.window.runtime.loop); returns its exit
    code."""
    app = _qt_app()
    collector = MainThreadCollector(app)
    collector.start()
    try:
        with asyncio.Runner(loop_factory=lambda: EventLoop(app)) as runner:
            return runner.run(main())
    finally:
        collector.stop()


@contextlib.asynccontextmanager
async def _window_on(console: ConsoleSurface,
                     reviewer: AutoReviewer | None = None) -> AsyncIterator[tuple[MainWindow, asyncio.Event]]:
    """Show the window on an open console; yields it and an event set when the last window closes.

    On the way out the reviewer stops, the window's tasks end and the console
    closes (denying what still waits for an answer) before the window goes.
    """
    from gui.window.workspace.window import MainWindow
    window = MainWindow(console)
    window.start()
    window.show()
    MainThreadCollector.settle()  # the window is up: what start-up made is frozen, never walked
    if reviewer:
        reviewer.start()
    closed = asyncio.Event()
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    app.lastWindowClosed.connect(closed.set)
    try:
        yield window, closed
    finally:
        if reviewer:
            await reviewer.stop()
        await window.attention.aclose()  # its D-Bus connection and listener
        await window.tasks.aclose()
        await console.close()
        window.close()


def _workspace_dir(given: str | None, command: str) -> Path | None:
    workspace = Path(given or ".").expanduser().resolve()
    if not workspace.is_dir():
        print(f"belay {command}: {workspace} is not a directory", file=sys.stderr)
        return None
    return workspace


async def _opened(console: Console, command: str, interactive: bool) -> bool:
    """Open the console; when it cannot be (a damaged journal, another program's database in its place)
    say why on stderr as the command line does, and in a message box when someone is watching."""
    from core import BelayError
    try:
        await console.open()
    except BelayError as e:
        text = " ".join(p if p.endswith(".") else f"{p}." for p in (e.info.message, e.info.suggestion) if p)
        print(f"belay {command}: {text}", file=sys.stderr, flush=True)
        if interactive:
            await _show_error(text)
        return False
    return True


async def _show_error(text: str) -> None:
    """A message box (opened, not exec'd: the loop keeps running) until the person dismisses it."""
    box = QMessageBox(QMessageBox.Icon.Critical, "Belay cannot open this workspace", text)
    dismissed = asyncio.Event()
    box.finished.connect(lambda _: dismissed.set())
    box.open()
    await dismissed.wait()
    box.deleteLater()


async def _serving_console(workspace: Path, state_dir: str | None, command: str,
                           interactive: bool = True) -> Console | None:
    """An open console serving the workspace to outside agents; None (said) when another console already does,
    or when it cannot be opened."""
    from core import Console
    console = Console(workspace, state_dir=state_dir, holder=f"window (belay {command})")
    if not await _opened(console, command, interactive):
        return None
    if console.endpoint is None:
        print(f"belay {command}: another Belay console already supervises {workspace}", file=sys.stderr)
        await console.close()
        return None
    return console


def run_watch(options: WatchOptions) -> int:
    """The window for every workspace (core.hub), with `--workspace` opened at once: it supervises outside agents
    (Claude Code, Codex, Gemini CLI, MCP clients) in any project that asks."""
    workspace = _workspace_dir(options.workspace, "watch") if options.workspace else None
    if options.workspace and workspace is None:
        return 2
    return _run_with_window(lambda: _watch(options, workspace))


async def _watch(options: WatchOptions, workspace: Path | None) -> int:
    """The hub's window.  A bare `belay` shows it first and loads the rest behind it (issue 15, "Start fast"): the
    hub's socket and its models once the window has painted, then what the first workspace will need."""
    hub = Hub(options.state_dir)
    if await hub.running_elsewhere():
        if options.host is not None and workspace is None:
            return await _watch_host(options)
        return _already_open() if workspace is None else await _watch_one(options, workspace)
    window = HubWindow(hub)
    welcome: FirstRunScreen | None = None
    try:
        if workspace is None:
            await _shown(window, options)
        if not await hub.start():  # another one started meanwhile
            return _already_open() if workspace is None else await _watch_one(options, workspace)
        if options.host is not None and not await _connected(window, options):
            return 2
        if workspace is not None:
            from core import BelayError
            try:
                console = await hub.open(workspace)
            except BelayError as e:
                text = " ".join(p if p.endswith(".") else f"{p}." for p in (e.info.message, e.info.suggestion) if p)
                print(f"belay watch: {text}", file=sys.stderr, flush=True)
                if options.quit_after is None:
                    await _show_error(text)
                return 2
            if console is None:
                print(f"belay watch: another Belay console already supervises {workspace}", file=sys.stderr)
                return 2
            _show(window, options)
        welcome = _first_run_screen(window, options)
        closed = asyncio.Event()
        app = QApplication.instance()
        assert isinstance(app, QApplication)
        app.lastWindowClosed.connect(closed.set)
        named = f"{workspace} and every" if workspace is not None else "Every"
        print(f"Watching: {named} project whose agent asks (Claude Code, Codex or Gemini CLI with Belay's hooks, "
              f"`belay mcp-serve` clients) goes through this window.", flush=True)
        window.tasks.spawn(_warm_up(), "load what a workspace needs")
        return await _stay_open(welcome or window, closed, options)
    finally:
        if welcome is not None:
            await welcome.tasks.aclose()
            welcome.close()
        await window.aclose()


async def _connected(window: HubWindow, options: WatchOptions) -> bool:
    """The console at `options.host` beside the local ones; False (said) when it cannot be reached."""
    from core import BelayError
    assert options.host is not None
    print(f"Connecting to {options.host}…", flush=True)
    try:
        await window.connect_host(options.host, ssh=options.ssh, remote_belay=options.remote_belay)
    except BelayError as e:
        print(f"belay watch: {e.info.message}", file=sys.stderr, flush=True)
        if options.quit_after is None:
            await _show_error(e.info.message)
        return False
    return True


async def _watch_host(options: WatchOptions) -> int:
    """`belay watch ssh://…` while another window has every local workspace: a window of its own for that host."""
    import shlex

    from core import BelayError, RemoteConsole
    assert options.host is not None
    try:
        console = await RemoteConsole.reached(options.host, ssh=shlex.split(options.ssh),
                                              remote_belay=options.remote_belay)
    except BelayError as e:
        print(f"belay watch: {e.info.message}", file=sys.stderr, flush=True)
        return 2
    async with _window_on(console) as (window, closed):
        print(f"Watching {options.host}: its agents' calls wait for you here.", flush=True)
        return await _stay_open(window, closed, options)


def _already_open() -> int:
    print("belay watch: a Belay window for every workspace is already open; its sidebar has them all", file=sys.stderr)
    return 2


def _show(window: HubWindow, options: WatchOptions) -> None:
    if options.tray:
        if not window.attention.show_tray():  # only the tray icon; with no tray on this desktop, minimized
            window.showMinimized()
    else:
        window.show()


class _PaintSpy(QObject):
    def __init__(self, painted: asyncio.Event) -> None:
        super().__init__()
        self._painted = painted

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        if event.type() == QEvent.Type.Paint:
            self._painted.set()
        return False


async def _shown(window: HubWindow, options: WatchOptions, within_s: float = 1.0) -> None:
    """Show the window (or only its tray icon) and wait until it has painted once, or `within_s` (a window in the
    tray, minimized or never exposed does not paint): what comes next holds the GUI thread for a moment, and the
    person should be looking at a window meanwhile."""
    painted = asyncio.Event()
    spy = _PaintSpy(painted)
    window.installEventFilter(spy)
    try:
        _show(window, options)
        if window.isVisible() and not window.isMinimized():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(painted.wait(), within_s)
    finally:
        window.removeEventFilter(spy)


async def _warm_up() -> None:
    """Import what opening the first workspace needs (most of the core, and a workspace's page: ~0.7 s of the GUI
    thread) while the window waits for an agent, so that the first request does not wait for it; one part per
    turn of the loop, after the window has painted."""
    await asyncio.sleep(0.05)
    from core import Console  # noqa: F401 - the console: policy, journal, tools, agents
    await asyncio.sleep(0.05)
    from gui.window.review import canvas  # noqa: F401 - the review's painted diff
    from gui.window.workspace import window  # noqa: F401 - a workspace's page: timeline, approvals, diffs


def _first_run_screen(window: HubWindow, options: WatchOptions) -> FirstRunScreen | None:
    """The first-run screen over the console, the first time a bare `belay` opens it (gui.window.chrome.first_run)."""
    if not options.first_run:
        return None
    from gui.window.chrome.first_run import FirstRunScreen, first_run_done
    if first_run_done():
        return None
    welcome = FirstRunScreen(options.state_dir)
    welcome.supervise.connect(lambda directory: window.tasks.spawn(window.hub.open(directory),
                                                                   f"supervise {directory}"))
    welcome.show()  # shown after the console: on top of it
    return welcome


async def _watch_one(options: WatchOptions, workspace: Path) -> int:
    console = await _serving_console(workspace, options.state_dir, "watch", options.quit_after is None)
    if console is None:
        return 2
    async with _window_on(console) as (window, closed):
        print(f"Watching {workspace}: Claude Code sessions with Belay's hooks installed (`belay hooks install`) "
              f"and `belay mcp-serve` clients now go through this window.", flush=True)
        return await _stay_open(window, closed, options)


async def _stay_open(window: QWidget, closed: asyncio.Event, options: WatchOptions) -> int:
    """Until the window is closed, or `--quit-after` seconds (then its screenshot, if asked for)."""
    if options.quit_after is None:
        await closed.wait()
    else:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(closed.wait(), options.quit_after)
        if options.screenshot:
            window.grab().save(options.screenshot)
            print(f"Screenshot: {options.screenshot}", flush=True)
    return 0


def run_claude(options: ClaudeOptions) -> int:
    """Claude Code started on the workspace through the Agent SDK, with the window supervising it."""
    workspace = _workspace_dir(options.workspace, "claude")
    return 2 if workspace is None else _run_with_window(lambda: _claude(options, workspace))


async def _claude(options: ClaudeOptions, workspace: Path) -> int:
    from core import AutoReviewer
    console = await _serving_console(workspace, options.state_dir, "claude", not options.quit_when_done)
    if console is None:
        return 2
    reviewer = AutoReviewer(console, [], delay=0.0) if options.auto_approve else None
    async with _window_on(console, reviewer) as (window, closed):
        from gui.window.workspace.launch import ask_prompt, say_session_ended
        prompt = options.prompt or await ask_prompt(window, console.workspace.root)
        if not prompt:
            return 0 if options.quit_when_done else await _wait_closed(closed)
        session = console.launch_claude(prompt, model=options.model, follow_ups=not options.quit_when_done)
        if not options.quit_when_done:
            session.add_done_callback(lambda task: say_session_ended(window.statusBar(), task))
            return await _wait_closed(closed)
        end = await session
        print(f"Claude finished: {end.summary}", flush=True)
        if options.screenshot:
            await asyncio.sleep(0.3)  # let the bridge drain the last events
            window.grab().save(options.screenshot)
            print(f"Screenshot: {options.screenshot}", flush=True)
        return 0 if end.ok else 1


async def _wait_closed(closed: asyncio.Event) -> int:
    await closed.wait()
    return 0


def run_demo(options: DemoOptions) -> int:
    from core import load_script
    try:
        script = load_script(options.script or demo_script())
        workspace = prepare_workspace(options.workspace)
    except (DemoError, OSError, ValueError) as e:
        print(f"belay demo: {e}", file=sys.stderr)
        return 2
    print(f"Demo workspace: {workspace}", flush=True)
    return _run_with_window(lambda: _demo(options, script, workspace))


async def _demo(options: DemoOptions, script: Script, workspace: Path) -> int:
    from core import AutoReviewer, Console, run_script
    console = Console(workspace, state_dir=options.state_dir, holder="window (belay demo)")
    if not await _opened(console, "demo", not options.quit_when_done):
        return 2
    reviewer = AutoReviewer(console, script.review, delay=0.0 if options.quit_when_done else 1.0) \
        if options.auto_approve else None
    async with _window_on(console, reviewer) as (window, closed):
        agent_task = console.launch(run_script(console, script, options.pace), f"agent {script.name}")
        if not options.quit_when_done:
            await closed.wait()
            return 0
        summary, agent = await agent_task
        await _undo_after(console, script, agent)
        print(f"Agent finished: {summary}", flush=True)
        if options.screenshot:
            await _screenshot(window, agent, Path(options.screenshot))
        return 0


async def _undo_after(console: Console, script: Script, agent: ScriptedAgent) -> None:
    from core import RunStatus
    for step_id in script.undo_after:
        outcome = agent.outcomes.get(step_id)
        if outcome is not None and outcome.status == RunStatus.DONE:
            report = await console.undo(outcome.call_id)
            print(f"Undo of step {step_id}: {report.message}", flush=True)


async def _wait_for(predicate: Callable[[], bool], within_s: float) -> bool:
    deadline = asyncio.get_running_loop().time() + within_s
    while not predicate():
        if asyncio.get_running_loop().time() > deadline:
            return False
        await asyncio.sleep(0.02)
    return True


async def _screenshot(window: MainWindow, agent: ScriptedAgent, path: Path) -> None:
    """Select the most interesting call (the first edit) and save the window."""
    from core import RunStatus
    await asyncio.sleep(0.2)  # let the bridge drain the last events
    edited = next((o for o in agent.outcomes.values() if o.status == RunStatus.DONE and o.data.get("paths")), None)
    if edited is not None:
        window.select_call(edited.call_id)
        await _wait_for(lambda: window.details.shows_diff_of(edited.call_id), 5.0)
    await asyncio.sleep(0.1)
    path.parent.mkdir(parents=True, exist_ok=True)
    if not window.grab().save(str(path)):
        raise OSError(f"could not write the screenshot {path}")
    print(f"Screenshot: {path}", flush=True)
