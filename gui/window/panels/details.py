"""The details pane: everything about the selected call or agent, and its undo.

For a run: tool, status, who ran it, the approval decision, what it
changed (every file, shell side effects included, each with its own undo or
redo link, and the git references it moved), the arguments, the result or
error, and a diff of every file it changed, with Undo and Redo buttons.
The window decides what an undo needs (a merge, the person's choices).

The timeline keeps only excerpts of a call's arguments and output (its
memory must not follow their size), so the pane shows the excerpt at once
and, when something was cut, reads the whole call from the journal in a
task (`records`, e.g. `Console.call_record`, which reads on the journal's
thread): "loading…" meanwhile, then the full text; a result that arrives
for a call no longer selected is dropped, and a call gone from the journal
says so.

Signals:
    undo_requested(str, list): call id and the paths to undo ([]: every file).
    redo_requested(str, list): call id and the paths to put back ([]: everything undone).
    full_output_requested(str): call id whose whole journaled output the person wants to read.
"""

from __future__ import annotations

import asyncio
import html
import sqlite3
import urllib.parse
from collections.abc import Awaitable, Callable

import shiboken6
from PySide6.QtCore import Qt, QUrl, Signal
from PySide6.QtWidgets import (
    QDialog,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from core import (
    AgentKey,
    BatchKey,
    BelayError,
    CallRecord,
    FileDiff,
    MessageKey,
    NodeKey,
    RunKey,
    RunNode,
    RunStatus,
    Timeline,
    UndoPreview,
    UndoReport,
    parse_key,
)
from gui.window.kit import theme
from gui.window.kit.code_font import keep_code_font
from gui.window.kit.remembered import keep_splitter, window_settings
from gui.window.panels.details_text import (
    FullCall,
    describe_agent,
    describe_batch,
    describe_message,
    describe_run,
    full_call,
)
from gui.window.review.diff_view import DiffView
from gui.window.runtime.tasks import TaskSet
from gui.window.undo.dialog import undo_notes

RecordReader = Callable[[str], Awaitable[CallRecord | None]]
"""Reads one journaled call in full (None: the journal no longer has it)."""
UNDO_PREVIEW_DELAY_S = 0.2
"""A call shown this long has its undo previewed (it reads and merges its files, off the thread)."""


class DetailsPane(QWidget):
    """What the selected timeline row did, with its diffs, undo and redo."""

    undo_requested = Signal(str, list)
    redo_requested = Signal(str, list)
    full_output_requested = Signal(str)

    def __init__(self, timeline: Timeline, parent: QWidget | None = None, *, records: RecordReader | None = None,
                 tasks: TaskSet | None = None,
                 undo_preview: Callable[[str], Awaitable[UndoPreview]] | None = None) -> None:
        """`records` reads a whole call from the journal and `tasks` owns the reads; without them the pane
        shows the timeline's excerpts only.  `undo_preview` previews an undo, so the pane can say beforehand
        that undoing the selected call needs a merge."""
        super().__init__(parent)
        self._timeline = timeline
        self._key: NodeKey | None = None
        self._diff_of: str | None = None
        self._records = records
        self._tasks = tasks if tasks is not None else TaskSet()
        self._full: FullCall | None = None
        """The selected call as last read from the journal."""
        self._loading: str | None = None
        """The call being read now."""
        self.full_output_dialog: QDialog | None = None
        self.info = QTextBrowser()
        self.info.setOpenLinks(False)
        self.info.anchorClicked.connect(self._on_link)
        self.diff = DiffView()
        self.undo_button = QPushButton("Undo this call")
        self.undo_button.setObjectName("undoButton")
        self.undo_button.setToolTip("Restore every file this call changed (Ctrl+Z); later edits are merged or "
                                    "shown to you first")
        self.undo_button.clicked.connect(self._on_undo_button_clicked)
        self.redo_button = QPushButton("Redo")
        self.redo_button.setToolTip("Put back what undoing this call took away (Ctrl+Shift+Z)")
        self.redo_button.clicked.connect(self._on_redo_button_clicked)
        self._undo_preview = undo_preview
        self._undo_previewed: str | None = None
        """The call whose undo the note was last asked for (asked again when another is shown)."""
        self._undo_note_task: asyncio.Task[None] | None = None
        self.undo_note = QLabel(textFormat=Qt.TextFormat.PlainText, wordWrap=True)
        """Before an undo that needs a merge: which files changed since the call, and how many conflicts."""
        self.undo_note.setObjectName("undoNote")
        self.undo_note.hide()
        self.notice = QLabel()
        self.notice.setWordWrap(True)
        self.notice.setTextFormat(Qt.TextFormat.RichText)
        row = QHBoxLayout()
        row.addWidget(self.notice, 1)
        row.addWidget(self.redo_button)
        row.addWidget(self.undo_button)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.info)
        split.addWidget(self.diff)
        split.setSizes([220, 320])
        keep_splitter(split, "details/split", window_settings())
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(split, 1)
        layout.addWidget(self.undo_note)
        layout.addLayout(row)
        self.show_key(None)
        theme.follow(self, lambda: self.show_key(self._key))  # the call's text carries the theme's colours

    @property
    def key(self) -> NodeKey | None:
        return self._key

    def set_timeline(self, timeline: Timeline) -> None:
        self._timeline = timeline
        self.show_key(self._key if self._key and self._known(self._key) else None)

    def _known(self, key: NodeKey) -> bool:
        if isinstance(key, RunKey):
            return key.call_id in self._timeline.runs
        if isinstance(key, BatchKey):
            return key.batch_id in self._timeline.batches
        if isinstance(key, MessageKey):
            return key.message_id in self._timeline.messages
        return key.ident in self._timeline.agents

    def show_key(self, key: NodeKey | str | None) -> None:
        """Show the row `key` names (or a key's text, e.g. "r:<call id>"); None: nothing selected."""
        key = parse_key(key) if key is not None else None
        changed = key != self._key
        self._key = key
        if changed:
            self.notice.clear()
        run = self._timeline.runs.get(key.call_id) if isinstance(key, RunKey) else None
        if self._full is not None and (run is None or run.call_id != self._full.call_id):
            self._full = None  # a call's whole arguments are kept while it is selected, no longer
        if run is not None and self._wants_record(run):
            self._loading = run.call_id
            self._tasks.spawn(self._read(run.call_id), f"details of {run.call_id}")
        if key is None or (isinstance(key, RunKey) and run is None):
            self.info.setHtml(f"<p style='color:{theme.colour('muted')}'>Select a call in the timeline to see its "
                              "arguments, result and the files it changed.</p>")
        elif isinstance(key, BatchKey):
            self.info.setHtml(describe_batch(key, self._timeline))
        elif isinstance(key, AgentKey):
            self.info.setHtml(describe_agent(key, self._timeline))
        elif isinstance(key, MessageKey):
            self.info.setHtml(describe_message(key, self._timeline))
        elif run is not None:
            self.info.setHtml(describe_run(run, self._timeline, self._full, self._loading == run.call_id))
        self.undo_button.setEnabled(undoable(run))
        if changed or (run is not None and undoable(run) and self._undo_previewed != run.call_id):
            self._preview_undo(run)
        self.redo_button.setVisible(bool(run and (run.undone_paths or run.git_undone)))
        if changed:
            self._diff_of = None
            self.diff.set_diffs([])

    @property
    def loading(self) -> bool:
        """Whether the selected call is being read from the journal."""
        return self._loading is not None and self._key == RunKey(self._loading)

    def _wants_record(self, run: RunNode) -> bool:
        """Whether to read the call from the journal: the timeline cut something, and the pane has not read
        it yet (or read it before its result came)."""
        if self._records is None or not (run.args_cut or run.output_cut) or self._loading == run.call_id:
            return False
        full = self._full
        if full is None or full.call_id != run.call_id:
            return True
        return run.status.final and not full.final

    async def _read(self, call_id: str) -> None:
        assert self._records is not None
        try:
            record = await self._records(call_id)
            full = await asyncio.to_thread(full_call, call_id, record)
        except (BelayError, RuntimeError, OSError, sqlite3.Error) as error:  # a closed console, a broken journal
            full = FullCall(call_id, None, problem=f"Could not read the whole call from the journal: {error}")
        finally:
            if self._loading == call_id:
                self._loading = None
        # Another row chosen meanwhile (or the pane gone with its window): the result is dropped.
        if shiboken6.isValid(self) and self._key == RunKey(call_id):
            self._full = full
            self.show_key(self._key)

    def show_diffs(self, call_id: str, diffs: list[FileDiff]) -> None:
        if self._key == RunKey(call_id):
            self._diff_of = call_id
            self.diff.set_diffs(diffs)

    def shows_diff_of(self, call_id: str) -> bool:
        """Whether the diff of `call_id` is fully on screen."""
        return self._diff_of == call_id and self.diff.is_rendered()

    def show_undo_report(self, report: UndoReport) -> None:
        if self._key != RunKey(report.call_id):
            return
        self.undo_note.hide()  # said before the undo; the report now says what happened
        if report.ok:
            self.notice.setText(f"<span style='color:{theme.colour('success')}'>{html.escape(report.message)}</span>")
        else:
            verb = "redone" if report.redo else "undone"
            danger = theme.colour("danger")
            self.notice.setText(f"<span style='color:{danger}'>Not {verb}: {html.escape(report.message)}</span>")

    def _on_link(self, url: QUrl) -> None:
        kind, _, value = url.toString().partition(":")
        value = urllib.parse.unquote(value)
        call_id = self._key.call_id if isinstance(self._key, RunKey) else ""
        if kind == "full-output":
            self.full_output_requested.emit(value)
        elif kind == "full-args" and self._full is not None and self._full.call_id == value:
            self._show_text(f"Arguments of {value}", self._full.args_text or "")
        elif kind == "undo-file" and call_id:
            self.undo_requested.emit(call_id, [value])
        elif kind == "redo-file" and call_id:
            self.redo_requested.emit(call_id, [value])

    def show_full_output(self, call_id: str, text: str | None) -> None:
        """The whole journaled output in its own window: a plain-text view copes with megabytes."""
        self._show_text(f"Full output of {call_id}",
                        text if text is not None else "The journal holds no more than the result shown.")

    def _show_text(self, title: str, text: str) -> None:
        if self.full_output_dialog is None:
            self.full_output_dialog = QDialog(self)
            self.full_output_dialog.resize(900, 600)
            self._full_output_view = QPlainTextEdit()
            self._full_output_view.setReadOnly(True)
            keep_code_font(self._full_output_view)
            self._full_output_view.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
            QVBoxLayout(self.full_output_dialog).addWidget(self._full_output_view)
        self.full_output_dialog.setWindowTitle(title)
        self._full_output_view.setPlainText(text)
        self.full_output_dialog.show()

    def _preview_undo(self, run: RunNode | None) -> None:
        """Say before the undo whether it needs a merge (read off the thread; a stale answer is dropped)."""
        self.undo_note.clear()
        self.undo_note.hide()
        self._undo_previewed = None
        if self._undo_note_task is not None:
            self._undo_note_task.cancel()  # another row shown: its preview is no longer wanted
            self._undo_note_task = None
        if self._undo_preview is not None and run is not None and undoable(run):
            self._undo_previewed = run.call_id
            self._undo_note_task = self._tasks.spawn(self._show_undo_notes(run.call_id),
                                                     f"undo preview of {run.call_id}")

    async def _show_undo_notes(self, call_id: str) -> None:
        assert self._undo_preview is not None
        await asyncio.sleep(UNDO_PREVIEW_DELAY_S)  # rows run through with the keyboard are not previewed
        try:
            preview = await self._undo_preview(call_id)
        except (BelayError, RuntimeError, OSError) as error:  # nothing to undo, a closed console, a damaged blob
            notes = [f"Undo cannot be previewed: {error}"] if isinstance(error, OSError) else []
        else:
            notes = undo_notes(preview)
        if shiboken6.isValid(self) and self._key == RunKey(call_id):
            self.undo_note.setText("\n".join(notes))
            self.undo_note.setVisible(bool(notes))

    def _on_undo_button_clicked(self) -> None:
        if isinstance(self._key, RunKey):
            self.undo_requested.emit(self._key.call_id, [])

    def _on_redo_button_clicked(self) -> None:
        if isinstance(self._key, RunKey):
            self.redo_requested.emit(self._key.call_id, [])


def undoable(run: RunNode | None) -> bool:
    """Whether the run has a stored change still in force (so "Undo" has something to do)."""
    if not run or not (run.changes or run.git_changes) or not run.status.final or run.status == RunStatus.DENIED:
        return False
    files = any(c.stored and c.path not in run.undone_paths for c in run.changes)
    return files or (bool(run.git_changes) and not run.git_undone)
