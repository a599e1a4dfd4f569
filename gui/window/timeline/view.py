"""The timeline's view: a table over the shown rows, drawing the tree itself; a plain row painted in one call.

The rows are `gui.window.timeline.flat.FlatTimeline`'s, the tree's rows in
order less those under a collapsed agent or batch: a table view's work for a
batch of new rows does not grow with the session, where a tree view's did
(see that module). This view draws what makes it a tree: each row indented
by its depth in the Call column, an agent's or a batch's arrow, and the
keys and clicks that open and close them (Left, Right, +, -, *, a click on
the arrow, a double click on the row).

A flood of calls repaints the visible rows several times a second. Qt
paints a row cell by cell, calling the item delegate of each, and each of
those calls crosses from C++ into Python with a copy of the style option:
at some 50 rows of six cells that was most of a repaint (23 ms at
1400x860). So `paintEvent` paints a plain row itself, in one call: the
alternate background as the style draws it, the arrow, then each cell's text
and the Gantt bar through the code the delegates use (`TextCells.put`,
`GanttDelegate.draw`), so a row looks the same either way. A row that is
not plain (selected, hovered, or holding the current cell while the view
has the focus) is painted by Qt's table view, cell by cell through the
delegates: there are a few such rows on a screen, and the style draws their
panels and focus frames its own way.

For the window, the filter and the tests, the view also speaks in the tree
model's indexes, as a tree view over `TimelineModel` would: `expand`,
`isExpanded`, `setRowHidden`, `currentIndex`, `setCurrentIndex`, `scrollTo`
and `visualRect` take (or give) those; `key_at` and `current_key` give keys.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QItemSelectionModel, QModelIndex, QPersistentModelIndex, QPoint, QRect, QSize, Qt
from PySide6.QtGui import QCursor, QKeyEvent, QMouseEvent, QPainter, QPaintEvent, QRegion
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QStyle,
    QStyleOption,
    QStyleOptionViewItem,
    QTableView,
    QWidget,
)

from core import LEAVES, NodeKey
from gui.window.timeline.cells import TextCells
from gui.window.timeline.flat import FlatTimeline
from gui.window.timeline.gantt import GanttDelegate
from gui.window.timeline.model import COLUMNS, STATUS_COLUMN, TIMELINE_COLUMN, TimelineModel

INDENT = 14
"""Pixels per level, the arrow's level included: a sub-agent three levels down keeps room for its name."""
TREE_COLUMN = 0
"""The column that holds the tree (Call), wherever it is dragged."""
_ALTERNATE = QStyleOptionViewItem.ViewItemFeature.Alternate
_ROW_PANEL = QStyle.PrimitiveElement.PE_PanelItemViewRow
_DOWN = QStyle.PrimitiveElement.PE_IndicatorArrowDown
_RIGHT = QStyle.PrimitiveElement.PE_IndicatorArrowRight
_LEFT = QStyle.PrimitiveElement.PE_IndicatorArrowLeft
_HOVER_EVENTS = frozenset({QEvent.Type.HoverMove, QEvent.Type.HoverLeave, QEvent.Type.Leave})
Index = QModelIndex | QPersistentModelIndex


