"""A question asked from a coroutine (gui.window.kit.confirm): answered by a click or Escape, while the loop
goes on; a question nobody waits for any more goes away."""

from __future__ import annotations

import asyncio
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox, QWidget

from gui.window.kit.confirm import answer
from tests.conftest import wait_until

Button = QMessageBox.StandardButton


def _parent(qtbot: Any) -> QWidget:
    parent = QWidget()
    qtbot.addWidget(parent)
    parent.show()
    return parent


def _box(parent: QWidget) -> QMessageBox:
    return QMessageBox(QMessageBox.Icon.Question, "Rewind to here?", "Undo 2 later calls?",
                       Button.Yes | Button.Cancel, parent)


def _shown(parent: QWidget) -> QMessageBox | None:
    boxes = [b for b in parent.findChildren(QMessageBox) if b.isVisible()]
    return boxes[0] if boxes else None


def test_the_button_clicked_is_the_answer_and_the_loop_goes_on_meanwhile(qtbot: Any, loop: Any) -> None:
    parent = _parent(qtbot)
    ticks: list[int] = []

    async def ticking() -> None:
        while True:
            ticks.append(len(ticks))
            await asyncio.sleep(0.01)

    async def scenario() -> Button:
        ticker = asyncio.ensure_future(ticking())
        asked = asyncio.ensure_future(answer(_box(parent)))
        try:
            await wait_until(lambda: _shown(parent) is not None, what="the question")
            box = _shown(parent)
            assert box is not None and box.text() == "Undo 2 later calls?"
            seen = len(ticks)
            await wait_until(lambda: len(ticks) > seen + 2, what="other tasks to run while the question is open")
            qtbot.mouseClick(box.button(Button.Yes), Qt.MouseButton.LeftButton)
            return await asked
        finally:
            ticker.cancel()

    assert loop.run_until_complete(scenario()) == Button.Yes
    assert _shown(parent) is None


def test_escape_answers_with_the_escape_button(qtbot: Any, loop: Any) -> None:
    parent = _parent(qtbot)

    async def scenario() -> Button:
        asked = asyncio.ensure_future(answer(_box(parent)))
        await wait_until(lambda: _shown(parent) is not None, what="the question")
        qtbot.keyClick(_shown(parent), Qt.Key.Key_Escape)
        return await asked

    assert loop.run_until_complete(scenario()) == Button.Cancel


def test_a_question_nobody_waits_for_goes_away(qtbot: Any, loop: Any) -> None:
    """The window closing cancels the task that asked: its box must not stay on screen unanswered."""
    parent = _parent(qtbot)

    async def scenario() -> bool:
        asked = asyncio.ensure_future(answer(_box(parent)))
        await wait_until(lambda: _shown(parent) is not None, what="the question")
        asked.cancel()
        await asyncio.wait([asked])
        return asked.cancelled()

    assert loop.run_until_complete(scenario())
    assert _shown(parent) is None
