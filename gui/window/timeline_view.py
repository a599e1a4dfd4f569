"""The timeline's tree view: a plain row is painted in one Python call, not one per cell.

A flood of calls repaints the visible rows several times a second.  Qt's
tree view paints a row cell by cell, calling the item delegate of each, and
each of those calls crosses from C++ into Python with a copy of the style
option: at some 50 rows of six cells that was most of a repaint (23 ms at
1400x860).  `TimelineView.drawRow` paints a plain row itself, in one call:
the alternate background and the branches as the tree view draws them (the
style's row panel, `drawBranches`), then each cell's text and the Gantt bar
through the same code the delegates use (`TextCells.draw`,
`GanttDelegate.draw`), so a row looks the same either way.

A row that is not plain (selected, hovered, or holding the current cell while
the view has the focus) is painted by the tree view as before, cell by
cell through the delegates: there are a few such rows on a screen, and
the style draws their panels and focus frames its own way.
"""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QRect
from PySide6.QtGui import QCursor, QPainter, QPaintEvent
from PySide6.QtWidgets import QAbstractItemView, QStyle, QStyleOptionViewItem, QTreeView, QWidget

from gui.window.gantt import GanttDelegate
from gui.window.timeline_cells import TextCells
from gui.window.timeline_model import COLUMNS, STATUS_COLUMN, TIMELINE_COLUMN, TimelineModel

INDENT = 14
"""Pixels per level: a sub-agent three levels down keeps room for its name."""
_ALTERNATE = QStyleOptionViewItem.ViewItemFeature.Alternate
_ROW_PANEL = QStyle.PrimitiveElement.PE_PanelItemViewRow


class TimelineView(QTreeView):
    """Agents, batches and calls as a tree; plain rows painted whole (see the module's docstring)."""

    def __init__(self, model: TimelineModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("timeline")
        self.setModel(model)
        self._model = model
        self.setUniformRowHeights(True)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)  # the model's cells are empty items
        self.setAlternatingRowColors(True)
        self.setIndentation(INDENT)
        self.cells = TextCells(self, model)
        self.setItemDelegate(self.cells)
        self.gantt = GanttDelegate(self)
        self.setItemDelegateForColumn(TIMELINE_COLUMN, self.gantt)
        self.whole = True
        """Paint plain rows whole; off, every row goes through the delegates as Qt's tree view paints it (the
        picture is the same: tests compare the two)."""
        self.whole_rows = 0
        """Rows painted in one call since the view was made (the others went through the delegates)."""
        self._hovered: tuple[int, int] | None = None
        self._current: tuple[int, int] | None = None
        self._selecting = False
        self._columns: list[tuple[int, int, int]] = []
        self._span = (0, 0)
        self._alternate = True
        self._offset = 0
        self._tree_column = 0
        self._indent = (INDENT, 1)

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802
        # Looked up once per repaint, not per row: what makes a row not plain (the row under the mouse, the current
        # row while the view has the focus, whether anything is selected) and where the columns are.
        viewport = self.viewport()
        hovered = self.indexAt(viewport.mapFromGlobal(QCursor.pos())) if viewport.underMouse() else QModelIndex()
        self._hovered = (hovered.internalId(), hovered.row()) if hovered.isValid() else None
        current = self.currentIndex()
        self._current = (current.internalId(), current.row()) if current.isValid() and self.hasFocus() else None
        selection = self.selectionModel()
        self._selecting = selection is not None and selection.hasSelection()
        header = self.header()
        self._columns = [(column, header.sectionViewportPosition(column), header.sectionSize(column))
                         for column in range(len(COLUMNS)) if not header.isSectionHidden(column)]
        left = header.sectionViewportPosition(header.logicalIndex(0))
        self._span = (left, header.length() - header.offset() - left)
        self._alternate = self.alternatingRowColors()
        self._offset = self.verticalOffset()
        self._tree_column = self.treePosition() if self.treePosition() >= 0 else header.logicalIndex(0)
        self._indent = (self.indentation(), int(self.rootIsDecorated()))
        super().paintEvent(event)

    def drawRow(self, painter: QPainter, option: QStyleOptionViewItem,  # noqa: N802
                index: QModelIndex | QPersistentModelIndex) -> None:
        row = (index.internalId(), index.row())
        shown = self._model.painted_row(index)
        if shown is None or not self.whole or row == self._hovered or row == self._current or \
                (self._selecting and self.selectionModel().isSelected(index)):
            super().drawRow(painter, option, index)
            return
        texts, colour_role, bold, bar, depth = shown
        rect = option.rect  # type: ignore[attr-defined]
        y, height = rect.y(), rect.height()
        palette, state = option.palette, option.state.value  # type: ignore[attr-defined]
        if self._alternate and (y + self._offset) // max(height, 1) % 2:
            # The style's row panel, as the tree view draws it under each cell: here once for the row.
            panel = QStyleOptionViewItem(option)
            panel.features |= _ALTERNATE  # type: ignore[attr-defined]
            panel.rect = QRect(self._span[0], y, self._span[1], height)  # type: ignore[attr-defined]
            self.style().drawPrimitive(_ROW_PANEL, panel, painter, self)
        cells = self.cells
        bold_font = cells.use(option.font)  # type: ignore[attr-defined]
        plain, status = cells.colour(palette, state, None), cells.colour(palette, state, colour_role)
        painter.save()
        if bold:
            painter.setFont(bold_font)
        pen = None
        for column, left, width in self._columns:
            if column == self._tree_column:  # the branches, then the text after them (column 0 unless moved)
                indent = self._indent[0] * (depth + self._indent[1])
                if indent:
                    self._branches(painter, QRect(left, y, indent, height), QRect(left, y, width, height), index)
                left, width = left + indent, width - indent
            if column == TIMELINE_COLUMN:
                self.gantt.draw(painter, QRect(left, y, width, height), bar, palette)
                continue
            colour = status if column == STATUS_COLUMN else plain
            if colour is not pen:
                painter.setPen(colour)
                pen = colour
            cells.put(painter, left, y, width, height, texts[column], bold)
        painter.restore()
        self.whole_rows += 1

    def _branches(self, painter: QPainter, branches: QRect, cell: QRect,
                  index: QModelIndex | QPersistentModelIndex) -> None:
        """The tree view's branches and their expand arrow, clipped to the column as the tree view clips them."""
        clip = branches.width() > cell.width()
        if clip:
            painter.save()
            painter.setClipRect(cell)
        self.drawBranches(painter, branches, index)
        if clip:
            painter.restore()

    def __repr__(self) -> str:
        return f"<TimelineView rows painted whole={self.whole_rows}>"
