"""Editing a pending write before approving it, side by side with the file as it is.

The left side is the file as the agent found it (read-only), the right side
the content the call would leave, which the person edits; what the right
side holds when they approve is what gets written (the agent is told it was
edited); changes already rejected in the review are taken out of it first.
Both sides are numbered and the diff between them is marked
(removed lines on the left, added ones on the right) and recomputed, in a
worker thread, a moment after each pause in typing; "change n of m" steps
through it, and the left side follows the right one's scrolling.  The file
as it is comes from the approval's diff taken back from the proposed
content (`core.revert_hunks`), so nothing is read from disk here.  It is
opened with `open()`, never a blocking `exec()`.

Signals:
    approved_with_edits(str, dict): call id and {relative path: new content}.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Collection, Mapping

import shiboken6
from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QSplitter,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from core import ApprovalRequested, FileDiff, Hunk, PartialError, ToolName, compute_diff, revert_hunks, spawn
from gui.window.kit import theme
from gui.window.review.code_editor import CodeEditor
from gui.window.review.highlight import DARK, LIGHT

log = logging.getLogger(__name__)

DIFF_DELAY_MS = 300
"""How long typing must pause before the diff is recomputed."""
NO_BEFORE = "(the file as it is cannot be shown: its diff was cut or is not text)"


class EditDialog(QDialog):
    """Edit the proposed content of each file of one pending call, against the file as it is."""

    approved_with_edits = Signal(str, dict)

    def __init__(self, request: ApprovalRequested, parent: QWidget | None = None, *,
                 rejected: Mapping[str, Collection[int]] | None = None) -> None:
        """`rejected`: hunks the person already rejected in the review, per path; the edit starts without them."""
        super().__init__(parent)
        self.setWindowTitle(f"Edit before approving · {request.tool} {request.summary}")
        self.resize(1100, 680)
        self._request = request
        self._texts = {p.path: _without(request, p.path, p.content, (rejected or {}).get(p.path, ()))
                       for p in request.proposed if p.content is not None}
        self._befores = {p.path: _before(request, p.path, p.content) for p in request.proposed if p.content is not None}
        self._hunks: tuple[Hunk, ...] = ()
        self._change = -1
        self._task: asyncio.Task[None] | None = None
        self._generation = 0
        self.files = QComboBox()
        self.files.addItems(list(self._texts))
        self.files.setVisible(len(self._texts) > 1)
        self.files.currentTextChanged.connect(self._show)
        self.before = CodeEditor()
        self.before.setReadOnly(True)
        self.editor = CodeEditor()
        self.editor.textChanged.connect(self._on_text_changed)
        self.editor.verticalScrollBar().valueChanged.connect(self._follow)
        self.position = QLabel()
        self.previous_button = _tool("◀", "Previous change", self.previous_change)
        self.next_button = _tool("▶", "Next change", self.next_change)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(DIFF_DELAY_MS)
        self._timer.timeout.connect(self._rediff)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.ok_button = buttons.addButton("Approve with these edits", QDialogButtonBox.ButtonRole.AcceptRole)
        buttons.accepted.connect(self._accept)
        buttons.rejected.connect(self.reject)
        self._build(buttons)
        self._current = ""
        self._loading = False
        self._show(self.files.currentText())

    def _build(self, buttons: QDialogButtonBox) -> None:
        nav = QHBoxLayout()
        nav.addWidget(QLabel("The file will be written exactly as the right side shows."))
        nav.addStretch(1)
        for widget in (self.previous_button, self.position, self.next_button):
            nav.addWidget(widget)
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(_titled("As it is", self.before))
        split.addWidget(_titled("As it will be written (edit here)", self.editor))
        layout = QVBoxLayout(self)
        layout.addWidget(self.files)
        layout.addLayout(nav)
        layout.addWidget(split, 1)
        layout.addWidget(buttons)

    def __repr__(self) -> str:
        return f"<EditDialog {self._request.call_id} file={self._current!r} changes={len(self._hunks)}>"

    # -- files -------------------------------------------------------------------

    def _show(self, path: str) -> None:
        self._current = path
        before = self._befores.get(path)
        self.before.setPlainText(before if before is not None else NO_BEFORE)
        self._loading = True  # not blockSignals: the editor's own signals size its line-number gutter
        self.editor.setPlainText(self._texts.get(path) or "")
        self._loading = False
        self._rediff()

    def _on_text_changed(self) -> None:
        if self._loading:
            return
        if self._current:
            self._texts[self._current] = self.editor.toPlainText()
        self._timer.start()

    # -- the diff ------------------------------------------------------------------

    def _rediff(self) -> None:
        """Diff the file as it is against the right side, off the GUI thread when a loop runs."""
        self._generation += 1
        path, before = self._current, self._befores.get(self._current)
        if before is None:
            self._set_diff(None)
            return
        after = self._texts.get(path) or ""
        try:
            asyncio.get_running_loop()
        except RuntimeError:  # no loop (a script, a test without qasync)
            self._set_diff(compute_diff(path, before.encode(), after.encode()))
            return
        if self._task is not None and not self._task.done():
            self._task.cancel()
        self._task = spawn(self._rediff_off_thread(path, before, after, self._generation), "EditDialog diff")

    async def _rediff_off_thread(self, path: str, before: str, after: str, generation: int) -> None:
        diff = await asyncio.to_thread(compute_diff, path, before.encode(), after.encode())
        if generation == self._generation and shiboken6.isValid(self):
            self._set_diff(diff)

    def _set_diff(self, diff: FileDiff | None) -> None:
        self._hunks = diff.hunks if diff is not None else ()
        palette = DARK if theme.current().dark else LIGHT
        removed = {line.old_no: palette.removed_bg for h in self._hunks for line in h.lines
                   if line.kind == "-" and line.old_no is not None}
        added = {line.new_no: palette.added_bg for h in self._hunks for line in h.lines
                 if line.kind == "+" and line.new_no is not None}
        self.before.set_marks(removed)
        self.editor.set_marks(added)
        self._change = min(self._change, len(self._hunks) - 1) if self._hunks else -1
        self._update_position(diff)

    def _update_position(self, diff: FileDiff | None) -> None:
        if diff is None:
            self.position.setText("")
        elif not self._hunks:
            self.position.setText("no changes against the file as it is")
        else:
            at = f"change {self._change + 1} of {len(self._hunks)}" if self._change >= 0 \
                else f"{len(self._hunks)} change{'s' if len(self._hunks) != 1 else ''}"
            self.position.setText(f"{at} · +{diff.added} −{diff.removed}")
        self.previous_button.setEnabled(bool(self._hunks))
        self.next_button.setEnabled(bool(self._hunks))

    def next_change(self) -> None:
        self._go(min(self._change + 1, len(self._hunks) - 1))

    def previous_change(self) -> None:
        self._go(max(self._change - 1, 0))

    def _go(self, n: int) -> None:
        if not 0 <= n < len(self._hunks):
            return
        self._change = n
        hunk = self._hunks[n]
        self.editor.go_to_line(hunk.new_start)
        self.before.go_to_line(hunk.old_start)
        text = self.position.text().split(" · ", 1)
        self.position.setText(f"change {n + 1} of {len(self._hunks)}" + (f" · {text[1]}" if len(text) > 1 else ""))

    def _follow(self) -> None:
        """Keep the left side on the lines the right side shows (shifted by the changes above them)."""
        line = self.editor.first_visible_line()
        self.before.go_to_line(old_line_for(line, self._hunks) + 3)

    def _accept(self) -> None:
        self.approved_with_edits.emit(self._request.call_id, {p: t for p, t in self._texts.items() if t is not None})
        self.accept()

    def done(self, result: int) -> None:
        if self._task is not None and not self._task.done():
            self._task.cancel()
        super().done(result)


def old_line_for(new_line: int, hunks: tuple[Hunk, ...]) -> int:
    """The old line shown beside new line `new_line`: shifted by what the hunks above it added or removed."""
    shift = 0
    for hunk in hunks:
        if hunk.new_start > new_line:
            break
        shift = (hunk.old_start + hunk.old_len) - (hunk.new_start + hunk.new_len)
    return max(new_line + shift, 1)


def _without(request: ApprovalRequested, path: str, after: str, rejected: Collection[int]) -> str:
    """The proposed content with the rejected hunks taken back (as it is when none are, or they cannot be)."""
    diff = next((d for d in request.diffs if d.path == path), None)
    if not rejected or diff is None or request.tool == ToolName.NOTEBOOK_EDIT:
        return after
    try:
        return revert_hunks(after.encode(), diff, rejected).decode()
    except PartialError:
        log.warning("could not take back the rejected hunks of %s; editing the whole proposal", path)
        return after


def _before(request: ApprovalRequested, path: str, after: str) -> str | None:
    """The file as the agent found it, from its diff taken back from the proposed content (None: unknown)."""
    diff = next((d for d in request.diffs if d.path == path), None)
    if diff is None or request.tool == ToolName.NOTEBOOK_EDIT:  # a notebook's diff is of a rendering, not of its bytes
        return None
    if diff.status == "create":
        return ""
    if diff.status == "unchanged":
        return after
    try:
        return revert_hunks(after.encode(), diff, range(len(diff.hunks))).decode()
    except PartialError:
        return None


def _titled(title: str, widget: QWidget) -> QWidget:
    box = QWidget()
    layout = QVBoxLayout(box)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.addWidget(QLabel(f"<b>{title}</b>"))
    layout.addWidget(widget, 1)
    return box


def _tool(text: str, tip: str, slot: object) -> QToolButton:
    button = QToolButton()
    button.setText(text)
    button.setToolTip(tip)
    button.clicked.connect(slot)
    return button
