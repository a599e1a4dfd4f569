"""The rows of the timeline a person can see, as one flat list: what a long session's view lays out.

A QTreeView lays out every expanded row again after each insert, whatever
the insert: at 100,000 calls that walk took 12 to 25 ms per batch of events,
growing with the session, and it came on top of the batch's own work. A
table view's work for an insert does not grow with its row count (a bare
QTableView took about 3 ms a batch at 20,000 rows as at 100,000). So the
timeline's view (`gui.window.timeline.view`) is a table over this model,
and draws the tree's indentation and arrows itself.

`FlatTimeline` lists the rows of the `TimelineModel` in tree order, less
those under a collapsed agent or batch and those hidden (by the filter). It
follows the tree model's signals: rows appended under an open parent become
one range insert here, at the place found by bisection (the list is sorted
by each row's path from the root, a few dictionary look-ups a step); the
changes to rows during a turn of the loop become one change over the rows
a view has on screen.
Expanding and collapsing are range inserts and removals; a change to many
rows at once (expand all, a filter pass) is a reset, after which the view
puts back its current row.

Expansion is kept by key, as a tree view keeps it by index: a row comes
collapsed, a collapsed row keeps its children's state, and a reset of the
tree model forgets it all.
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import filterfalse
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QCoreApplication, QModelIndex, QPersistentModelIndex, Qt, QTimer

from core import LEAVES, AgentKey, BatchKey, NodeKey
from gui.window.timeline.model import COLUMNS, Painted, TimelineModel

Index = QModelIndex | QPersistentModelIndex
_NO_PARENT = QModelIndex()


class FlatTimeline(QAbstractTableModel):
    """The shown rows of a `TimelineModel`, six columns, no children."""

    def __init__(self, source: TimelineModel, parent: Any = None) -> None:
        super().__init__(parent)
        self.source = source
        self._rows: list[NodeKey] = []
        self._expanded: set[NodeKey] = set()
        self._expanded_under: dict[NodeKey | None, set[NodeKey]] = {}
        """The expanded agents and batches by their parent: what a listing looks up instead of every row."""
        self._folded: dict[NodeKey, tuple[list[NodeKey], set[NodeKey]]] = {}
        """The rows a fold took out (and the expanded groups among them), by the folded group: what unfolding it
        puts back as they were, unless something under it changed since (`_stale`)."""
        self._hidden: set[NodeKey] = set()
        self._paths: dict[NodeKey, tuple[int, ...]] = {}
        self._groups: set[NodeKey] = set()
        """The expanded agents and batches whose row is in the list: those whose rows under them are shown."""
        self._parents, self._row_of = source.timeline.parent_table(), source.timeline.row_table()
        self.expand_new = False
        """Agents and batches come expanded (as the window wants them); else collapsed, as in a tree view."""
        self.hiding_new = False
        """Rows the tree model inserts come hidden (a filter is on: it shows them if they match)."""
        self.on_screen = (0, -1)
        """The rows a view shows now (its first and last), which it keeps up to date: a change to the tree model's
        rows is told as one change over these, once per turn of the loop, not as one per row (a flood changes
        thousands of rows a frame; the rows scrolled to later are painted as they are then)."""
        self._changed_soon = QTimer(self)
        self._changed_soon.setSingleShot(True)
        self._changed_soon.setInterval(0)
        self._changed_soon.timeout.connect(self._tell_changed)
        self._arrived: list[tuple[NodeKey | None, list[NodeKey]]] = []
        """Rows the tree model inserted during its flush, by parent, not shown yet (`_on_source_flushed`)."""
        source.rowsInserted.connect(self._on_source_rows_inserted)
        source.flushed.connect(self._on_source_flushed)
        source.dataChanged.connect(self._on_source_data_changed)
        source.modelAboutToBeReset.connect(self.beginResetModel)
        source.modelReset.connect(self._on_source_reset)
        self._relist()

    # -- the item model ------------------------------------------------------------

    def rowCount(self, parent: Index = _NO_PARENT) -> int:  # noqa: N802 - Qt override
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: Index = _NO_PARENT) -> int:  # noqa: N802 - Qt override
        return 0 if parent.isValid() else len(COLUMNS)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        return self.source.cell(self._rows[index.row()], index.column(), role)

    def headerData(self, section: int, orientation: Qt.Orientation,  # noqa: N802 - Qt override
                   role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        return self.source.headerData(section, orientation, role)

    def flags(self, index: Index) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable | Qt.ItemFlag.ItemNeverHasChildren

    # -- rows and keys ---------------------------------------------------------------

    def key_of(self, index: Index) -> NodeKey | None:
        return self._rows[index.row()] if index.isValid() and index.model() is self else None

    def painted_row(self, index: Index) -> Painted | None:
        """What the row shows (`TimelineModel.painted`), for the view's painting."""
        return self.source.painted(self._rows[index.row()]) if index.isValid() else None

    def row_of(self, key: NodeKey) -> int | None:
        """Where `key`'s row is in the list, None when it is not shown."""
        at = self._at(self._path(key))
        return at if at < len(self._rows) and self._rows[at] == key else None

    def index_of(self, key: NodeKey | None, column: int = 0) -> QModelIndex:
        """The index of `key`'s row (invalid when it is not shown), after the tree model shows what is pending."""
        self.source.flush()
        row = self.row_of(key) if key is not None else None
        return self.index(row, column) if row is not None else QModelIndex()

    def has_children(self, key: NodeKey) -> bool:
        return self.source.told_count(key) > 0

    def key_at(self, row: int) -> NodeKey:
        """The key of the shown row `row` (for a view that paints rows by number)."""
        return self._rows[row]

    def _path(self, key: NodeKey) -> tuple[int, ...]:
        """Its row under each of its parents from the root down: rows in tree order sort by it.  An agent's or a
        batch's is kept (rows are only ever appended, so it never changes); a run's is its parent's and its row."""
        if type(key) in LEAVES:  # the parent and row asked of the timeline's own tables: a bisection asks some 17
            parent, row = self._parents[key], self._row_of[key]
            return (*self._path(parent), row) if parent is not None else (row,)
        path = self._paths.get(key)
        if path is None:
            timeline = self.source.timeline
            parent = timeline.parent(key)
            path = self._paths[key] = (*self._path(parent), timeline.row(key)) if parent is not None else \
                (timeline.row(key),)
        return path

    def _at(self, path: tuple[int, ...]) -> int:
        """Where a row with this path is, or would be, in the list: a bisection, a run's path made inline (a
        flood asks this at each of its inserts)."""
        rows, paths, parents, row_of = self._rows, self._paths, self._parents, self._row_of
        low, high = 0, len(rows)
        while low < high:
            middle = (low + high) // 2
            key = rows[middle]
            if type(key) in LEAVES and (parent := parents[key]) is not None:
                found = (*(paths.get(parent) or self._path(parent)), row_of[key])
            else:
                found = self._path(key)
            if found < path:
                low = middle + 1
            else:
                high = middle
        return low

    def _end(self, key: NodeKey) -> int:
        """Where the rows under `key` (shown) end: the first row after its subtree."""
        path = self._path(key)
        return self._at((*path[:-1], path[-1] + 1))

    def _listing(self, keys: list[NodeKey], opened: set[NodeKey]) -> list[NodeKey]:
        """These rows (consecutive children of one parent) and the shown rows under them, in tree order; the
        expanded agents and batches among them go into `opened`.  The rows between two expanded ones are copied
        as a slice of the parent's list, filtered of the hidden ones in C; the expanded ones are found in
        `_expanded_under`: no Python step per row (expanding the lead of 100,000 rows took 65 ms of Python a
        row at a time, quiet), only one per expanded row."""
        if not keys:
            return []
        hidden, row_of, children = self._hidden, self._row_of, self.source.told_children
        inside = self._expanded_under.get(self._parents[keys[0]])
        if not inside:
            return self._shown(keys)
        first, last = row_of[keys[0]], row_of[keys[-1]]
        if len(keys) <= 4 * len(inside):  # a few rows that arrived: looked up in C
            inside = inside.intersection(keys)
        else:  # a parent's rows, or many of them: its expanded ones by their place
            inside = {key for key in inside if first <= row_of[key] <= last}
        if hidden and inside:
            inside = inside - hidden
        if not inside:  # a batch's calls, a collapsed agent's: one slice
            return self._shown(keys)
        start = 0
        found: list[NodeKey] = []
        for key in sorted(inside, key=row_of.__getitem__):
            at = row_of[key] - first + 1
            found += self._shown(keys[start:at])
            found += self._listing(children(key), opened)
            start = at
        found += self._shown(keys[start:] if start else keys)
        opened |= inside
        return found

    def _shown(self, keys: list[NodeKey]) -> list[NodeKey]:
        """These rows less the hidden ones (a filter's pass hides most of them, a fold none)."""
        return list(filterfalse(self._hidden.__contains__, keys)) if self._hidden else keys

    def _open(self, key: NodeKey | None) -> bool:
        """Whether rows under `key` are shown: the root, or a shown row that is expanded."""
        return key is None or key in self._groups

    # -- expanding and hiding -----------------------------------------------------------

    def is_expanded(self, key: NodeKey) -> bool:
        return key in self._expanded

    def set_expanded(self, key: NodeKey, expanded: bool) -> None:
        if (key in self._expanded) == expanded or type(key) in LEAVES:
            return
        row = self.row_of(key)
        self._stale(self._parents.get(key))
        folded = self._folded.pop(key, None)
        if expanded:
            self._expand([key])
            if row is not None and folded is not None:  # as it was folded: one insert, no listing
                self._insert(row + 1, folded[0], folded[1] | {key})
            elif row is not None:
                opened = {key}
                self._insert(row + 1, self._listing(self.source.told_children(key), opened), opened)
            return
        end = self._end(key) if row is not None else 0
        self._expanded.discard(key)
        self._expanded_under.get(self._parents.get(key), set()).discard(key)
        if row is not None:
            self._folded[key] = (self._rows[row + 1:end], self._remove(row + 1, end, key) - {key})

    def _stale(self, key: NodeKey | None) -> None:
        """The rows kept of folded groups at or above `key` forgotten: what is under `key` changed."""
        folded, parents = self._folded, self._parents
        while folded and key is not None:
            folded.pop(key, None)
            key = parents.get(key)

    def _expand(self, keys: Iterable[NodeKey]) -> None:
        """These agents and batches expanded (as kept; what is shown is the caller's)."""
        parents, under = self._parents, self._expanded_under
        for key in keys:
            self._expanded.add(key)
            under.setdefault(parents.get(key), set()).add(key)

    def expand_all(self, expanded: bool = True) -> None:
        """Every agent and batch expanded (or collapsed): one reset."""
        self.beginResetModel()
        self._expanded, self._expanded_under, self._folded = set(), {}, {}
        if expanded:
            self._expand(self._every_group())
        self._relist()
        self.endResetModel()

    def is_hidden(self, key: NodeKey) -> bool:
        return key in self._hidden

    def set_hidden(self, key: NodeKey, hidden: bool) -> None:
        if (key in self._hidden) == hidden:
            return
        self._stale(key)
        if hidden:
            row = self.row_of(key)
            self._hidden.add(key)
            if row is not None:
                self._remove(row, self._end(key), key)
            return
        self._hidden.discard(key)
        if self._open(self.source.timeline.parent(key)):
            opened: set[NodeKey] = set()
            self._insert(self._at(self._path(key)), self._listing([key], opened), opened)

    def hide_only(self, hidden: set[NodeKey]) -> None:
        """Hide exactly these rows (and what is under them): row by row for a few changes, else one reset."""
        changed = (hidden - self._hidden) | (self._hidden - hidden)
        if len(changed) <= 64:
            for key in sorted(changed, key=self._path):
                self.set_hidden(key, key in hidden)
            return
        self.beginResetModel()
        self._hidden, self._folded = set(hidden), {}
        self._relist()
        self.endResetModel()

    def _insert(self, at: int, rows: list[NodeKey], opened: set[NodeKey]) -> None:
        """`rows` shown from `at` on, one range insert; `opened`: the expanded groups among them (`_listing`)."""
        self._groups |= opened
        if rows:
            self.beginInsertRows(QModelIndex(), at, at + len(rows) - 1)
            self._rows[at:at] = rows
            self.endInsertRows()

    def _remove(self, first: int, end: int, top: NodeKey) -> set[NodeKey]:
        """The rows from `first` to `end` (`top`'s, or those under it) taken out, one range removal; returns the
        expanded groups that were shown among them (and `top`, if it was)."""
        gone = self._groups_under(top)
        self._groups -= gone
        if end > first:
            self.beginRemoveRows(QModelIndex(), first, end - 1)
            del self._rows[first:end]
            self.endRemoveRows()
        return gone

    def _groups_under(self, top: NodeKey) -> set[NodeKey]:
        """`top` and the groups under it that are expanded and shown, found down `_expanded_under`: a step per
        expanded group, none per row (a fold of 100,000 rows took 50 ms a row at a time, busy)."""
        groups, under, found, todo = self._groups, self._expanded_under, set(), [top]
        while todo:
            key = todo.pop()
            if key in groups:
                found.add(key)
                todo += under.get(key, ())
        return found

    def _relist(self) -> None:
        """The list made again from the tree (inside a reset)."""
        self._groups = set()
        self._rows = self._listing(self.source.told_children(None), self._groups)

    # -- following the tree model ----------------------------------------------------------

    def _on_source_rows_inserted(self, parent: QModelIndex, first: int, last: int) -> None:
        key = self.source.key_of(parent) if parent.isValid() else None
        keys = self.source.timeline.children(key)[first:last + 1]
        self._stale(key)
        if self.source.flushing:  # shown with the flush's other inserts, once it has told them all
            self._arrived.append((key, keys))
        else:
            self._show_arrived([(key, keys)])

    def _on_source_flushed(self) -> None:
        arrived, self._arrived = self._arrived, []
        self._show_arrived(arrived)

    def _show_arrived(self, arrived: list[tuple[NodeKey | None, list[NodeKey]]]) -> None:
        """Rows the tree model inserted, by parent in the order it inserted them: each parent's as one insert
        here, and none for a parent whose own row came in this lot (its listing took in the rows under it, which
        the tree model had told of by then).  A flood's batch came under some 50 parents, an agent's new batches
        each one, and took as many inserts (and bisections); now it takes about one per agent."""
        if self.hiding_new:
            for _, keys in arrived:
                self._hidden.update(keys)
            return
        if self.expand_new:  # all of them first: a new row's listing goes down into the new rows under it
            for _, keys in arrived:
                self._expand([key for key in keys if type(key) not in LEAVES])
        listed: set[NodeKey] = set()
        for parent, keys in arrived:
            if not keys or parent in listed or not self._open(parent):
                continue
            opened: set[NodeKey] = set()
            rows = self._listing(keys, opened)
            listed |= opened
            self._insert(self._at(self._path(keys[0])), rows, opened)

    def _on_source_data_changed(self, first: QModelIndex, last: QModelIndex, roles: Any = ()) -> None:
        if self._changed_soon.isActive():
            return
        if QCoreApplication.instance() is None:  # no event loop to wait for: told now
            self._tell_changed()
        else:
            self._changed_soon.start()

    def _tell_changed(self) -> None:
        """The rows changed since the last turn of the loop, told as one change over the rows on screen."""
        top, bottom = self.on_screen
        bottom = min(bottom, len(self._rows) - 1)
        if 0 <= top <= bottom:
            self.dataChanged.emit(self.index(top, 0), self.index(bottom, len(COLUMNS) - 1))

    def _on_source_reset(self) -> None:
        self._expanded, self._expanded_under, self._hidden, self._paths, self._arrived = set(), {}, set(), {}, []
        self._folded = {}
        self._parents, self._row_of = self.source.timeline.parent_table(), self.source.timeline.row_table()
        if self.expand_new:
            self._expand(self._every_group())
        self._relist()
        self.endResetModel()

    def _every_group(self) -> set[NodeKey]:
        timeline = self.source.timeline
        return {*map(AgentKey, timeline.agents), *map(BatchKey, timeline.batches)}

    def __repr__(self) -> str:
        return (f"<FlatTimeline shown={len(self._rows)} expanded={len(self._expanded)} "
                f"hidden={len(self._hidden)}{' hiding new' if self.hiding_new else ''}>")
