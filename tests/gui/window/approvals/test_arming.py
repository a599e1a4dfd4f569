"""Nothing is answered that was not on screen: the sight of the shown request, and fresh key presses only.

The clock is the test's: time passes when the test says so (`Clock.advance`, then `Sight.poll`, which the
timer calls in the window), so no assertion depends on how fast this machine is.  The diff draws slowly on
purpose: its rows are built in a worker that waits until the test lets it finish.  Keys are real QKeyEvents
(press, auto-repeat press, release) sent to the focused widget, through the application's event filters as
a platform's keys are.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any

import pytest
from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QApplication, QWidget

import gui.window.review.view as review_view
from core import ApprovalRequested, Timeline
from core.changes.diffs import compute_diff
from core.process.overlay import overlay_support
from gui.window.approvals.arming import SEEN_S, Sight
from gui.window.approvals.panel import ApprovalPanel
from tests.conftest import wait_until

CTRL = Qt.KeyboardModifier.ControlModifier


class Clock:
    """A clock that moves only when told."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


class Answers:
    """The console as far as the panel answers it: what was approved and denied, in order."""

    def __init__(self) -> None:
        self.given: list[tuple[str, str]] = []
        self.previews = overlay_support()

    def approve(self, call_id: str, **_: Any) -> None:
        self.given.append(("approve", call_id))

    def deny(self, call_id: str, reason: str = "", **_: Any) -> None:
        self.given.append(("deny", call_id))


def _write(call_id: str, lines: int = 400) -> ApprovalRequested:
    old = "".join(f"value_{n} = compute(x, {n})\n" for n in range(lines))
    new = old.replace("compute(x, 7)", "compute(x * 2, 7)").replace("compute(x, 300)", "compute(y, 300)")
    return ApprovalRequested(call_id=call_id, agent_id="a1", tool="Write", summary=f"{call_id}.py", reason="asks",
                             args={}, diffs=(compute_diff(f"{call_id}.py", old.encode(), new.encode()),))


def _press(widget: QWidget, key: Qt.Key = Qt.Key.Key_Return, mods: Any = CTRL, *, repeat: bool = False) -> None:
    QApplication.sendEvent(widget, QKeyEvent(QEvent.Type.KeyPress, key, mods, "", repeat))


def _release(widget: QWidget, key: Qt.Key = Qt.Key.Key_Return, mods: Any = CTRL, *, repeat: bool = False) -> None:
    QApplication.sendEvent(widget, QKeyEvent(QEvent.Type.KeyRelease, key, mods, "", repeat))


@pytest.fixture
def slow_diff(monkeypatch: pytest.MonkeyPatch) -> Callable[[], None]:
    """The review's rows are built only when the test calls the returned function (once per diff)."""
    allowed = threading.Semaphore(0)
    build = review_view.build_layout

    def slowly(diffs: Any, **kwargs: Any) -> Any:
        if diffs:  # nothing to show is shown at once
            assert allowed.acquire(timeout=30), "the test never let the diff draw"
        return build(diffs, **kwargs)

    monkeypatch.setattr(review_view, "build_layout", slowly)
    return allowed.release


def test_the_sight_arms_only_after_the_request_was_drawn_and_seen_for_the_set_time(qtbot: Any) -> None:
    clock = Clock()
    sight = Sight(clock=clock)
    sight.show("c1")
    clock.advance(60)
    sight.poll()
    assert not sight.seen() and not sight.armed()  # shown for a minute, never drawn: nothing
    sight.drawn("c2")
    assert not sight.seen()  # a paint of another request does not count
    sight.drawn("c1")
    assert sight.seen() and not sight.armed() and sight.left() == pytest.approx(SEEN_S)
    clock.advance(SEEN_S - 0.01)
    sight.poll()
    assert not sight.armed()
    clock.advance(0.01)
    sight.poll()
    assert sight.armed() and sight.left() == 0
    sight.unsee()  # hidden: drawn and looked at again
    assert not sight.seen() and not sight.armed()
    sight.show("c2")
    sight.drawn("c2")
    clock.advance(SEEN_S)
    sight.poll()
    assert sight.armed()
    assert SEEN_S == 0.5


