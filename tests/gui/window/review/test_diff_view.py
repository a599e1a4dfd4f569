"""Tests for gui.window.review.diff_view: what the user sees, and that it never blocks."""

from __future__ import annotations

import asyncio
import gc
import logging
import threading
import time
from collections.abc import Callable, Iterator

import pytest
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from core.changes.diffs import compute_diff
from core.models.diffs import FileDiff
from gui.window.review import diff_view
from gui.window.review.diff_view import DiffView
from gui.window.runtime.loop import EventLoop

# The offscreen platform warns on every top-level show(); that is not a Belay problem.
pytestmark = pytest.mark.qt_log_ignore(r"This plugin does not support propagateSizeHints\(\)")


@pytest.fixture
def loop(qapp: QApplication) -> Iterator[asyncio.AbstractEventLoop]:
    """A qasync loop: asyncio and Qt on one thread, as in the app."""
    event_loop = EventLoop(qapp)
    asyncio.set_event_loop(event_loop)
    yield event_loop
    event_loop.close()
    asyncio.set_event_loop(None)


async def _until(predicate: Callable[[], object], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.01)


def _view(qtbot: QtBot, **kwargs: object) -> DiffView:
    view = DiffView(**kwargs)  # type: ignore[arg-type]
    qtbot.addWidget(view)
    view.resize(900, 600)
    view.show()
    return view


def _python_change() -> FileDiff:
    old = "".join(f"value_{n} = {n}\n" for n in range(1, 21))
    new = old.replace("value_12 = 12\n", "value_12 = 'twelve'\n")
    return compute_diff("pkg/mod.py", old.encode(), new.encode())


def test_changed_code_shows_with_its_line_numbers(qtbot: QtBot, loop: asyncio.AbstractEventLoop) -> None:
    view = _view(qtbot)

    async def scenario() -> None:
        view.set_diffs([_python_change()])
        await _until(view.is_rendered)

    loop.run_until_complete(scenario())
    lines = view.plain_text().splitlines()
    assert lines[0] == "pkg/mod.py  (modify)  +1 -1"
    assert "12    - value_12 = 12" in lines
    assert "   12 + value_12 = 'twelve'" in lines
    assert "11 11   value_11 = 11" in lines
    assert "@@ -9,7 +9,7 @@" in lines


def test_rendered_signal_fires_once_the_diff_is_visible(qtbot: QtBot, loop: asyncio.AbstractEventLoop) -> None:
    view = _view(qtbot)

    async def scenario() -> None:
        with qtbot.waitSignal(view.rendered, timeout=10_000):
            view.set_diffs([_python_change()])
            assert not view.is_rendered()
            await _until(view.is_rendered)

    loop.run_until_complete(scenario())
    assert "value_12 = 'twelve'" in view.plain_text()


@pytest.mark.parametrize("superseded_while", ["queued", "highlighting", "inserting"])
def test_a_stale_render_never_replaces_the_latest(
    superseded_while: str, qtbot: QtBot, loop: asyncio.AbstractEventLoop
) -> None:
    view = _view(qtbot)
    slow = compute_diff("slow.py", None, "".join(f"first_{n} = {n}\n" for n in range(4_000)).encode())
    fast = compute_diff("fast.py", None, b"second = 2\n")

    async def scenario() -> None:
        view.set_diffs([slow])
        if superseded_while == "highlighting":
            await asyncio.sleep(0.05)
        elif superseded_while == "inserting":
            await _until(lambda: "slow.py" in view.plain_text())
        assert not view.is_rendered()
        view.set_diffs([fast])
        await _until(view.is_rendered)
        await asyncio.sleep(1.0)  # time enough for the first render to finish, if it ran on

    loop.run_until_complete(scenario())
    assert "second = 2" in view.plain_text()
    assert "first_" not in view.plain_text()


def test_markup_in_code_shows_literally(qtbot: QtBot, loop: asyncio.AbstractEventLoop) -> None:
    view = _view(qtbot)
    hostile = b"<b>x</b>\n</table></p><script>alert(1)</script>\n&amp; &lt;\n"

    async def scenario() -> None:
        view.set_diffs([compute_diff("page<1>.html", None, hostile)])
        await _until(view.is_rendered)

    loop.run_until_complete(scenario())
    text = view.plain_text()
    assert "page<1>.html" in text
    assert "1 + <b>x</b>" in text
    assert "2 + </table></p><script>alert(1)</script>" in text
    assert "3 + &amp; &lt;" in text


