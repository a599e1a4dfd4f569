"""One small item model over a plain Python list: a row per item, columns named once, cells from one method.

The window's lists (the waiting requests, the hub's workspaces and inbox, the rules) are Python lists of
records; what differs between them is what a cell shows.  A subclass names its columns and answers `cell`;
the guards every Qt model needs (a row out of range, a parent index, header roles) and the row bookkeeping
(begin/end insert and remove, a changed row, a column that changes by itself) are here once.  After napari's
`_qt/containers/_base_item_model.py`, a thin adapter over a Python container.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Generic, TypeVar

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QObject, QPersistentModelIndex, Qt

T = TypeVar("T")
Index = QModelIndex | QPersistentModelIndex
DISPLAY = Qt.ItemDataRole.DisplayRole


class ListModel(QAbstractTableModel, Generic[T]):
    """A flat table over `rows`, a list the model owns; change it through the methods here, never directly.

    Subclasses set `COLUMNS` (their header texts; a one-column list may leave the one header blank) and answer
    `cell(item, column, role)`: None for a role they do not draw.
    """

    COLUMNS: tuple[str, ...] = ("",)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._rows: list[T] = []

    @property
    def rows(self) -> Sequence[T]:
        """The items, in row order (read only: the methods below change them and tell the views)."""
        return self._rows

    def __len__(self) -> int:
        return len(self._rows)

    def __iter__(self) -> Iterator[T]:
        return iter(self._rows)

    def cell(self, item: T, column: int, role: int) -> object:
        """What `item` shows in `column` for `role` (None: nothing)."""
        raise NotImplementedError

    # -- changing the rows ---------------------------------------------------------

    def append(self, item: T) -> int:
        """Add a row at the end; returns its number."""
        row = len(self._rows)
        self.beginInsertRows(QModelIndex(), row, row)
        self._rows.append(item)
        self.endInsertRows()
        return row

    def remove_first(self, matches: Callable[[T], bool]) -> T | None:
        """Remove the first row whose item matches; returns it (None: none matched)."""
        row = self.find(matches)
        if row is None:
            return None
        self.beginRemoveRows(QModelIndex(), row, row)
        item = self._rows.pop(row)
        self.endRemoveRows()
        return item

    def replace_all(self, items: Iterable[T]) -> None:
        """A new list altogether (a reset: views forget their selection)."""
        self.beginResetModel()
        self._rows = list(items)
        self.endResetModel()

    def changed(self, row: int) -> None:
        """Row `row`'s item changed in place: its cells are due again."""
        self.dataChanged.emit(self.index(row, 0), self.index(row, len(self.COLUMNS) - 1))

    def columns_changed(self, first: int, last: int) -> None:
        """Columns `first` to `last` changed by themselves (a clock's cells): due again in every row, display only."""
        if self._rows:
            self.dataChanged.emit(self.index(0, first), self.index(len(self._rows) - 1, last), [DISPLAY])

    def find(self, matches: Callable[[T], bool]) -> int | None:
        """The number of the first row whose item matches."""
        return next((row for row, item in enumerate(self._rows) if matches(item)), None)

    def item(self, index: Index) -> T | None:
        """The item of a view's index (None: no row there)."""
        row = index.row()
        return self._rows[row] if index.isValid() and 0 <= row < len(self._rows) else None

    # -- QAbstractTableModel -------------------------------------------------------

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: N802 - Qt override
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: N802 - Qt override
        return 0 if parent.isValid() else len(self.COLUMNS)

    def data(self, index: Index, role: int = DISPLAY) -> object:
        item = self.item(index)
        if item is None or not 0 <= index.column() < len(self.COLUMNS):
            return None
        return self.cell(item, index.column(), role)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = DISPLAY) -> object:  # noqa: N802
        if orientation == Qt.Orientation.Horizontal and role == DISPLAY and 0 <= section < len(self.COLUMNS):
            return self.COLUMNS[section]
        return None

    def flags(self, index: Index) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable | Qt.ItemFlag.ItemNeverHasChildren

    def __repr__(self) -> str:
        return f"<{type(self).__name__} rows={len(self._rows)}>"