class TimelineView(QTableView):
    """Agents, batches and calls as an indented, collapsible list; plain rows painted whole."""

    def __init__(self, model: TimelineModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("timeline")
        self._model = model
        self.rows = FlatTimeline(model, self)
        self.setModel(self.rows)
        self.setShowGrid(False)
        self.setWordWrap(False)
        self.setTabKeyNavigation(False)  # Tab leaves the timeline, as from a tree
        self.setCornerButtonEnabled(False)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setHorizontalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.setAlternatingRowColors(True)
        rows = self.verticalHeader()
        rows.hide()
        rows.setMinimumSectionSize(1)
        rows.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        header = self.horizontalHeader()
        header.setStretchLastSection(True)
        header.setSectionsMovable(True)
        header.setHighlightSections(False)
        header.setDefaultAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
        self.cells = TextCells(self, self.rows, self._arrow)
        self.setItemDelegate(self.cells)
        self.gantt = GanttDelegate(self)
        self.setItemDelegateForColumn(TIMELINE_COLUMN, self.gantt)
        self.whole = True
        """Paint plain rows whole; off, every row goes through the delegates as Qt's table view paints it (the
        picture is the same: tests compare the two)."""
        self.whole_rows = 0
        """Rows painted in one call since the view was made (the others went through the delegates)."""
        self._kept: tuple[NodeKey | None, int] = (None, 0)
        self.hovered_row = -1
        """The row under the mouse, which the delegates paint hovered in every cell."""
        self.rows.modelAboutToBeReset.connect(self._on_rows_about_to_be_reset)
        self.rows.modelReset.connect(self._on_rows_reset)
        self._fit_rows()

    # -- the tree, in the tree model's indexes ---------------------------------------

    def header(self) -> QHeaderView:
        return self.horizontalHeader()

    def indentation(self) -> int:
        return INDENT

    def key_of(self, index: Index) -> NodeKey | None:
        """The row's key, for an index of the tree model or of the shown rows."""
        if not index.isValid():
            return None
        return self.rows.key_of(index) if index.model() is self.rows else self._model.key_of(index)

    def key_at(self, point: QPoint) -> NodeKey | None:
        """The key of the row at `point` in the viewport."""
        return self.rows.key_of(self.indexAt(point))

    def current_key(self) -> NodeKey | None:
        return self.rows.key_of(super().currentIndex())

    def shown(self, index: Index) -> QModelIndex:
        """The shown row's index for an index of the tree model (invalid when that row is not shown)."""
        if index.model() is self._model:
            return self.rows.index_of(self._model.key_of(index), index.column())
        return QModelIndex(index)  # type: ignore[arg-type]  # PySide6 stubs lack QModelIndex(QPersistentModelIndex)

    def isExpanded(self, index: Index) -> bool:  # noqa: N802 - as QTreeView's
        key = self.key_of(index)
        return key is not None and self.rows.is_expanded(key)

    def setExpanded(self, index: Index, expanded: bool) -> None:  # noqa: N802 - as QTreeView's
        key = self.key_of(index)
        if key is not None:
            self.rows.set_expanded(key, expanded)

    def expand(self, index: Index) -> None:
        self.setExpanded(index, True)

    def collapse(self, index: Index) -> None:
        self.setExpanded(index, False)

    def expandAll(self) -> None:  # noqa: N802 - as QTreeView's
        self._model.flush()
        self.rows.expand_all()

    def collapseAll(self) -> None:  # noqa: N802 - as QTreeView's
        self.rows.expand_all(False)

    def setRowHidden(  # type: ignore[override]  # QTreeView's signature, on a table  # noqa: N802
            self, row: int, parent: Index, hide: bool) -> None:
        """Hide the tree model's `row` under `parent` (and what is under it), as QTreeView's does."""
        self.rows.set_hidden(self._child(row, parent), hide)

    def isRowHidden(  # type: ignore[override]  # QTreeView's signature, on a table  # noqa: N802
            self, row: int, parent: Index) -> bool:
        return self.rows.is_hidden(self._child(row, parent))

    def _child(self, row: int, parent: Index) -> NodeKey:
        return self._model.told_children(self.key_of(parent))[row]

    def currentIndex(self) -> QModelIndex:  # noqa: N802 - the tree model's, as the window asks for it
        key = self.current_key()
        return self._model.index_of(key, flush=False) if key is not None else QModelIndex()

    def setCurrentIndex(self, index: Index) -> None:  # noqa: N802
        super().setCurrentIndex(self.shown(index))

    def scrollTo(self, index: Index,  # noqa: N802
                 hint: QAbstractItemView.ScrollHint = QAbstractItemView.ScrollHint.EnsureVisible) -> None:
        """Scroll to the row, its parents expanded first for a row of the tree model (as a tree view does)."""
        if index.model() is self._model:
            self._open_above(self._model.key_of(index))
        super().scrollTo(self.shown(index), hint)

    def go_to(self, key: NodeKey) -> bool:
        """Make `key`'s row the current one and scroll to it, its parents expanded; False when it is hidden."""
        self._model.flush()
        self._open_above(key)
        row = self.rows.row_of(key)
        if row is None:
            return False
        self._go_to_row(row)
        return True

    def _open_above(self, key: NodeKey | None) -> None:
        above = []
        parent = self._model.timeline.parent(key) if key is not None else None
        while parent is not None:
            above.append(parent)
            parent = self._model.timeline.parent(parent)
        for parent in reversed(above):
            self.rows.set_expanded(parent, True)

    def visualRect(self, index: Index) -> QRect:  # noqa: N802
        """The cell's rectangle; for an index of the tree model, as a tree view gives it: in the Call column, the
        part after the row's indentation (where its text starts)."""
        if index.model() is not self._model:
            return super().visualRect(index)
        shown = self.shown(index)
        rect = super().visualRect(shown)
        painted = self.rows.painted_row(shown)
        if index.column() == TREE_COLUMN and rect.isValid() and painted is not None:
            rect.setLeft(rect.left() + INDENT * (painted[4] + 1))
        return rect

    # -- keys and clicks that open and close --------------------------------------------

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802
        key, index = event.key(), super().currentIndex()
        row = self.rows.key_of(index)
        if row is None or event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier:
            super().keyPressEvent(event)
            return
        group = self.rows.has_children(row)
        expanded = self.rows.is_expanded(row)
        if key == Qt.Key.Key_Left:
            if group and expanded:
                self.rows.set_expanded(row, False)
            elif (parent := self._model.timeline.parent(row)) is not None:
                self.go_to(parent)
        elif key == Qt.Key.Key_Right:
            if group and not expanded:
                self.rows.set_expanded(row, True)
            elif group:
                self._go_to_row(index.row() + 1)
        elif key in (Qt.Key.Key_Plus, Qt.Key.Key_Minus) and group:
            self.rows.set_expanded(row, key == Qt.Key.Key_Plus)
        elif key == Qt.Key.Key_Asterisk and group:
            self._expand_under(row)
        else:
            super().keyPressEvent(event)
            return
        event.accept()

    def _expand_under(self, key: NodeKey) -> None:
        stack = [key]
        while stack:
            node = stack.pop()
            if type(node) not in LEAVES:
                self.rows.set_expanded(node, True)
                stack.extend(self._model.told_children(node))

    def _go_to_row(self, row: int) -> None:
        if 0 <= row < self.rows.rowCount():
            index = self.rows.index(row, TREE_COLUMN)
            self.selectionModel().setCurrentIndex(index, QItemSelectionModel.SelectionFlag.ClearAndSelect
                                                  | QItemSelectionModel.SelectionFlag.Rows)
            super().scrollTo(index)

    def mousePressEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        index = self.indexAt(event.position().toPoint())
        key = self.rows.key_of(index)
        if event.button() == Qt.MouseButton.LeftButton and key is not None and index.column() == TREE_COLUMN \
                and self.rows.has_children(key):
            painted = self.rows.painted_row(index)
            left = self.columnViewportPosition(TREE_COLUMN) + INDENT * (painted[4] if painted else 0)
            if left <= event.position().x() < left + INDENT:  # on the arrow: open or close, select nothing
                self.rows.set_expanded(key, not self.rows.is_expanded(key))
                event.accept()
                return
        super().mousePressEvent(event)

    def mouseDoubleClickEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        key = self.key_at(event.position().toPoint())
        if event.button() == Qt.MouseButton.LeftButton and key is not None and self.rows.has_children(key):
            self.rows.set_expanded(key, not self.rows.is_expanded(key))
        super().mouseDoubleClickEvent(event)

    # -- painting -------------------------------------------------------------------------

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802
        count = self.rows.rowCount()
        area = event.rect()
        first = self.rowAt(area.top())
        if first < 0:
            super().paintEvent(event)  # no rows where it is asked: Qt paints nothing but what it always does
            return
        last = self.rowAt(area.bottom())
        last = count - 1 if last < 0 else last
        bottom = self.rowAt(self.viewport().height() - 1)
        self.rows.on_screen = (self.rowAt(0), count - 1 if bottom < 0 else bottom)
        # Looked up once per repaint, not per row: what makes a row not plain (the row under the mouse, the
        # current row while the view has the focus, what is selected) and where the columns are.
        viewport = self.viewport()
        hovered = self.hovered_row = self._row_under_mouse()
        selection = self.selectionModel()
        current = selection.currentIndex().row() if self.hasFocus() else -1
        selecting = selection.hasSelection()
        plain: list[int] = []
        other = QRegion()
        width = viewport.width()
        for row in range(first, last + 1):
            if not self.whole or row == hovered or row == current or (selecting and selection.isRowSelected(row)):
                other += QRect(0, self.rowViewportPosition(row), width, self.rowHeight(row))
            else:
                plain.append(row)
        if not other.isEmpty():
            super().paintEvent(QPaintEvent(other & event.region()))
        if plain:
            painter = QPainter(viewport)
            try:
                self._paint_rows(painter, plain)
            finally:
                painter.end()

    def _row_under_mouse(self) -> int:
        viewport = self.viewport()
        return self.indexAt(viewport.mapFromGlobal(QCursor.pos())).row() if viewport.underMouse() else -1

    def viewportEvent(self, event: QEvent) -> bool:  # noqa: N802
        """The mouse moved to another row: both rows are repainted whole (a table view repaints the two cells)."""
        if event.type() in _HOVER_EVENTS:
            row = self._row_under_mouse() if event.type() == QEvent.Type.HoverMove else -1
            if row != self.hovered_row:
                width = self.viewport().width()
                for each in (self.hovered_row, row):
                    if each >= 0:
                        self.viewport().update(0, self.rowViewportPosition(each), width, self.rowHeight(each))
                self.hovered_row = row
        return super().viewportEvent(event)

    def _paint_rows(self, painter: QPainter, rows: list[int]) -> None:
        header = self.horizontalHeader()
        columns = [(column, header.sectionViewportPosition(column), header.sectionSize(column))
                   for column in range(len(COLUMNS)) if not header.isSectionHidden(column)]
        left = header.sectionViewportPosition(header.logicalIndex(0))
        span = header.length() - header.offset() - left
        option = QStyleOptionViewItem()
        self.initViewItemOption(option)
        palette, state = option.palette, option.state.value
        panel = QStyleOptionViewItem(option)
        panel.features |= _ALTERNATE
        cells, style, alternate = self.cells, self.style(), self.alternatingRowColors()
        bold_font = cells.use(option.font)
        plain_colour = cells.colour(palette, state, None)
        painted, key_at = self.rows.source.painted, self.rows.key_at
        for row in rows:
            key = key_at(row)
            shown = painted(key)
            if shown is None:
                continue
            texts, colour_role, bold, bar, depth = shown
            y, height = self.rowViewportPosition(row), self.rowHeight(row)
            if alternate and row % 2:  # the style's row panel, as the table draws it under each cell: once a row
                panel.rect = QRect(left, y, span, height)
                style.drawPrimitive(_ROW_PANEL, panel, painter, self)
            status = cells.colour(palette, state, colour_role)
            painter.save()
            if bold:
                painter.setFont(bold_font)
            pen = None
            for column, x, w in columns:
                if column == TREE_COLUMN:  # the arrow, then the text after the indentation
                    indent = self._arrow(painter, QRect(x, y, w, height), key, depth)
                    x, w = x + indent, w - indent
                if column == TIMELINE_COLUMN:
                    self.gantt.draw(painter, QRect(x, y, w, height), bar, palette)
                    continue
                colour = status if column == STATUS_COLUMN else plain_colour
                if colour is not pen:
                    painter.setPen(colour)
                    pen = colour
                cells.put(painter, x, y, w, height, texts[column], bold)
            painter.restore()
            self.whole_rows += 1

    def _arrow(self, painter: QPainter, cell: QRect, key: NodeKey | None, depth: int) -> int:
        """An agent's or a batch's arrow in its level of the indentation of `cell`; the indentation's width."""
        indent = INDENT * (depth + 1)
        if key is None or not self.rows.has_children(key):
            return indent
        arrow = QStyleOption()
        arrow.initFrom(self)
        arrow.rect = QRect(cell.left() + INDENT * depth, cell.top(), INDENT, cell.height())
        # The arrow a tree view's branch has (a style sheet's style draws no branch outside a tree view).
        shape = _DOWN if self.rows.is_expanded(key) else _LEFT if self.isRightToLeft() else _RIGHT
        painter.save()
        if indent > cell.width():
            painter.setClipRect(cell)
        self.style().drawPrimitive(shape, arrow, painter, self)
        painter.restore()
        return indent

    def _fit_rows(self) -> None:
        """Every row as high as a line of text in an item, as the style sizes one."""
        option = QStyleOptionViewItem()
        self.initViewItemOption(option)
        option.text = "Mg"
        option.features |= QStyleOptionViewItem.ViewItemFeature.HasDisplay
        size = self.style().sizeFromContents(QStyle.ContentsType.CT_ItemViewItem, option, QSize(), self)
        self.verticalHeader().setDefaultSectionSize(size.height())

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802
        super().changeEvent(event)
        if event.type() in (QEvent.Type.FontChange, QEvent.Type.StyleChange):
            self._fit_rows()

    # -- a reset keeps the current row -------------------------------------------------------

    def _on_rows_about_to_be_reset(self) -> None:
        self._kept = (self.current_key(), self.verticalScrollBar().value())

    def _on_rows_reset(self) -> None:
        key, scrolled = self._kept
        self.updateGeometries()
        self.verticalScrollBar().setValue(scrolled)
        row = self.rows.row_of(key) if key is not None else None
        if row is not None:
            self.selectionModel().setCurrentIndex(self.rows.index(row, TREE_COLUMN),
                                                  QItemSelectionModel.SelectionFlag.ClearAndSelect
                                                  | QItemSelectionModel.SelectionFlag.Rows)

    def __repr__(self) -> str:
        return f"<TimelineView {self.rows!r} rows painted whole={self.whole_rows}>"