def test_a_20000_line_diff_renders_without_blocking(qtbot: QtBot, loop: asyncio.AbstractEventLoop,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    view = _view(qtbot)
    source = "".join(f"def function_{n}(x):\n    return x * {n}  # {'<tag>' if n % 7 else ''}\n"
                     for n in range(10_000))
    diff = compute_diff("big.py", source.encode(), source.replace("return x", "return -x").encode())
    # Never blocking is two things the test can see: the highlighting runs in a worker thread, and the loop
    # (Qt's too) runs between every slice of the document put on screen.  (How long the loop stalls is
    # bench/review_diff.py's figure.)
    seen: list[str] = []
    render, append = diff_view.render_diff_blocks, diff_view._append_blocks
    monkeypatch.setattr(diff_view, "render_diff_blocks", lambda *args, **kwargs: (
        seen.append(f"highlighted on {threading.current_thread().name}"), render(*args, **kwargs))[1])
    monkeypatch.setattr(diff_view, "_append_blocks", lambda *args: (seen.append("slice"), append(*args))[1])

    async def ticker() -> None:
        while True:
            seen.append("tick")
            await asyncio.sleep(0)

    async def scenario() -> None:
        ticks = asyncio.ensure_future(ticker())
        view.set_diffs([diff])
        await _until(view.is_rendered, timeout=30)
        ticks.cancel()
        await asyncio.wait([ticks])

    loop.run_until_complete(scenario())
    [highlighted] = [what for what in seen if what.startswith("highlighted")]
    assert highlighted != f"highlighted on {threading.main_thread().name}"
    slices = "".join("s" if what == "slice" else "t" for what in seen if what in ("slice", "tick"))
    assert slices.count("s") > 10 and "ss" not in slices, "a slice followed another with no turn of the loop"
    assert "return -x * 9" in view.plain_text()
    assert "more changes not shown" in view.plain_text()  # capped at 5,000 lines


def test_empty_state_and_custom_placeholder(qtbot: QtBot, loop: asyncio.AbstractEventLoop) -> None:
    view = _view(qtbot)
    assert view.plain_text() == "No changes to show" and view.is_rendered()

    async def scenario() -> None:
        view.set_diffs([_python_change()])
        await _until(view.is_rendered)
        view.set_diffs([])

    loop.run_until_complete(scenario())
    assert view.plain_text() == "No changes to show"
    other = _view(qtbot, placeholder="Select a call to see its changes")
    assert other.plain_text() == "Select a call to see its changes"


@pytest.mark.allow_warning_logs  # the failure is logged on purpose
def test_a_failing_render_is_logged_and_shown(
    qtbot: QtBot, loop: asyncio.AbstractEventLoop, monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    def explode(*args: object, **kwargs: object) -> list[str]:
        raise ValueError("lexer exploded")

    monkeypatch.setattr(diff_view, "render_diff_blocks", explode)
    view = _view(qtbot)

    async def scenario() -> None:
        view.set_diffs([_python_change()])
        await _until(view.is_rendered)

    with caplog.at_level(logging.ERROR, logger="gui.window.review.diff_view"):
        loop.run_until_complete(scenario())
    assert view.plain_text() == "Could not show the diff: lexer exploded"
    (record,) = caplog.records
    assert record.exc_info is not None and "lexer exploded" in str(record.exc_info[1])


def test_without_a_running_loop_it_renders_at_once(qtbot: QtBot) -> None:
    view = _view(qtbot)
    view.set_diffs([_python_change()])
    assert view.is_rendered()
    assert "value_12 = 'twelve'" in view.plain_text()


def test_closing_mid_render_leaves_no_pending_task(
    qtbot: QtBot, qapp: QApplication, caplog: pytest.LogCaptureFixture
) -> None:
    big = compute_diff("big.py", None, "".join(f"x_{n} = {n}\n" for n in range(5_000)).encode())
    view = DiffView()  # not shown: closing the last shown window would quit the loop
    qtbot.addWidget(view)

    async def scenario() -> None:
        view.set_diffs([big])
        await asyncio.sleep(0)
        view.close()
        await asyncio.sleep(0.05)

    event_loop = EventLoop(qapp)
    asyncio.set_event_loop(event_loop)
    try:
        with caplog.at_level(logging.DEBUG, logger="asyncio"):
            event_loop.run_until_complete(scenario())
            pending = [t for t in asyncio.all_tasks(event_loop) if not t.done()]
    finally:
        event_loop.close()  # also waits for the worker thread still highlighting
        asyncio.set_event_loop(None)
    gc.collect()
    assert pending == []
    assert "pending" not in caplog.text
    assert not view.is_rendered() and view.plain_text() == "No changes to show"


def test_binary_and_missing_newline_notes_show(qtbot: QtBot, loop: asyncio.AbstractEventLoop) -> None:
    view = _view(qtbot)

    async def scenario() -> None:
        view.set_diffs([compute_diff("logo.png", b"\x89PNG\x00" + bytes(1199), b"\x89PNG\x00" + bytes(1305)),
                        compute_diff("notes.txt", b"a\n", b"a\nb")])
        await _until(view.is_rendered)

    loop.run_until_complete(scenario())
    text = view.plain_text()
    assert "logo.png  (modify)  +0 -0  binary file, 1,204 -> 1,310 bytes" in text
    assert "2 + b  (no newline at end of file)" in text
