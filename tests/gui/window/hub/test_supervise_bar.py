"""The bar that asks whether to supervise an agent in a project Belay has not seen: one question at a time."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QTextDocument
from PySide6.QtWidgets import QVBoxLayout, QWidget

from gui.window.hub.supervise_bar import SuperviseBar
from tests.conftest import wait_until

LEFT = Qt.MouseButton.LeftButton


def _bar(qtbot: Any) -> tuple[QWidget, SuperviseBar]:
    """The bar across the top of a window, as the hub has it (the window kept: the bar dies with it)."""
    window = QWidget()
    qtbot.addWidget(window)
    bar = SuperviseBar()
    QVBoxLayout(window).addWidget(bar)
    window.show()
    return window, bar


def _says(bar: SuperviseBar) -> str:
    document = QTextDocument()
    document.setHtml(bar.text.text())
    return document.toPlainText()


def test_several_agents_asking_are_answered_in_turn_and_the_bar_says_how_many_more_ask(qtbot: Any,
                                                                                        loop: Any) -> None:
    async def scenario() -> None:
        _window, bar = _bar(qtbot)
        assert not bar.isVisible()
        shop = asyncio.ensure_future(bar.ask(Path("/work/shop"), "Claude Code"))
        blog = asyncio.ensure_future(bar.ask(Path("/work/blog"), "Codex <cli>"))
        await wait_until(lambda: "more asking" in _says(bar), what="the second question counted")
        assert bar.isVisible()
        assert _says(bar) == ("Claude Code wants to work in /work/shop. Supervise it in Belay? Its calls wait until "
                              "you answer (1 more asking).")
        qtbot.mouseClick(bar.supervise, LEFT)
        qtbot.mouseClick(bar.supervise, LEFT)  # a double click answers the question shown, not the next one too
        assert await shop == "supervise"
        assert not blog.done() and bar.isVisible()
        assert _says(bar).startswith("Codex <cli> wants to work in /work/blog.") and "more asking" not in _says(bar)
        qtbot.mouseClick(bar.refuse, LEFT)
        assert await blog == "refuse"
        assert not bar.isVisible()

    loop.run_until_complete(scenario())


def test_closing_the_window_withdraws_every_question_unanswered(qtbot: Any, loop: Any) -> None:
    async def scenario() -> None:
        _window, bar = _bar(qtbot)
        asks = [asyncio.ensure_future(bar.ask(Path(f"/work/p{n}"), "Claude Code")) for n in range(2)]
        await wait_until(bar.isVisible, what="the question")
        bar.withdraw_all()
        assert await asyncio.gather(*asks) == [None, None]
        assert not bar.isVisible()

    loop.run_until_complete(scenario())
