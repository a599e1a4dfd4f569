"""The rewind question (gui.window.undo.rewind): the calls it undoes, newest first, and their diffs, in a dialog
that waits without blocking the loop."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QWidget

from core import Console
from gui.window.undo.rewind import RewindDialog, ask_rewind
from gui.window.workspace.window import MainWindow
from tests.conftest import wait_until
from tests.gui.window.workspace.test_window import in_window

LEFT = Qt.MouseButton.LeftButton


async def _writes(console: Console, *writes: tuple[Path, str]) -> list[str]:
    await console.add_rule("Write", "allow", "session")
    agent = await console.start_agent("agent", "scripted")
    return [(await console.call(agent, "Write", {"file_path": str(path), "content": text})).call_id
            for path, text in writes]


def _dialog(parent: QWidget) -> RewindDialog | None:
    found = parent.findChild(RewindDialog)
    return found if found is not None and found.isVisible() else None


def test_the_rewind_question_lists_the_calls_newest_first_and_shows_their_diffs(
        qtbot: Any, loop: Any, workspace: Path) -> None:
    notes, other = workspace / "notes.txt", workspace / "b.txt"

    async def scenario() -> None:
        async with Console(workspace) as console:
            parent = QWidget()
            qtbot.addWidget(parent)
            parent.show()
            first, *_ = await _writes(console, (notes, "one\n"), (notes, "two\n"), (other, "bee\n"))
            plan = await console.rewind_plan(first)
            asked = asyncio.ensure_future(ask_rewind(plan, console.diffs_for, parent))
            await wait_until(lambda: _dialog(parent) is not None, what="the question")
            dialog = _dialog(parent)
            assert dialog is not None
            assert dialog.heading.text().startswith("Undo 2 later calls, newest first, restoring 2 files?")
            rows = [dialog.calls.item(n).text() for n in range(dialog.calls.count())]
            assert rows == ["All 2 calls: every change the rewind takes back", "Write · b.txt (1 file)",
                            "Write · notes.txt (1 file)"]
            await wait_until(lambda: "+ bee" in dialog.diff.plain_text(), what="the combined diff")
            shown = dialog.diff.plain_text()
            assert "- one" in shown and "+ two" in shown  # both calls' changes, one view
            assert shown.index("b.txt") < shown.index("notes.txt")  # newest first, as they are undone
            assert "by Write · b.txt" in shown  # each file's diff names its call
            dialog.calls.setCurrentRow(2)
            await wait_until(lambda: "+ bee" not in dialog.diff.plain_text(), what="one call's diff")
            assert "+ two" in dialog.diff.plain_text()
            assert dialog.cancel_button.isDefault() and dialog.rewind_button.isVisible()
            qtbot.mouseClick(dialog.cancel_button, LEFT)
            assert await asked is False

    loop.run_until_complete(scenario())


def test_the_rewind_question_waits_without_blocking_and_cancel_keeps_everything(
        qtbot: Any, loop: Any, workspace: Path) -> None:
    notes = workspace / "notes.txt"

    async def body(console: Console, window: MainWindow) -> None:
        ids = await _writes(console, (notes, "one\n"), (notes, "two\n"))
        agent = await console.start_agent("reader", "scripted")
        for press, expected in (("cancel_button", "two\n"), ("rewind_button", "one\n")):
            window.rewind(ids[0])
            await wait_until(lambda: _dialog(window) is not None, what="the question")
            dialog = _dialog(window)
            assert dialog is not None and "Undo 1 later call" in dialog.heading.text()
            await console.call(agent, "Read", {"file_path": str(notes)})  # the loop keeps serving calls meanwhile
            qtbot.mouseClick(getattr(dialog, press), LEFT)
            await wait_until(lambda: _dialog(window) is None, what="the question to go")
            await wait_until(lambda: notes.read_text() == expected, what="the answer's effect")
        await wait_until(lambda: "undid 1 of 1" in window.statusBar().currentMessage(), what="the rewind's report")

    in_window(qtbot, loop, workspace, body)