def test_keys_answer_only_a_drawn_request_seen_for_the_set_time_and_never_when_held_or_repeating(
        qtbot: Any, loop: Any, slow_diff: Callable[[], None]) -> None:
    clock = Clock()
    console = Answers()
    panel = ApprovalPanel(console, Timeline(), clock=clock)  # type: ignore[arg-type]  # the answers it gives
    qtbot.addWidget(panel)
    panel.resize(900, 600)

    async def armed_after_drawing() -> None:
        await wait_until(panel.sight.seen, what="the diff drawn")
        assert not panel.approve_button.isEnabled() and panel.approve_button.text() == f"Approve in {SEEN_S:.1f} s"
        clock.advance(SEEN_S)
        panel.sight.poll()
        assert panel.approve_button.isEnabled() and panel.approve_button.text() == "Approve  (Ctrl+Enter)"

    async def scenario() -> None:
        panel.show()
        panel.activateWindow()
        await wait_until(panel.isActiveWindow, what="the panel's window active")
        panel.add(_write("first"))
        panel.add(_write("second"))
        panel.setFocus()
        assert panel.current is not None and panel.current.call_id == "first"
        assert panel.approve_button.text() == "Approve · showing…" and not panel.deny_button.isEnabled()
        clock.advance(60)  # a minute with the diff still being drawn (the old one, or nothing, on screen)
        panel.sight.poll()
        for _ in range(3):
            _press(panel)
            _release(panel)
        _press(panel, Qt.Key.Key_D)  # Ctrl+D would deny what is not on screen either
        _release(panel, Qt.Key.Key_D)
        await asyncio.sleep(0.05)
        assert console.given == [] and not panel.sight.seen()
        slow_diff()  # the first diff may be built now
        await wait_until(panel.sight.seen, what="the diff drawn")
        then_keys()
        slow_diff()
        await armed_after_drawing()
        keys_after_the_answer()

    def then_keys() -> None:
        _press(panel)  # drawn, not yet looked at for SEEN_S: held from now on
        assert console.given == []
        clock.advance(SEEN_S)
        panel.sight.poll()
        for _ in range(10):  # the same key, held and repeating, after the request armed
            _press(panel, repeat=True)
            _release(panel, repeat=True)
        assert console.given == []
        _press(panel)  # a second press without a release (a platform that does not mark its repeats)
        assert console.given == []
        _release(panel)
        _press(panel)  # released, pressed again: approves the first
        assert console.given == [("approve", "first")]
        panel.remove("first")  # the console's answer comes back through the bridge
        assert panel.current is not None and panel.current.call_id == "second"
        assert not panel.approve_button.isEnabled()

    def keys_after_the_answer() -> None:
        for _ in range(10):  # still held from the answer: repeats never approve the next request
            _press(panel, repeat=True)
            _release(panel, repeat=True)
        _press(panel)
        assert console.given == [("approve", "first")]
        _release(panel)
        _press(panel, Qt.Key.Key_D)
        _release(panel, Qt.Key.Key_D)
        assert console.given == [("approve", "first"), ("deny", "second")]

    loop.run_until_complete(scenario())


def test_enter_in_the_reason_box_denies_once_per_press_and_a_hidden_panel_is_unseen_again(
        qtbot: Any, loop: Any) -> None:
    clock = Clock()
    console = Answers()
    panel = ApprovalPanel(console, Timeline(), clock=clock)  # type: ignore[arg-type]
    qtbot.addWidget(panel)
    panel.resize(900, 600)

    async def scenario() -> None:
        panel.show()
        panel.activateWindow()
        await wait_until(panel.isActiveWindow, what="the panel's window active")
        for name in ("one", "two"):
            panel.add(_write(name, lines=30))
        await wait_until(panel.sight.seen, what="the diff drawn")
        clock.advance(SEEN_S)
        panel.sight.poll()
        assert panel.may_approve("one") and not panel.may_approve("two")
        panel.focus_reason()
        assert QApplication.focusWidget() is panel.reason
        _press(panel.reason, Qt.Key.Key_Return, Qt.KeyboardModifier.NoModifier)
        assert console.given == [("deny", "one")]
        panel.remove("one")
        await wait_until(panel.sight.seen, what="the second drawn")
        for _ in range(5):  # Enter held down in the reason box
            _press(panel.reason, Qt.Key.Key_Return, Qt.KeyboardModifier.NoModifier, repeat=True)
        assert console.given == [("deny", "one")]
        clock.advance(SEEN_S)
        panel.sight.poll()
        assert panel.may_approve("two")
        panel.hide()  # off screen: unseen until drawn again, then SEEN_S again
        assert not panel.sight.seen() and not panel.may_approve("two")
        panel.show()
        await wait_until(panel.sight.seen, what="drawn again")
        assert not panel.sight.armed() and not panel.approve_button.isEnabled()

    loop.run_until_complete(scenario())
