"""Undo, redo and rewind as the window runs them (gui.window.undo.flow): previewed, asked where needed, run,
and reported in words."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QWidget

from core import CallRecord, Console, UndoReport
from gui.window.runtime.tasks import TaskSet
from gui.window.undo.dialog import UndoDialog
from gui.window.undo.flow import UndoFlow
from gui.window.workspace.window import MainWindow
from tests.conftest import wait_until
from tests.gui.window.workspace.test_window import in_window

LEFT = Qt.MouseButton.LeftButton


class _Window:
    """What the flow reports to: the status bar's messages, the undo reports, the rewinds' end, and the
    rewind question's answer (recorded: the real question has its own test)."""

    def __init__(self, qtbot: Any, console: Console, answer: bool = True) -> None:
        self.parent = QWidget()
        qtbot.addWidget(self.parent)
        self.parent.show()
        self.tasks = TaskSet()
        self.said: list[str] = []
        self.reports: list[UndoReport] = []
        self.asked: list[list[str]] = []
        self.rewound = 0
        self.answer = answer
        self.flow = UndoFlow(console, self.tasks, self.parent, report=self.reports.append,
                             say=lambda text, _ms: self.said.append(text), confirm_rewind=self._confirm,
                             rewound=self._on_rewound)

    async def _confirm(self, plan: list[CallRecord]) -> bool:
        self.asked.append([r.call_id for r in plan])
        return self.answer

    def _on_rewound(self) -> None:
        self.rewound += 1


def _run(qtbot: Any, loop: Any, workspace: Path, body: Callable[[Console, Any], Awaitable[None]],
         answer: bool = True) -> None:
    async def scenario() -> None:
        async with Console(workspace) as console:
            await console.add_rule("Write", "allow", "session")
            window = _Window(qtbot, console, answer)
            try:
                await body(console, window)
            finally:
                await window.tasks.aclose()

    loop.run_until_complete(scenario())


async def _write(console: Console, path: Path, *texts: str) -> list[str]:
    agent = await console.start_agent("agent", "scripted")
    return [(await console.call(agent, "Write", {"file_path": str(path), "content": text})).call_id
            for text in texts]


def test_undo_then_redo_report_what_they_did(qtbot: Any, loop: Any, workspace: Path) -> None:
    notes = workspace / "notes.txt"

    async def body(console: Console, window: _Window) -> None:
        [call] = await _write(console, notes, "mine\n")
        window.flow.undo(call)
        await wait_until(lambda: window.reports, what="the undo's report")
        assert window.reports[0].ok and not notes.exists()
        window.flow.redo(call)
        await wait_until(lambda: len(window.reports) == 2, what="the redo's report")
        assert window.reports[1].ok and window.reports[1].redo and notes.read_text() == "mine\n"

    _run(qtbot, loop, workspace, body)


def test_undo_of_a_call_that_changed_nothing_says_why(qtbot: Any, loop: Any, workspace: Path) -> None:
    async def body(console: Console, window: _Window) -> None:
        agent = await console.start_agent("reader", "scripted")
        read = await console.call(agent, "Read", {"file_path": str(workspace / "README.md")})
        window.flow.undo(read.call_id)
        await wait_until(lambda: window.said, what="the message")
        assert window.said[0].startswith("Nothing to undo: ") and window.reports == []

    _run(qtbot, loop, workspace, body)


def test_an_undo_over_a_later_edit_of_the_same_lines_waits_for_the_person_in_a_dialog(
        qtbot: Any, loop: Any, workspace: Path) -> None:
    notes = workspace / "notes.txt"

    async def body(console: Console, window: _Window) -> None:
        [call] = await _write(console, notes, "one\ntwo\nthree\n")
        notes.write_text("one\nTWO, by hand\nthree\n")  # the person's editor, over the agent's lines
        window.flow.undo(call)
        await wait_until(lambda: window.flow.dialog is not None and window.flow.dialog.isVisible(),
                         what="the undo dialog")
        dialog = window.flow.dialog
        assert isinstance(dialog, UndoDialog) and dialog.parent() is window.parent
        await console.start_agent("another", "scripted")  # the loop goes on: the dialog is opened, not exec'd
        assert notes.read_text() == "one\nTWO, by hand\nthree\n" and window.reports == []
        dialog.close()

    _run(qtbot, loop, workspace, body)


def test_a_rewind_with_nothing_after_the_call_says_so_without_asking(qtbot: Any, loop: Any, workspace: Path) -> None:
    async def body(console: Console, window: _Window) -> None:
        [only] = await _write(console, workspace / "notes.txt", "one\n")
        window.flow.rewind(only)
        await wait_until(lambda: window.said, what="the message")
        assert window.said == ["Nothing after this call changed files: there is nothing to rewind."]
        assert window.asked == [] and window.rewound == 0

    _run(qtbot, loop, workspace, body)


def test_a_rewind_declined_changes_nothing(qtbot: Any, loop: Any, workspace: Path) -> None:
    notes = workspace / "notes.txt"

    async def body(console: Console, window: _Window) -> None:
        ids = await _write(console, notes, "one\n", "two\n")
        window.flow.rewind(ids[0])
        await wait_until(lambda: window.asked and not window.tasks, what="the rewind to end after the answer")
        assert window.asked == [[ids[1]]] and notes.read_text() == "two\n"
        assert window.said == [] and window.rewound == 0

    _run(qtbot, loop, workspace, body, answer=False)


def test_a_rewind_stops_at_a_file_changed_since_and_says_where(qtbot: Any, loop: Any, workspace: Path) -> None:
    notes, other = workspace / "notes.txt", workspace / "other.txt"

    async def body(console: Console, window: _Window) -> None:
        first, second = await _write(console, notes, "one\n", "two\n")
        [third] = await _write(console, other, "x\ny\nz\n")
        other.write_text("x\nY, by hand\nz\n")
        window.flow.rewind(first)
        await wait_until(lambda: window.said, what="the rewind's report")
        assert window.asked == [[third, second]]
        assert window.said[0].startswith(f"Rewound: undid 0 of 2 calls. Stopped at {third}: ")
        assert notes.read_text() == "two\n" and other.read_text() == "x\nY, by hand\nz\n"  # nothing overwritten
        assert window.rewound == 1

    _run(qtbot, loop, workspace, body)


def test_rewind_to_here_previews_then_undoes_every_later_call(qtbot: Any, loop: Any, workspace: Path) -> None:
    notes = workspace / "notes.txt"

    async def body(console: Console, window: MainWindow) -> None:
        await console.add_rule("Write", "allow", "session")
        agent = await console.start_agent("agent", "scripted")
        ids = [(await console.call(agent, "Write", {"file_path": str(notes), "content": text})).call_id
               for text in ("one\n", "two\n", "three\n")]
        previewed: list[list[str]] = []

        async def confirm(plan: list[Any]) -> bool:
            previewed.append([r.call_id for r in plan])
            return True

        window.confirm_rewind = confirm  # type: ignore[method-assign]
        window.rewind(ids[0])
        await wait_until(lambda: "Rewound" in window.statusBar().currentMessage(), what="the rewind")
        assert previewed == [[ids[2], ids[1]]]
        assert notes.read_text() == "one\n"
        assert "undid 2 of 2" in window.statusBar().currentMessage()

    in_window(qtbot, loop, workspace, body)
