"""Editing a pending write before approving it.

The dialog shows the content the call would leave in the file; what the
person saves is what gets written (the agent is told it was edited).  It is
opened with `open()`, never a blocking `exec()`.

Signals:
    approved_with_edits(str, dict): call id and {relative path: new content}.
"""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import QComboBox, QDialog, QDialogButtonBox, QLabel, QPlainTextEdit, QVBoxLayout, QWidget

from core import ApprovalRequested


class EditDialog(QDialog):
    """Edit the proposed content of each file of one pending call."""

    approved_with_edits = Signal(str, dict)

    def __init__(self, request: ApprovalRequested, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"Edit before approving · {request.tool} {request.summary}")
        self.resize(820, 620)
        self._request = request
        self._texts = {p.path: p.content for p in request.proposed if p.content is not None}
        self.files = QComboBox()
        self.files.addItems(list(self._texts))
        self.files.currentTextChanged.connect(self._show)
        self.editor = QPlainTextEdit()
        self.editor.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.editor.textChanged.connect(self._keep)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.ok_button = buttons.addButton("Approve with these edits", QDialogButtonBox.ButtonRole.AcceptRole)
        buttons.accepted.connect(self._accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel("The file will be written exactly as shown here."))
        layout.addWidget(self.files)
        layout.addWidget(self.editor, 1)
        layout.addWidget(buttons)
        self._current = ""
        self._show(self.files.currentText())

    def _show(self, path: str) -> None:
        self._current = path
        self.editor.blockSignals(True)
        self.editor.setPlainText(self._texts.get(path) or "")
        self.editor.blockSignals(False)

    def _keep(self) -> None:
        if self._current:
            self._texts[self._current] = self.editor.toPlainText()

    def _accept(self) -> None:
        self.approved_with_edits.emit(self._request.call_id, {p: t for p, t in self._texts.items() if t is not None})
        self.accept()
