"""The timeline as a Qt item model: a thin adapter over the console's one `core.Timeline`.

Rows are agents (collapsible), their batches (collapsible, holding the batch's calls), their tool runs and
what they said (a message's row: the person's prompt, the agent's words or reasoning, between its calls);
sub-agents are agent rows under their parent.  All the state lives in the Qt-free read model, which the bus feeds
as events are published; this class keeps no copy of it.  It watches the timeline's changes, and shows them when
it `flush`es (after each batch of events the bridge takes, or on the next turn of the loop): rows inserted under
one parent in a burst become one range insert, and a row updated many times is refreshed once. Until then Qt sees
the rows it has been told of (`rowCount` counts those), so the view and the model never disagree.  A row's cells,
tooltip, brush and Gantt bar are prepared when a view first paints it (an agent's, a few, as it comes and
changes), and again once painted if it changed: a flood costs no formatting for rows nobody scrolls to
(gui.window.timeline.prepared keeps those tables).  The tree's structure is a QStandardItemModel's, in C++: a tree
view over it asks `index()` and `rowCount()` of every expanded row after each insert (1.5 s at 100,000 rows with
those in Python).  The window's view shows `gui.window.timeline.flat.FlatTimeline`, the shown rows as one list,
which follows this model's signals.  Cells are empty (`data()` answers from the timeline).

The last column, "Timeline", gives each run and batch a `GanttBar` (`GANTT_ROLE`) for
`gui.window.timeline.gantt.GanttDelegate` to paint.  While something is at work, a timer stretches the time windows that
end "now" twice a second and repaints that column of the rows concerned, nothing else.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Container, Iterable
from datetime import datetime, timezone
from typing import Any

from PySide6.QtCore import QCoreApplication, QModelIndex, QPersistentModelIndex, Qt, QTimer, Signal
from PySide6.QtGui import QBrush, QColor, QFont, QStandardItem, QStandardItemModel

from core import (
    LEAVES,
    AgentKey,
    BatchKey,
    Event,
    Inserted,
    MessageKey,
    NodeKey,
    RunKey,
    Timeline,
    Updated,
    parse_key,
)
from gui.window.kit import theme
from gui.window.timeline.gantt import GANTT_ROLE, GanttBar, GanttWindow
from gui.window.timeline.prepared import PreparedRows

Index = QModelIndex | QPersistentModelIndex
Painted = tuple[tuple[str, ...], str | None, bool, GanttBar | None, int]
"""What a row shows (`TimelineModel.painted`): its columns' texts, status colour, bold or not, bar, depth."""
KEY_ROLE = Qt.ItemDataRole.UserRole + 1
COLUMNS = ("Call", "Summary", "Status", "Duration", "Changed", "Timeline")
STATUS_COLUMN = COLUMNS.index("Status")
TIMELINE_COLUMN = COLUMNS.index("Timeline")
TICK_MS = 500

@functools.lru_cache(maxsize=64)
def _brush(theme_name: str, role: str) -> QBrush:
    return QBrush(QColor(getattr(theme.THEMES[theme_name], role)))


_ANSWERED = frozenset({Qt.ItemDataRole.DisplayRole, KEY_ROLE, GANTT_ROLE, Qt.ItemDataRole.ToolTipRole,
                       Qt.ItemDataRole.ForegroundRole, Qt.ItemDataRole.FontRole})  # what `TimelineModel.data` answers


def _utc_now() -> datetime:
    return datetime.now(timezone.utc)


