"""A plain-text editor with line numbers in a gutter and whole lines marked in colour.

Used on both sides of "Edit & approve" (`gui.window.review.edit_dialog`): the marks
are the diff's removed lines on the left and added lines on the right.
Marks are extra selections, so the editor's own undo, selection and cursor
are untouched by them.  This is Qt's "code editor" example, kept small.
"""

from __future__ import annotations

from collections.abc import Mapping

from PySide6.QtCore import QRect, QSize, Qt
from PySide6.QtGui import QColor, QPainter, QPaintEvent, QResizeEvent, QTextCursor, QTextFormat
from PySide6.QtWidgets import QPlainTextEdit, QTextEdit, QWidget

from gui.window.kit.code_font import keep_code_font


class _Gutter(QWidget):
    def __init__(self, editor: CodeEditor) -> None:
        super().__init__(editor)
        self._editor = editor

    def sizeHint(self) -> QSize:  # noqa: N802  (Qt override)
        return QSize(self._editor.gutter_width(), 0)

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802  (Qt override)
        self._editor.paint_gutter(event)


class CodeEditor(QPlainTextEdit):
    """Monospaced, unwrapped, numbered; `set_marks` colours whole lines (1-based numbers)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        keep_code_font(self)
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self._gutter = _Gutter(self)
        self.blockCountChanged.connect(self._update_margin)
        self.updateRequest.connect(self._on_update_request)
        self._update_margin()

    def __repr__(self) -> str:
        return f"<CodeEditor lines={self.blockCount()} marks={len(self.extraSelections())}>"

    def gutter_width(self) -> int:
        digits = len(str(max(self.blockCount(), 1)))
        return 8 + self.fontMetrics().horizontalAdvance("9") * (digits + 1)

    def set_marks(self, marks: Mapping[int, str]) -> None:
        """Colour these lines (number: "#rrggbb"), replacing the previous marks."""
        selections = []
        document = self.document()
        for number, color in sorted(marks.items()):
            block = document.findBlockByNumber(number - 1)
            if not block.isValid():
                continue
            selection = QTextEdit.ExtraSelection()
            selection.format.setBackground(QColor(color))
            selection.format.setProperty(QTextFormat.Property.FullWidthSelection, True)
            selection.cursor = QTextCursor(block)
            selections.append(selection)
        self.setExtraSelections(selections)

    def go_to_line(self, number: int) -> None:
        """Put line `number` (1-based) near the top."""
        block = self.document().findBlockByNumber(max(number - 1, 0))
        self.verticalScrollBar().setValue(max(block.firstLineNumber() - 3, 0))

    def first_visible_line(self) -> int:
        return self.firstVisibleBlock().blockNumber() + 1

    # -- gutter -----------------------------------------------------------------

    def _update_margin(self) -> None:
        self.setViewportMargins(self.gutter_width(), 0, 0, 0)

    def _on_update_request(self, rect: QRect, dy: int) -> None:
        if dy:
            self._gutter.scroll(0, dy)
        else:
            self._gutter.update(0, rect.y(), self._gutter.width(), rect.height())

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802  (Qt override)
        super().resizeEvent(event)
        contents = self.contentsRect()
        self._gutter.setGeometry(QRect(contents.left(), contents.top(), self.gutter_width(), contents.height()))

    def paint_gutter(self, event: QPaintEvent) -> None:
        painter = QPainter(self._gutter)
        try:
            painter.fillRect(event.rect(), self.palette().alternateBase())
            painter.setPen(self.palette().placeholderText().color())
            block = self.firstVisibleBlock()
            top = round(self.blockBoundingGeometry(block).translated(self.contentOffset()).top())
            height = self.fontMetrics().height()
            while block.isValid() and top <= event.rect().bottom():
                if block.isVisible():
                    painter.drawText(0, top, self._gutter.width() - 4, height, Qt.AlignmentFlag.AlignRight,
                                     str(block.blockNumber() + 1))
                top += round(self.blockBoundingRect(block).height())
                block = block.next()
        finally:
            painter.end()
