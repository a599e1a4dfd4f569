"""The details pane: what a person reads about one call."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QUrl
from PySide6.QtWidgets import QPlainTextEdit

from core import CallQueued, Console, Timeline
from gui.window.panels.details import DetailsPane
from gui.window.runtime.tasks import TaskSet
from tests.conftest import wait_until

MB = 1024 * 1024


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


# -- the timeline keeps excerpts; the pane reads the whole call from the journal when it is selected --------------

def _big_write(workspace: Path) -> dict[str, str]:
    """A 1 MB Write whose middle holds a line the timeline's excerpt cannot have."""
    return {"file_path": str(workspace / "big.txt"), "content": "a" * 10_000 + "NEEDLE IN THE MIDDLE" + "b" * MB}


def test_a_selected_call_shows_its_excerpt_at_once_then_its_whole_arguments(qtbot: Any, loop: Any,
                                                                            workspace: Path) -> None:
    async def scenario() -> None:
        async with Console(workspace) as console:
            console.set_mode("bypass")
            agent = await console.start_agent("agent", "scripted")
            outcome = await console.call(agent, "Write", _big_write(workspace))
            pane = DetailsPane(console.timeline, records=console.call_record, tasks=TaskSet())
            qtbot.addWidget(pane)
            pane.show_key(f"r:{outcome.call_id}")
            shown = pane.info.toPlainText()
            assert "Loading…" in shown and "more characters in the journal" in shown and "NEEDLE" not in shown
            await wait_until(lambda: "NEEDLE IN THE MIDDLE" in pane.info.toPlainText(), what="the whole arguments")
            assert "Loading…" not in pane.info.toPlainText() and not pane.loading
            pane.info.anchorClicked.emit(QUrl(f"full-args:{outcome.call_id}"))  # more than the pane shows
            assert pane.full_output_dialog is not None
            dialog_text = pane.full_output_dialog.findChild(QPlainTextEdit).toPlainText()
            assert dialog_text.count("b") >= MB and dialog_text.rstrip().endswith("}")
            pane.full_output_dialog.close()

    loop.run_until_complete(scenario())


def test_a_call_read_after_another_was_selected_is_not_shown(qtbot: Any, loop: Any, workspace: Path) -> None:
    async def scenario() -> None:
        async with Console(workspace) as console:
            console.set_mode("bypass")
            agent = await console.start_agent("agent", "scripted")
            big = await console.call(agent, "Write", _big_write(workspace))
            small = await console.call(agent, "Read", {"file_path": str(workspace / "README.md")})
            tasks = TaskSet()
            pane = DetailsPane(console.timeline, records=console.call_record, tasks=tasks)
            qtbot.addWidget(pane)
            pane.show_key(f"r:{big.call_id}")
            pane.show_key(f"r:{small.call_id}")  # before the first read is back
            await wait_until(lambda: len(tasks) == 0, what="the read to end")
            assert "NEEDLE" not in pane.info.toPlainText() and "README.md" in pane.info.toPlainText()
            assert "Loading…" not in pane.info.toPlainText()

    loop.run_until_complete(scenario())


def test_a_call_gone_from_the_journal_says_so(qtbot: Any, loop: Any, workspace: Path) -> None:
    async def scenario() -> None:
        async with Console(workspace) as console:
            timeline = Timeline()  # a call the journal never had (as after the journal was cleared)
            timeline.apply(CallQueued(call_id="c-gone", agent_id="a", tool="Write", summary="big.txt",
                                      args=_big_write(workspace)))
            pane = DetailsPane(timeline, records=console.call_record, tasks=TaskSet())
            qtbot.addWidget(pane)
            pane.show_key("r:c-gone")
            await wait_until(lambda: "no longer in the journal" in pane.info.toPlainText(), what="the note")
            assert "more characters in the journal" in pane.info.toPlainText()  # the excerpt stays
            assert not pane.loading

    loop.run_until_complete(scenario())


def test_a_call_that_cannot_be_read_says_why_instead_of_loading_for_ever(qtbot: Any, loop: Any,
                                                                         workspace: Path) -> None:
    async def scenario() -> None:
        async with Console(workspace) as console:
            console.set_mode("bypass")
            agent = await console.start_agent("agent", "scripted")
            outcome = await console.call(agent, "Write", _big_write(workspace))
        pane = DetailsPane(console.timeline, records=console.call_record, tasks=TaskSet())  # its journal closed
        qtbot.addWidget(pane)
        pane.show_key(f"r:{outcome.call_id}")
        await wait_until(lambda: "Could not read the whole call" in pane.info.toPlainText(), what="the note")
        assert "Loading…" not in pane.info.toPlainText() and not pane.loading

    loop.run_until_complete(scenario())