class TimelineModel(QStandardItemModel):
    """Agents, batches and runs as a tree of rows, six columns (the last a Gantt bar).

    Signals:
        flushed(): a flush has told its rows inserted (each parent's as one rowsInserted, `flushing` meanwhile):
            a listener that follows the inserts may show them together, now.
    """

    flushed = Signal()

    def __init__(self, timeline: Timeline | None = None, parent: Any = None, *,
                 clock: Callable[[], datetime] = _utc_now) -> None:
        super().__init__(parent)
        self.disconnect(self)  # QStandardItemModel's itemChanged for each cell a dataChanged spans: nobody listens
        self._clock = clock
        self._timeline = Timeline()
        self._unwatch: Callable[[], None] = lambda: None
        self.setColumnCount(len(COLUMNS))
        self._items: dict[NodeKey, QStandardItem] = {}
        """The item of each agent's and batch's row (a run's row has none: Qt keeps an empty cell)."""
        self._item_keys: dict[int, NodeKey] = {}  # whose row each of those items is (by the item's id)
        self._siblings: dict[int, list[NodeKey]] = {}
        """The timeline's list of children under each parent item, by the internal id of their indexes."""
        self._inserted: dict[NodeKey | None, list[Inserted]] = {}
        self._updated: dict[NodeKey, None] = {}
        """Changes watched but not shown yet, in the order they came: the rows inserted by parent (a parent's rows
        are appended in order, so its inserts are contiguous, however the agents' calls interleave; parents in the
        order they were first inserted under, which puts a new agent's or batch's own row before its children),
        and the rows updated (an ordered set)."""
        self._flush_soon = QTimer(self)
        self._flush_soon.setSingleShot(True)
        self._flush_soon.setInterval(0)
        self._flush_soon.timeout.connect(self.flush)
        self.flushing = False
        """A flush is telling its inserts (a rowsInserted now is one of several, and `flushed` follows)."""
        self.auto_flush = True
        """Flush on the next turn of the loop after a change; a bridge that flushes after each of its batches
        (once a frame) turns it off."""
        self._changed_runs: dict[str, None] | None = None
        """The runs whose rows flushes changed since `take_changed_runs` (None: nobody takes them, none kept)."""
        self._rows = rows = PreparedRows()
        # Its tables, read as they are by data() and the flush (a view asks for thousands of cells a second).
        self._cells, self._tips, self._brushes, self._bars = rows.cells, rows.tips, rows.brushes, rows.bars
        self._bar_tips, self._windows, self._prepared = rows.bar_tips, rows.windows, rows.prepared
        self._live = rows.live
        self._refresh, self._unshown, self._groups_of = rows.refresh, rows.unshown, rows.groups_of
        self._bold: QFont | None = None
        self._tick_due = False
        """A tick came while rows waited for the bridge's flush: the flush ticks."""
        self._ticker = QTimer(self)
        self._ticker.setInterval(TICK_MS)
        self._ticker.timeout.connect(self.tick)
        self.reset(timeline or Timeline())

    @property
    def timeline(self) -> Timeline:
        return self._timeline

    # -- feeding ---------------------------------------------------------------

    def reset(self, timeline: Timeline) -> None:
        """Adapt `timeline` (the console's, at start), showing everything in it now."""
        self.beginResetModel()
        self._unwatch()
        self._timeline = timeline
        self._unwatch = timeline.watch(self._on_timeline_changed)
        self._inserted.clear()
        self._updated.clear()
        if self._changed_runs is not None:
            self._changed_runs.clear()  # everything is shown anew: its readers read it anew
        self._rows.reset(timeline)
        self.blockSignals(True)  # the reset says it all
        root = self.invisibleRootItem()
        root.removeRows(0, root.rowCount())
        self._items.clear()
        self._item_keys.clear()
        self._siblings.clear()
        self._build(None, root)
        self.blockSignals(False)
        now = self._clock()
        for keys, make in ((timeline.agents, AgentKey), (timeline.batches, BatchKey), (timeline.runs, RunKey)):
            for ident in keys:
                self._refresh(make(ident), now)
        self.endResetModel()
        self._keep_ticking()

    def _build(self, parent: NodeKey | None, item: QStandardItem) -> None:
        children = self._timeline.children(parent)
        if children:
            item.insertRows(0, len(children))
        for row, key in enumerate(children):
            if type(key) not in LEAVES:
                item.setChild(row, 0, self._new_item(key))
                self._build(key, self._items[key])

    def _new_item(self, key: NodeKey) -> QStandardItem:
        item = QStandardItem()
        item.setColumnCount(len(COLUMNS))
        self._items[key] = item
        self._item_keys[id(item)] = key
        return item

    def apply(self, event: Event) -> None:
        """Feed the timeline one event and show what it changed (for a model that owns its timeline)."""
        if event.seq and event.seq <= self._timeline.last_seq:
            return  # already in the timeline
        self._timeline.apply(event)
        self.flush()

    def _on_timeline_changed(self, changes: list[Inserted | Updated]) -> None:
        inserted = self._inserted
        for change in changes:
            if type(change) is Inserted:  # sorted as they come, not in one lump at the flush
                rows = inserted.get(change.parent)
                if rows is None:
                    inserted[change.parent] = [change]
                else:
                    rows.append(change)
            else:
                self._updated[change.key] = None
        if self.auto_flush and not self._flush_soon.isActive() and QCoreApplication.instance() is not None:
            self._flush_soon.start()

    def flush(self) -> None:
        """Tell Qt of every row inserted and updated since the last flush: one range insert per parent."""
        inserted, updated = self._inserted, self._updated
        if not inserted and not updated:
            return
        self._inserted, self._updated = {}, {}
        self._flush_soon.stop()
        now = self._clock()
        groups: set[NodeKey] = set()
        fresh: set[NodeKey] = set()
        self.flushing = True
        try:
            for parent, rows in inserted.items():  # one range insert per parent
                self._insert(rows, now, groups)
                if parent is not None:  # a run's group is the row it is inserted under: the windows are its parent's
                    groups.update(self._groups_of(parent))
                fresh.update(change.key for change in rows)
        finally:
            self.flushing = False
        if inserted:
            self.flushed.emit()
        above: list[NodeKey] = [parent for parent in inserted if parent is not None]
        changed = self._changed_runs
        for key in updated:
            if changed is not None and type(key) is RunKey:
                changed[key.call_id] = None  # told by a bridge (`take_changed_runs`)
            if key in fresh:
                continue  # prepared when it was inserted, as it is now
            if self._unshown(key):
                groups.update(self._groups_of(key))
                continue
            self._refresh(key, now)
            index = self._index(key)
            self.dataChanged.emit(index, index.siblingAtColumn(len(COLUMNS) - 1))
            groups.update(self._groups_of(key))
            if isinstance(key, RunKey):
                above.append(self._timeline.parent(key))  # type: ignore[arg-type]
        self._roll_up(above, fresh, updated)
        self._stretch(groups, now)
        if self._tick_due:
            self.tick()
        self._keep_ticking()

    def follow_runs(self) -> None:
        """Keep the runs each flush changed (their status, result, output, approval or undo), for
        `take_changed_runs`: a bridge tells them to the panels, once a batch."""
        if self._changed_runs is None:
            self._changed_runs = {}

    def take_changed_runs(self) -> list[str]:
        """The call ids of the runs flushes changed since the last time they were taken, in the order they first
        changed (empty unless `follow_runs`)."""
        if not self._changed_runs:
            return []
        runs = list(self._changed_runs)
        self._changed_runs.clear()
        return runs

    def _roll_up(self, parents: Iterable[NodeKey], *skip: Container[NodeKey]) -> None:
        """Refresh the roll-ups of these agents and batches (those above rows that came or changed) and of theirs:
        once each, a row in `skip` not at all (refreshed already), and a row only when its text moved (a streamed
        output changes no count)."""
        above: dict[NodeKey, None] = {}
        timeline = self._timeline
        for parent in parents:
            while parent is not None and parent not in above:
                above[parent] = None
                parent = timeline.parent(parent)  # type: ignore[assignment]
        now = self._clock()
        for key in above:
            if any(key in rows for rows in skip) or self._unshown(key):
                continue
            before = self._cells.get(key)
            self._refresh(key, now)
            if self._cells[key] != before:
                index = self._index(key)
                self.dataChanged.emit(index.siblingAtColumn(1), index.siblingAtColumn(STATUS_COLUMN))

    def _insert(self, rows: list[Inserted], now: datetime, groups: set[NodeKey]) -> None:
        """Rows appended under one parent: prepared, then shown as one insert; the windows a new agent or batch
        may stretch are added to `groups`."""
        parent = rows[0].parent
        runs, live = self._timeline.runs, self._live
        groups_rows: list[Inserted] = []
        for change in rows:
            key = change.key
            if type(key) is RunKey:  # what `_refresh` does for a run, less what a new row cannot have
                if not runs[key.call_id].status.final:
                    live.add(key)
            elif type(key) is not MessageKey:  # (a message's row is prepared when first painted, and never moves)
                groups_rows.append(change)
                if type(key) is AgentKey:  # a batch's row, like a run's, is prepared when first painted
                    self._refresh(key, now)
                groups.update(self._groups_of(key))
        if parent is not None and parent not in self._windows and not isinstance(parent, RunKey):
            self._windows[parent] = GanttWindow(self._timeline.window(parent, now))  # its runs' bars, to scale
        item = self._items[parent] if parent is not None else self.invisibleRootItem()
        item.insertRows(rows[0].row, len(rows))  # one rowsInserted
        if not groups_rows:
            return
        self.blockSignals(True)  # an agent's or a batch's item in its row: no change to tell of, the row is new
        try:
            for change in groups_rows:
                item.setChild(change.row, 0, self._new_item(change.key))
        finally:
            self.blockSignals(False)

    def tick(self) -> None:
        """Move "now" on: refresh the bars that end now and stretch their windows (the Timeline column only).
        While rows wait for a bridge's flush (a flood), the tick is left to that flush and shares its repaint: a
        tick of its own was one repaint in three under a flood, each some 8 ms at 1400x860."""
        if not self.auto_flush and (self._inserted or self._updated):
            self._tick_due = True
            return
        self._tick_due = False
        now = self._clock()
        groups: set[NodeKey] = set()
        for key in list(self._live):
            if not isinstance(key, RunKey):
                self._refresh(key, now)
            elif key in self._prepared:  # only a running call's bar moves with the clock; its cells stay
                self._rows.refresh_bar(key, now)
            groups.update(self._groups_of(key))
        self._stretch(groups, now, always=True)
        self._keep_ticking()

    def _stretch(self, groups: Iterable[NodeKey], now: datetime, *, always: bool = False) -> None:
        """Set these groups' window lengths; repaint the Timeline column of their rows when one moved."""
        for group in groups:
            window = self._windows.get(group)
            if window is None:
                continue
            length = self._timeline.window(group, now)
            if length == window.length and not always:
                continue
            window.length = length
            parent = self._index(group)
            rows = self.rowCount(parent)
            if rows:
                self.dataChanged.emit(self.index(0, TIMELINE_COLUMN, parent),
                                      self.index(rows - 1, TIMELINE_COLUMN, parent), [GANTT_ROLE])

    def _keep_ticking(self) -> None:
        if self._live and not self._ticker.isActive():
            if QCoreApplication.instance() is not None:  # no application, no event loop to tick in
                self._ticker.start()
        elif not self._live and self._ticker.isActive():
            self._ticker.stop()

    # -- keys and indexes ------------------------------------------------------

    def key_of(self, index: Index) -> NodeKey | None:
        if not index.isValid():
            return None
        # A view asks data() of each cell of each row it paints, several roles each: the rows under a parent
        # are found by the index's internal id (its parent's item, as QStandardItemModel makes indexes).
        pointer = index.internalId()
        siblings = self._siblings.get(pointer)
        if siblings is None:
            parent = index.parent()
            key = self._item_keys.get(id(self.itemFromIndex(parent))) if parent.isValid() else None
            siblings = self._siblings[pointer] = self._timeline.children(key)
        row = index.row()
        return siblings[row] if row < len(siblings) else None

    def told_children(self, key: NodeKey | None) -> list[NodeKey]:
        """The rows under `key` that Qt has been told of (not those waiting for the flush)."""
        return self._timeline.children(key)[:self.told_count(key)]

    def told_count(self, key: NodeKey | None) -> int:
        """How many rows under `key` Qt has been told of (0 for a run, or a row not told of yet)."""
        item = self._items.get(key) if key is not None else self.invisibleRootItem()
        return item.rowCount() if item is not None else 0

    def index_of(self, key: NodeKey | str, column: int = 0, *, flush: bool = True) -> QModelIndex:
        """The index of a row by its key (or a key's text, e.g. "r:<call id>"), after showing what is pending
        (with `flush`; without, the row must have been shown)."""
        if flush:
            self.flush()
        return self._index(parse_key(key), column)

    def _index(self, key: NodeKey, column: int = 0) -> QModelIndex:
        item = self._items.get(key)
        if item is not None:
            index = self.indexFromItem(item)
            return index if column == 0 else index.siblingAtColumn(column)
        parent = self._timeline.parent(key)
        return self.index(self._timeline.row(key), column, self._index(parent) if parent is not None else QModelIndex())

    # -- the item model ------------------------------------------------------------
    # index(), parent(), rowCount() and columnCount() are QStandardItemModel's, in C++ (see the module's docstring).
    # Agents' and batches' rows have an item, runs' rows an empty cell (`key_of` finds the key by the parent's item).

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if role not in _ANSWERED:  # a view asks seven roles of each cell it paints; most have no answer here
            return None
        return self.cell(self.key_of(index), index.column(), role)

    def cell(self, key: NodeKey | None, column: int, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        """What `data()` answers for the cell of `key`'s row in `column` (for a model listing the same rows)."""
        if key is None or (role == Qt.ItemDataRole.ForegroundRole and column != STATUS_COLUMN) or \
                (role == GANTT_ROLE and column != TIMELINE_COLUMN):
            return None
        if role == KEY_ROLE:
            return key
        if key not in self._cells:
            self._rows.prepare(key, self._clock())
        if role == Qt.ItemDataRole.DisplayRole:
            return self._cells[key][column]
        if role == GANTT_ROLE:
            return self._bars.get(key)
        if role == Qt.ItemDataRole.ToolTipRole:
            return (self._bar_tips if column == TIMELINE_COLUMN else self._tips).get(key)
        if role == Qt.ItemDataRole.ForegroundRole:
            status_role = self._brushes.get(key)
            return _brush(theme.current().name, status_role) if status_role else None
        if role == Qt.ItemDataRole.FontRole and isinstance(key, AgentKey):
            return self._bold_font()
        return None

    def painted_row(self, index: Index) -> Painted | None:
        return self.painted(self.key_of(index))

    def painted(self, key: NodeKey | None) -> Painted | None:
        """What a row shows, for the delegates and a view that paints a row whole (`gui.window.timeline.view`):
        its columns' texts, its status's theme colour, whether bold (an agent), its Gantt bar, its depth."""
        if key is None:
            return None
        if key not in self._cells:
            self._rows.prepare(key, self._clock())
        depth, parent, timeline = 0, self._timeline.parent(key), self._timeline
        while parent is not None:
            depth, parent = depth + 1, timeline.parent(parent)
        return self._cells[key], self._brushes.get(key), isinstance(key, AgentKey), self._bars.get(key), depth

    @staticmethod
    def bold_font(base: QFont) -> QFont:
        """`base`, bold: how an agent's row is written."""
        bold = QFont(base)
        bold.setBold(True)
        return bold

    def _bold_font(self) -> QFont:
        if self._bold is None:  # made on first use: a QFont wants the application to exist
            self._bold = self.bold_font(QFont())
        return self._bold

    def headerData(self, section: int, orientation: Qt.Orientation,
                   role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section]
        return None

    def __repr__(self) -> str:
        return (f"<TimelineModel agents={len(self._timeline.agents)} batches={len(self._timeline.batches)} "
                f"runs={len(self._timeline.runs)} live={len(self._live)} "
                f"pending={sum(map(len, self._inserted.values()))}"
                f"+{len(self._updated)}>")
