"""The details pane: what a person reads about one call."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QUrl
from PySide6.QtWidgets import QPlainTextEdit

from core import Console
from gui.window.details_pane import DetailsPane


def test_a_cut_bash_output_links_to_the_whole_output_in_the_journal(qtbot: Any, loop: Any, workspace: Path) -> None:
    async def scenario() -> None:
        async with Console(workspace) as console:
            await console.add_rule("Bash(seq:*)", "allow", "session")
            agent = await console.start_agent("agent", "scripted")
            outcome = await console.call(agent, "Bash", {"command": "seq 1 100000"})
            pane = DetailsPane(console.timeline)
            qtbot.addWidget(pane)
            pane.show_key(f"r:{outcome.call_id}")
            assert "Read the whole output kept in the journal" in pane.info.toHtml()
            with qtbot.waitSignal(pane.full_output_requested) as asked:
                pane.info.anchorClicked.emit(QUrl(f"full-output:{outcome.call_id}"))
            assert asked.args == [outcome.call_id]
            pane.show_full_output(outcome.call_id, await console.full_output(outcome.call_id))
            assert pane.full_output_dialog is not None
            shown = pane.full_output_dialog.findChild(QPlainTextEdit)
            assert shown is not None and "\n50000\n" in shown.toPlainText()
            pane.full_output_dialog.close()

    loop.run_until_complete(scenario())


def test_a_short_output_has_no_such_link(qtbot: Any, loop: Any, workspace: Path) -> None:
    async def scenario() -> None:
        async with Console(workspace) as console:
            agent = await console.start_agent("agent", "scripted")
            outcome = await console.call(agent, "Bash", {"command": "ls"})
            pane = DetailsPane(console.timeline)
            qtbot.addWidget(pane)
            pane.show_key(f"r:{outcome.call_id}")
            assert "README.md" in pane.info.toPlainText()
            assert "whole output" not in pane.info.toHtml()

    loop.run_until_complete(scenario())
