"""The timeline's text cells, painted from the model's prepared rows: one Python call per cell.

Qt's own delegate asks the model seven roles of each cell it paints (font,
alignment, colour, check state, icon, text, background), each a call from
C++ into Python, then lays the text out afresh.  At 100,000 rows a flood
repaints the timeline eight times a second; those calls were a third of each
repaint.  `TextCells` asks the model once per cell (`TimelineModel.painted`),
draws the item's panel (selection, hover) with the widget's style, and draws
the text from a small cache of laid-out, elided text (`QStaticText`): a row
that does not change is not shaped again.

The model's `data()` still answers the roles it has (text, colour, font,
tooltips), for accessibility and anything else that reads the cells.
"""

from __future__ import annotations

from collections import OrderedDict

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QPointF, Qt
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QPainter, QPalette, QStaticText
from PySide6.QtWidgets import QStyle, QStyledItemDelegate, QStyleOptionViewItem, QWidget

from gui.window import theme
from gui.window.item_paint import ACTIVE, ENABLED, SELECTED, paint_focus, paint_panel, style_of
from gui.window.timeline_model import TimelineModel

KEPT = 1_500
"""Laid-out texts kept, the least recently drawn dropped first: more than the text cells of a tall screen
(some 100 rows of five), or a repaint would find none of its own."""


class TextCells(QStyledItemDelegate):
    """Paints the text columns of the timeline (the Gantt column has its own delegate)."""

    def __init__(self, view: QWidget, model: TimelineModel) -> None:
        super().__init__(view)
        self._model = model
        self._texts: OrderedDict[tuple[str, int, bool], tuple[QStaticText, float]] = OrderedDict()
        """(text, room in pixels, bold) -> the elided text laid out, and its height; for `_font` only."""
        self._font = QFont()
        self._bold = QFont()
        self._margin = -1
        self._colours = theme.PaletteColours()

    def paint(self, painter: QPainter, option: QStyleOptionViewItem,
              index: QModelIndex | QPersistentModelIndex) -> None:
        cell = self._model.painted(index)
        if cell is None:
            super().paint(painter, option, index)
            return
        text, colour_role, bold = cell
        state = option.state.value  # type: ignore[attr-defined]
        paint_panel(painter, option, state)
        font = option.font  # type: ignore[attr-defined]
        if font != self._font or self._margin < 0:  # the first cell, or the view's font changed: what was laid out goes
            self._font, self._bold = QFont(font), TimelineModel.bold_font(font)
            self._margin = style_of(option).pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin, None,
                                                        option.widget) + 1  # type: ignore[attr-defined]
            self._texts.clear()
        rect = option.rect  # type: ignore[attr-defined]
        room = rect.width() - 2 * self._margin
        if text and room > 0:
            painter.save()
            painter.setPen(self._colour(option, state, colour_role))
            painter.setFont(self._bold if bold else self._font)
            laid, height = self._laid_out(text, room, bold)
            painter.drawStaticText(QPointF(rect.left() + self._margin, rect.top() + (rect.height() - height) / 2),
                                   laid)
            painter.restore()
        paint_focus(painter, option, state)

    def _colour(self, option: QStyleOptionViewItem, state: int, colour_role: str | None) -> QColor:
        if colour_role is not None and not state & SELECTED:
            return self._colours.get(option.palette, colour_role)  # type: ignore[attr-defined]
        group = (QPalette.ColorGroup.Disabled if not state & ENABLED else
                 QPalette.ColorGroup.Normal if state & ACTIVE else QPalette.ColorGroup.Inactive)
        role = QPalette.ColorRole.HighlightedText if state & SELECTED else QPalette.ColorRole.Text
        return option.palette.color(group, role)  # type: ignore[attr-defined]

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
