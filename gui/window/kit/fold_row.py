"""A row of controls that folds onto two lines when the width is short of what one line needs.

A toolbar above a list or a diff sets the narrowest its column can be: one line of filter boxes, or of
review buttons, made a 1024-pixel window's workspace page 950 pixels at least, and the hub's sidebar
beside it was squeezed to 90.  `FoldingRow` keeps the controls on one line while they fit there at their
minimum widths, and otherwise puts the ones after `fold_at` on a second line; its own narrowest is then
the wider of the two lines.  The arrangement depends on the width alone, so settling the height it
changes never changes it back.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QEvent, QObject, QSize, Qt
from PySide6.QtGui import QPainter, QPaintEvent, QResizeEvent
from PySide6.QtWidgets import QHBoxLayout, QLabel, QLayout, QSizePolicy, QVBoxLayout, QWidget

Item = tuple[QWidget | None, int]
"""A control and its stretch factor; (None, n) is an empty stretch."""
SPACING = 4


class FoldingRow(QWidget):
    """Controls on one line where they fit, on two (split before item `fold_at`) where they do not."""

    def __init__(self, items: Sequence[Item], fold_at: int, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._items = list(items)
        self._fold_at = fold_at
        for widget, _ in self._items:
            if widget is not None:
                widget.setParent(self)
                widget.installEventFilter(self)  # shown or hidden, a control changes what one line needs
        self._lines = QVBoxLayout(self)
        self._lines.setContentsMargins(0, 0, 0, 0)
        self._lines.setSpacing(2)
        self._lines.setSizeConstraint(QLayout.SizeConstraint.SetNoConstraint)  # its narrowest is ours, not one line's
        self._folded: bool | None = None
        self._arrange(False)

    def __repr__(self) -> str:
        return f"<FoldingRow {'two lines' if self.folded else 'one line'} width={self.width()}>"

    @property
    def folded(self) -> bool:
        """Whether the controls are on two lines now."""
        return bool(self._folded)

    def one_line_width(self) -> int:
        """The narrowest one line of every control shown can be (a note that gives way, size policy Ignored,
        counts its minimum width: it is shortened, see `Note`)."""
        return self._needed(self._items)

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt override
        """As narrow as the wider of the two lines; as tall as the arrangement shown."""
        shown = super().minimumSizeHint()
        margins = self.contentsMargins()
        two = max(self._needed(self._items[:self._fold_at]), self._needed(self._items[self._fold_at:]))
        return QSize(two + margins.left() + margins.right(), shown.height())

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        self._fit(event.size().width())

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        if event.type() in (QEvent.Type.ShowToParent, QEvent.Type.HideToParent):
            self._fit(self.width())
        return False

    def _fit(self, width: int) -> None:
        margins = self.contentsMargins()
        self._arrange(width - margins.left() - margins.right() < self.one_line_width())

    def _needed(self, items: Sequence[Item]) -> int:
        """The narrowest `items` can be on one line; a control that gives way counts its minimum width only."""
        widgets = [w for w, _ in items if w is not None and not w.isHidden()]
        widths = [w.minimumWidth() if w.sizePolicy().horizontalPolicy() == QSizePolicy.Policy.Ignored
                  else max(w.minimumSizeHint().width(), w.minimumWidth()) for w in widgets]
        return sum(widths) + SPACING * max(len(widgets) - 1, 0)

    def _arrange(self, folded: bool) -> None:
        if folded == self._folded:
            return
        self._folded = folded
        while self._lines.count():
            taken = self._lines.takeAt(0)
            line = taken.layout() if taken is not None else None
            if line is not None:
                while line.count():
                    line.takeAt(0)  # the widgets stay (children of this row); only the line goes
                line.deleteLater()
        groups = [self._items[:self._fold_at], self._items[self._fold_at:]] if folded else [self._items]
        for group in groups:
            line = QHBoxLayout()
            line.setContentsMargins(0, 0, 0, 0)
            line.setSpacing(SPACING)
            for widget, stretch in group:
                if widget is None:
                    line.addStretch(stretch)
                else:
                    line.addWidget(widget, stretch)
            if folded and not any(stretch for _, stretch in group):
                line.addStretch(1)  # a short line keeps its controls at the left
            self._lines.addLayout(line)
        self.updateGeometry()


class Note(QLabel):
    """A remark in a row that gives way: it takes the room left (size policy Ignored) and, short of room for its
    whole text, ends in "…" (the whole is its tooltip) rather than being cut mid-word at either edge."""

    def __init__(self, text: str, parent: QWidget | None = None) -> None:
        super().__init__(text, parent)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.setToolTip(text)

    def shown_text(self) -> str:
        """The text as drawn at the note's width."""
        return self.fontMetrics().elidedText(self.text(), Qt.TextElideMode.ElideRight, self.contentsRect().width())

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 - Qt override
        painter = QPainter(self)
        painter.setPen(self.palette().color(self.foregroundRole()))
        painter.drawText(self.contentsRect(), int(self.alignment()), self.shown_text())
        painter.end()
