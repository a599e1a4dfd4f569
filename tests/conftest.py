"""Shared test set-up: offscreen Qt, a private state dir, and a qasync loop.

Qt warnings fail tests (pytest-qt's qt_log_level_fail in pyproject.toml) and
so do Python warnings (filterwarnings = error).  So does what a test leaves
running (tests/leftovers.py): a thread, a process, an inotify instance.
"""

from __future__ import annotations

import asyncio
import atexit
import gc
import logging
import os
import shutil
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import TypeVar

import pytest

from tests.leftovers import Leftovers

INHERITED = (
    "BELAY_THEME", "BELAY_RESOURCES", "BELAY_DEBUG", "BELAY_HOOK_WAIT", "BELAY_HOOK_MAX_WAIT", "BELAY_LAUNCHED_SESSION",
    "BELAY_STATE_DIR", "BELAY_CONFIG_DIR", "CLAUDE_PROJECT_DIR", "CODEX_PROJECT_DIR", "GEMINI_PROJECT_DIR",
    "CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME",
    "QT_QPA_PLATFORMTHEME", "QT_STYLE_OVERRIDE", "QT_SCALE_FACTOR", "QT_SCREEN_SCALE_FACTORS", "QT_FONT_DPI",
    "QT_ENABLE_HIGHDPI_SCALING", "LC_ALL", "LC_MESSAGES", "LANGUAGE",
)
"""What the product (or Qt, or a command's messages) reads from the environment that the shell running the tests
may hold: Belay's own settings (BELAY_THEME=dark failed the theme tests), an agent CLI's session the tests are
run from, a desktop's scaling.  The tests start from none of them and set what they need."""


_EMPTY_GIT_CONFIG = tempfile.mkstemp(prefix="belay-tests-gitconfig-")[1]
"""An empty global git configuration of the run's own: not /dev/null, which `git config --global` (a hostile
case's setup) replaces with a regular file when the tests run as root, breaking every later command."""
atexit.register(lambda: os.path.exists(_EMPTY_GIT_CONFIG) and os.unlink(_EMPTY_GIT_CONFIG))


def _start_from_a_known_environment() -> None:
    """No test depends on what it inherits from the shell that runs it (issue 33): offscreen Qt, English messages
    from commands, no git repository or git configuration of the caller's (GIT_DIR from a git hook, a global
    identity or commit signing), none of INHERITED.  (SIGINT, ignored under `make test &`, is set where a test
    relies on it: for the process it signals.)"""
    for name in [*INHERITED, *(n for n in os.environ if n.startswith("GIT_"))]:
        os.environ.pop(name, None)
    os.environ.update(QT_QPA_PLATFORM="offscreen", LANG="C.UTF-8", GIT_CONFIG_GLOBAL=_EMPTY_GIT_CONFIG,
                      GIT_CONFIG_NOSYSTEM="1")
    # The Pythons the tests start (`belay`, toy servers, agents' hooks) keep their bytecode, outside the checkout:
    # under a PYTHONDONTWRITEBYTECODE from the shell each compiled every module of Belay it imported, again (a
    # third of a `belay run`'s start).
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    os.environ.setdefault("PYTHONPYCACHEPREFIX", os.path.join(tempfile.gettempdir(), "belay-tests-pycache"))


_start_from_a_known_environment()

ROOT = Path(__file__).resolve().parent.parent


