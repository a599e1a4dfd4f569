"""The timeline's text cells, painted from the model's prepared rows: one Python call per cell.

Qt's own delegate asks the model seven roles of each cell it paints (font,
alignment, colour, check state, icon, text, background), each a call from
C++ into Python, then lays the text out afresh.  At 100,000 rows a flood
repaints the timeline eight times a second; those calls were a third of each
repaint.  `TextCells` asks the model once per cell (`painted_row`),
draws the item's panel (selection, hover) with the widget's style, and draws
the text from a small cache of laid-out, elided text (`QStaticText`): a row
that does not change is not shaped again.

The model's `data()` still answers the roles it has (text, colour, font,
tooltips), for accessibility and anything else that reads the cells.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import Protocol

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QPointF, QRect, Qt
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QPainter, QPalette, QStaticText
from PySide6.QtWidgets import QStyle, QStyledItemDelegate, QStyleOptionViewItem, QWidget

from core import NodeKey
from gui.window.kit import theme
from gui.window.timeline.item_paint import ACTIVE, ENABLED, SELECTED, paint_focus, paint_panel, row_state
from gui.window.timeline.model import STATUS_COLUMN, Painted, TimelineModel

Branches = Callable[[QPainter, QRect, NodeKey | None, int], int]


class PaintedRows(Protocol):
    """A model of the timeline's rows that says what each shows (`TimelineModel`, `FlatTimeline`)."""

    def painted_row(self, index: QModelIndex | QPersistentModelIndex) -> Painted | None: ...

    def key_of(self, index: QModelIndex | QPersistentModelIndex) -> NodeKey | None: ...


KEPT = 1_500
"""Laid-out texts kept, the least recently drawn dropped first: more than the text cells of a tall screen
(some 100 rows of five), or a repaint would find none of its own."""


class TextCells(QStyledItemDelegate):
    """Paints the text columns of the timeline (the Gantt column has its own delegate)."""

    def __init__(self, view: QWidget, model: PaintedRows, branches: Branches | None = None) -> None:
        super().__init__(view)
        self._view = view
        self._model = model
        self._branches = branches
        """Draws the tree's indentation and arrow in a cell of the first column, and says how wide it is: for a
        view that is not a tree view (`gui.window.timeline.view`)."""
        self._texts: OrderedDict[tuple[str, int, bool], tuple[QStaticText, float]] = OrderedDict()
        """(text, room in pixels, bold) -> the elided text laid out, and its height; for `_font` only."""
        self._font = QFont()
        self._bold = QFont()
        self._margin = -1
        self._colours = theme.PaletteColours()

    def paint(self, painter: QPainter, option: QStyleOptionViewItem,
              index: QModelIndex | QPersistentModelIndex) -> None:
        row = self._model.painted_row(index)
        if row is None:
            super().paint(painter, option, index)
            return
        texts, colour_role, bold, _, depth = row
        column = index.column()
        text, colour_role = texts[column], colour_role if column == STATUS_COLUMN else None
        state = row_state(option, index.row())
        paint_panel(painter, option, state)
        palette, rect = option.palette, option.rect
        if column == 0 and self._branches is not None:
            rect = rect.adjusted(self._branches(painter, rect, self._model.key_of(index), depth), 0, 0, 0)
        self.draw(painter, rect, text, self.colour(palette, state, colour_role), bold,
                  option.font)
        paint_focus(painter, option, state)

    def draw(self, painter: QPainter, rect: QRect, text: str, colour: QColor, bold: bool, font: QFont) -> None:
        """`text` in the cell `rect`, cut with "…" to fit, in `colour`, bold or in the view's `font`: what `paint`
        draws over the cell's panel."""
        self.use(font)
        painter.save()
        painter.setPen(colour)
        painter.setFont(self._bold if bold else self._font)
        self.put(painter, rect.left(), rect.top(), rect.width(), rect.height(), text, bold)
        painter.restore()

    def use(self, font: QFont) -> QFont:
        """Lay texts out in the view's `font` (what was laid out in another goes); its bold cut is returned."""
        if font != self._font or self._margin < 0:  # the first cell, or the view's font changed
            self._font, self._bold = QFont(font), TimelineModel.bold_font(font)
            self._margin = self._view.style().pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin, None,
                                                          self._view) + 1
            self._texts.clear()
        return self._bold

    def put(self, painter: QPainter, left: int, top: int, width: int, height: int, text: str, bold: bool) -> None:
        """`text` in a cell, cut to fit, with the pen and font the painter has (the font `use`d, or its bold cut):
        for a view that paints a whole row in one call (`gui.window.timeline.view`)."""
        room = width - 2 * self._margin
        if text and room > 0:
            laid, laid_height = self._laid_out(text, room, bold)
            painter.drawStaticText(QPointF(left + self._margin, top + (height - laid_height) / 2), laid)

    def colour(self, palette: QPalette, state: int, colour_role: str | None) -> QColor:
        """The text's colour in a cell in `state` (`QStyle.StateFlag`s as an int): its theme role's unless
        selected, else the palette's text colour for the state."""
        if colour_role is not None and not state & SELECTED:
            return self._colours.get(palette, colour_role)
        group = (QPalette.ColorGroup.Disabled if not state & ENABLED else
                 QPalette.ColorGroup.Normal if state & ACTIVE else QPalette.ColorGroup.Inactive)
        role = QPalette.ColorRole.HighlightedText if state & SELECTED else QPalette.ColorRole.Text
        return palette.color(group, role)

    def _laid_out(self, text: str, room: int, bold: bool) -> tuple[QStaticText, float]:
        key = (text, room, bold)
        found = self._texts.get(key)
        if found is not None:
            self._texts.move_to_end(key)
            return found
        font = self._bold if bold else self._font
        metrics = QFontMetricsF(font)
        laid = QStaticText(metrics.elidedText(text, Qt.TextElideMode.ElideRight, room))
        laid.setTextFormat(Qt.TextFormat.PlainText)
        laid.prepare(font=font)
        found = self._texts[key] = (laid, metrics.height())
        if len(self._texts) > KEPT:
            self._texts.popitem(last=False)
        return found

    def shown(self) -> list[tuple[str, bool]]:
        """The texts drawn lately as they were laid out (cut with "…" where a column is too narrow), and
        whether each was bold."""
        return [(laid.text(), bold) for (_, _, bold), (laid, _) in self._texts.items()]

    def __repr__(self) -> str:
        return f"<TextCells kept={len(self._texts)}>"
