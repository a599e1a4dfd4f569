"""The rewind question: the later calls a "Rewind to here" would undo, newest first, and what they changed.

A message box with the calls behind "Show Details" asked a person to undo work they could not see.  This
dialog lists every call the rewind undoes (tool, summary, files), and beside the list shows their diffs
together: the first row, "All N calls", shows every change the rewind takes back, file by file, each
diff naming the call that made it; choosing a call shows its own.  The diffs are read from the console
(`diffs_for`, off the loop thread) once the dialog is open, so it appears at once; Rewind is the
button that acts, Cancel (and Escape, and closing) keeps everything.  Opened with `open()`, never a
blocking `exec()`.

Signals:
    (QDialog's own) finished(int): Accepted when the person chose Rewind.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import shiboken6
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from core import CallRecord, FileDiff
from gui.window.review.diff_view import DiffView
from gui.window.runtime.tasks import TaskSet

DiffsOf = Callable[[str], Awaitable[list[FileDiff]]]
"""How the dialog reads one call's diffs (the console's `diffs_for`)."""
_CALL = Qt.ItemDataRole.UserRole


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'s' if n != 1 else ''}"


def call_line(record: CallRecord) -> str:
    """'Write · notes.txt (1 file)': one call of the plan as the list names it."""
    return f"{record.tool} · {record.summary} ({_plural(len(record.changes), 'file')})"


def question(plan: list[CallRecord]) -> str:
    files = {c.path for r in plan for c in r.changes}
    return (f"Undo {_plural(len(plan), 'later call')}, newest first, restoring {_plural(len(files), 'file')}? "
            "A file changed since is not overwritten: the rewind stops there.")


def labelled(record: CallRecord, diffs: list[FileDiff]) -> list[FileDiff]:
    """`diffs` with the call that made them named in each file's note."""
    by = f"by {record.tool} · {record.summary}"
    return [d.model_copy(update={"note": f"{by}; {d.note}" if d.note else by}) for d in diffs]


class RewindDialog(QDialog):
    """The calls a rewind would undo, and their diffs; Rewind or Cancel."""

    def __init__(self, plan: list[CallRecord], diffs_of: DiffsOf, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Rewind to here?")
        self._plan = plan
        self._diffs: dict[str, list[FileDiff]] = {}
        """Each call's diffs, labelled, as they arrive."""
        self.tasks = TaskSet(on_error=self._on_error)
        self.heading = QLabel(question(plan), wordWrap=True)
        self.calls = QListWidget()
        self.calls.setAccessibleName("The calls the rewind undoes, newest first")
        every = QListWidgetItem(f"All {_plural(len(plan), 'call')}: every change the rewind takes back")
        every.setData(_CALL, "")
        self.calls.addItem(every)
        for record in plan:
            item = QListWidgetItem(call_line(record))
            item.setData(_CALL, record.call_id)
            item.setToolTip("\n".join(c.path for c in record.changes))
            self.calls.addItem(item)
        self.diff = DiffView(placeholder="Reading the diffs…")
        self.diff.setAccessibleName("What the chosen calls changed (the rewind takes it back)")
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(self.calls)
        split.addWidget(self.diff)
        split.setStretchFactor(1, 1)
        split.setSizes([300, 700])
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.rewind_button = buttons.addButton("Rewind", QDialogButtonBox.ButtonRole.AcceptRole)
        self.rewind_button.setToolTip("Undo these calls, newest first")
        self.cancel_button = buttons.button(QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.heading)
        layout.addWidget(split, 1)
        layout.addWidget(buttons)
        self.cancel_button.setDefault(True)  # (in the dialog by now) Enter alone undoes nothing
        self._fit_screen()
        self.calls.currentItemChanged.connect(self._show_chosen)
        self.calls.setCurrentRow(0)
        self._reading = self.tasks.spawn(self._read(diffs_of), "read the rewind's diffs")

    def _fit_screen(self) -> None:
        screen = self.screen().availableGeometry()
        self.resize(min(1000, screen.width() - 40), min(680, screen.height() - 60))

    def __repr__(self) -> str:
        return f"<RewindDialog calls={len(self._plan)} diffs_read={len(self._diffs)}>"

    def chosen_diffs(self) -> list[FileDiff]:
        """The diffs shown for the chosen row (every call's, newest first, for the first)."""
        item = self.calls.currentItem()
        call_id = item.data(_CALL) if item is not None else ""
        ids = [call_id] if call_id else [r.call_id for r in self._plan]
        return [d for i in ids for d in self._diffs.get(i, [])]

    async def _read(self, diffs_of: DiffsOf) -> None:
        results = await asyncio.gather(*(diffs_of(r.call_id) for r in self._plan))
        self._diffs = {r.call_id: labelled(r, found) for r, found in zip(self._plan, results, strict=True)}
        self.diff.set_placeholder("These calls left no diff to show")
        self._show_chosen()

    def _show_chosen(self, *_: object) -> None:
        if self._diffs:
            self.diff.set_diffs(self.chosen_diffs())

    def _on_error(self, message: str) -> None:
        self.diff.set_placeholder(f"The diffs could not be read: {message}")
        self.diff.set_diffs([])

    def done(self, result: int) -> None:
        """Answered (or closed): the reading stops with the dialog."""
        self._reading.cancel()
        super().done(result)


async def ask_rewind(plan: list[CallRecord], diffs_of: DiffsOf, parent: QWidget) -> bool:
    """Show what a rewind would undo (the calls and their diffs) and ask; True for Rewind."""
    dialog = RewindDialog(plan, diffs_of, parent)
    dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    chosen: asyncio.Future[bool] = asyncio.get_running_loop().create_future()

    def finished(result: int) -> None:
        if not chosen.done():
            chosen.set_result(result == QDialog.DialogCode.Accepted)

    dialog.finished.connect(finished)
    dialog.open()
    try:
        return await chosen
    finally:
        if shiboken6.isValid(dialog) and dialog.isVisible():  # the asking task was cancelled (the window closes)
            dialog.reject()