def running(*words: str) -> list[int]:
    """Processes of this machine whose command line holds every word.  A command inside Belay's sandbox has a PID
    namespace of its own: the pid it writes down is that namespace's, meaningless (or another process) outside,
    so a test finds its processes this way."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            line = (entry / "cmdline").read_bytes().decode(errors="replace")
        except OSError:
            continue
        if entry.name.isdigit() and all(w in line for w in words):
            found.append(int(entry.name))
    return found
T = TypeVar("T")

RUNAWAY_S = 30
"""A generous deadline (pytest-timeout's, per test) for work whose speed is bench/'s to measure: bounded work
ends here in a second or two even on a loaded machine; quadratic or unbounded work runs for minutes."""
WIND_DOWN_S = 3.0
"""How long a thread or process a test stopped may take to be gone before the test is said to have left it."""


@pytest.fixture(autouse=True)
def _releases_what_it_starts(_private_state: Path) -> Iterator[None]:
    """A test ends every thread, process and inotify watcher it started (first of the autouse fixtures, so
    checked after every other fixture's teardown).  Left behind, they add up over a run: the per-user inotify
    instance limit (128 here) ran out and failed later tests, and a counted thread was another test's."""
    before = Leftovers.now()
    yield
    marker = f"BELAY_STATE_DIR={_private_state}"
    deadline = time.monotonic() + WIND_DOWN_S
    while (left := Leftovers.now().since(before, marker)) and time.monotonic() < deadline:
        time.sleep(0.02)
    if left:
        pytest.fail("left running after the test: " + ", ".join(left), pytrace=False)


@pytest.fixture(autouse=True)
def _fail_on_warning_logs(request: pytest.FixtureRequest, caplog: pytest.LogCaptureFixture) -> Iterator[None]:
    """A warning or error logged during a test fails it, unless the test expects one (`allow_warning_logs`), or
    that one: `allow_warning_logs("logger: message")` allows those lines only."""
    yield
    marker = request.node.get_closest_marker("allow_warning_logs")
    if marker is not None and not marker.args:
        return
    allowed = set(marker.args) if marker is not None else set()
    bad = [line for r in caplog.get_records("call") if r.levelno >= logging.WARNING
           and (line := f"{r.name}: {r.getMessage()}") not in allowed]
    if bad:
        pytest.fail("unexpected warning logs:\n" + "\n".join(bad))


@pytest.fixture(autouse=True)
def _private_state(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Never touch the real user's data or settings directories."""
    state = tmp_path_factory.mktemp("state")
    monkeypatch.setenv("BELAY_STATE_DIR", str(state))
    monkeypatch.setenv("BELAY_CONFIG_DIR", str(tmp_path_factory.mktemp("config")))
    return state


SECONDS_PER_TEST = {"test_hostile.py": 1.0}
"""What a test of these end-to-end files takes, roughly, where it is far from the others' (about six seconds)."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The end-to-end tests (four fifths of a run's time, seconds each) go first in each worker's share.

    pyproject.toml runs the workers with --dist worksteal: each gets an equal slice of this order at the start, and
    one that runs out takes the last half of another's queue.  So each slice begins with about as much end-to-end
    work as the others (whole files, the longest first, to the least loaded slice) and ends with unit tests of
    milliseconds: those are what moves between workers, and a run does not end with one worker alone on a long
    test.  A file's tests keep their order; every worker computes the same order (xdist requires it)."""
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    integration = ROOT / "tests" / "integration"
    files: dict[Path, list[pytest.Item]] = {}
    units = []
    for item in items:
        if integration in item.path.parents:
            files.setdefault(item.path, []).append(item)
        else:
            units.append(item)
    heads: list[list[pytest.Item]] = [[] for _ in range(workers)]
    loads = [0.0] * workers

    def cost(file: tuple[Path, list[pytest.Item]]) -> float:
        return len(file[1]) * SECONDS_PER_TEST.get(file[0].name, 6.0)

    for file in sorted(files.items(), key=lambda f: (-cost(f), str(f[0]))):
        lightest = loads.index(min(loads))
        heads[lightest] += file[1]
        loads[lightest] += cost(file)
    ordered: list[pytest.Item] = []
    left = len(items)
    for k, head in enumerate(heads):
        share = left // (workers - k)  # what worksteal hands worker k at the start
        left -= share
        filler = max(share - len(head), 0)
        ordered += head + units[:filler]
        units = units[filler:]
    items[:] = ordered + units


def pytest_collection_finish(session: pytest.Session) -> None:
    """What importing the tests made (modules, classes, pydantic's schemas: some 120,000 objects) is frozen,
    as the app freezes what its start-up made: each collection after a GUI test then walks only what tests
    made since, not 90 ms of start-up every time."""
    gc.collect()
    gc.freeze()


@pytest.fixture(autouse=True)
def _collect_on_the_gui_thread(request: pytest.FixtureRequest) -> Iterator[None]:
    """Widgets in reference cycles must die on the GUI thread, as in the app (see gui/window/runtime/collector.py).
    What survives the collection is frozen in its turn (a collector's `stop` unfreezes everything)."""
    if not {"qtbot", "qapp", "loop"} & set(request.fixturenames):
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
        gc.collect()
        gc.freeze()


@pytest.fixture(autouse=True)
def _themed_as_belay_starts(request: pytest.FixtureRequest) -> None:
    """GUI tests run with Belay's light theme applied, as `belay` applies one before its first window.

    Like the app, the tests never take the application style sheet away: removing it and setting one
    again while widgets live crashes Qt 6.11 in QApplication::setStyleSheet (a segfault seen in about three
    runs of four of the theme tests before this); a test that switches the theme switches back."""
    if not {"qtbot", "qapp", "loop"} & set(request.fixturenames):
        return
    app = request.getfixturevalue("qapp")
    if not app.styleSheet():
        from gui.window.kit import theme
        app.setPalette(theme.palette(theme.LIGHT))
        app.setStyleSheet(theme.style_sheet(theme.LIGHT))


@pytest.fixture
def state_dir(_private_state: Path) -> Path:
    return _private_state


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A copy of the demo workspace."""
    ws = tmp_path / "ws"
    shutil.copytree(ROOT / "resources" / "demo" / "workspace", ws)
    return ws


@pytest.fixture
def loop(qapp: object) -> Iterator[asyncio.AbstractEventLoop]:
    """A qasync loop: asyncio and Qt on one thread, as in the app."""
    from gui.window.runtime.loop import EventLoop

    qapp.setQuitOnLastWindowClosed(False)  # type: ignore[attr-defined]  # closing a window must not stop the loop
    event_loop = EventLoop(qapp)
    asyncio.set_event_loop(event_loop)
    yield event_loop
    event_loop.close()
    asyncio.set_event_loop(None)


async def wait_until(predicate: Callable[[], object], timeout: float = 5.0, what: str = "condition") -> None:
    """Poll `predicate` while the loop (and Qt) keep running."""
    deadline = asyncio.get_running_loop().time() + timeout
    while not predicate():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.01)


def run(coro: Awaitable[T]) -> T:
    """Run a coroutine on a plain asyncio loop (core tests need no Qt)."""
    async def main() -> T:
        return await coro
    return asyncio.run(main())


