"""The timeline as a Qt item model: a thin adapter over `core.Timeline`.

Rows are agents (collapsible) and their tool runs; sub-agents are agent rows
under their parent.  All the state lives in the Qt-free read model; this
class maps node keys to indexes and values to roles, and turns the read
model's inserts and updates into Qt's signals.  `data()` computes nothing.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QAbstractItemModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QBrush, QColor, QFont

from core import AgentNode, Event, NodeKey, RunNode, RunStatus, Timeline, Updated, agent_key, run_key

Index = QModelIndex | QPersistentModelIndex
KEY_ROLE = Qt.ItemDataRole.UserRole + 1
COLUMNS = ("Call", "Summary", "Status", "Duration", "Changed")

STATUS_TEXT = {
    RunStatus.QUEUED: "… queued",
    RunStatus.BLOCKED_ON_USER: "◐ waiting for approval",
    RunStatus.RUNNING: "● running",
    RunStatus.DONE: "✓ done",
    RunStatus.FAILED: "✗ failed",
    RunStatus.DENIED: "⊘ denied",
    RunStatus.CANCELLED: "■ cancelled",
    RunStatus.TIMED_OUT: "✗ timed out",
    RunStatus.INTERRUPTED: "⚠ interrupted",
    RunStatus.SKIPPED: "↷ skipped",
}
STATUS_COLOR = {
    RunStatus.BLOCKED_ON_USER: "#b36b00",
    RunStatus.RUNNING: "#1f6feb",
    RunStatus.DONE: "#1a7f37",
    RunStatus.FAILED: "#cf222e",
    RunStatus.DENIED: "#8250df",
    RunStatus.TIMED_OUT: "#cf222e",
    RunStatus.INTERRUPTED: "#9a6700",
    RunStatus.SKIPPED: "#6e7781",
}


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return ""
    return f"{seconds * 1000:.0f} ms" if seconds < 1 else f"{seconds:.1f} s"


def changed_text(run: RunNode) -> str:
    """What a run changed, in a few words: "312 files · 1 commit", with how much of it is undone."""
    parts = []
    if run.changes:
        n = len(run.changes)
        parts.append(f"{n} file{'s' if n != 1 else ''}")
    if run.git_changes:
        n = len(run.git_changes)
        parts.append(f"{n} git ref{'s' if n != 1 else ''}")
    text = " · ".join(parts)
    if run.undone_paths and not run.undone_by:
        text += f" ({len(run.undone_paths)} undone)"
    return text


def _run_columns(run: RunNode) -> tuple[str, ...]:
    if run.undone_by:
        status = "↶ undone"
    elif run.undone_paths:
        status = "↶ partly undone"
    else:
        status = STATUS_TEXT[run.status]
    return run.tool, run.summary, status, _duration(run.duration_s), changed_text(run)


def _agent_columns(agent: AgentNode, parent: AgentNode | None) -> tuple[str, ...]:
    if parent is not None:
        role = f"sub-agent of {parent.name}"
    else:
        role = f"{agent.agent_kind} agent"
    return agent.name, role, agent.status.value, "", ""


class TimelineModel(QAbstractItemModel):
    """Agents and runs as a tree of rows, four columns."""

    def __init__(self, timeline: Timeline | None = None, parent: Any = None) -> None:
        super().__init__(parent)
        self._timeline = Timeline()
        self._ids: dict[NodeKey, int] = {}
        self._keys: list[NodeKey] = [""]  # id 0 is never used: it reads as "no pointer"
        self._cells: dict[NodeKey, tuple[str, ...]] = {}
        self.reset(timeline or Timeline())

    @property
    def timeline(self) -> Timeline:
        return self._timeline

    # -- feeding ---------------------------------------------------------------

    def reset(self, timeline: Timeline) -> None:
        """Show a fresh snapshot (at start, and after the bus said we lagged)."""
        self.beginResetModel()
        self._timeline = timeline
        timeline.before_insert = self._before_insert
        timeline.after_insert = self._after_insert
        self._ids.clear()
        del self._keys[1:]
        self._cells.clear()
        for key in list(timeline.agents):
            self._refresh(agent_key(key))
        for key in list(timeline.runs):
            self._refresh(run_key(key))
        self.endResetModel()

    def apply(self, event: Event) -> None:
        if event.seq and event.seq <= self._timeline.last_seq:
            return  # already in the snapshot
        for change in self._timeline.apply(event):
            if isinstance(change, Updated):
                self._refresh(change.key)
                index = self.index_of(change.key)
                self.dataChanged.emit(index, index.siblingAtColumn(len(COLUMNS) - 1))

    def _before_insert(self, parent: NodeKey | None, row: int) -> None:
        self.beginInsertRows(self.index_of(parent) if parent else QModelIndex(), row, row)

    def _after_insert(self, key: NodeKey) -> None:
        self._refresh(key)
        self.endInsertRows()

    def _refresh(self, key: NodeKey) -> None:
        if key.startswith("r:"):
            self._cells[key] = _run_columns(self._timeline.runs[key[2:]])
        else:
            agent = self._timeline.agents[key[2:]]
            parent = self._timeline.agents.get(agent.parent_id or "")
            self._cells[key] = _agent_columns(agent, parent)

    # -- keys and indexes ------------------------------------------------------

    def _id(self, key: NodeKey) -> int:
        ident = self._ids.get(key)
        if ident is None:
            ident = self._ids[key] = len(self._keys)
            self._keys.append(key)
        return ident

    def key_of(self, index: Index) -> NodeKey | None:
        if not index.isValid():
            return None
        return self._keys[index.internalId()]

    def index_of(self, key: NodeKey, column: int = 0) -> QModelIndex:
        return self.createIndex(self._timeline.row(key), column, self._id(key))

    # -- QAbstractItemModel ------------------------------------------------------

    def index(self, row: int, column: int, parent: Index = QModelIndex()) -> QModelIndex:
        if not self.hasIndex(row, column, parent):
            return QModelIndex()
        children = self._timeline.children(self.key_of(parent))
        return self.createIndex(row, column, self._id(children[row]))

    def parent(self, index: Index = QModelIndex()) -> QModelIndex:  # type: ignore[override]
        key = self.key_of(index)
        if key is None:
            return QModelIndex()
        parent = self._timeline.parent(key)
        return self.index_of(parent) if parent is not None else QModelIndex()

    def rowCount(self, parent: Index = QModelIndex()) -> int:
        if parent.column() > 0:
            return 0
        return len(self._timeline.children(self.key_of(parent)))

    def columnCount(self, parent: Index = QModelIndex()) -> int:
        return len(COLUMNS)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        key = self.key_of(index)
        if key is None:
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return self._cells[key][index.column()]
        if role == KEY_ROLE:
            return key
        if role == Qt.ItemDataRole.FontRole and key.startswith("a:"):
            font = QFont()
            font.setBold(True)
            return font
        if role == Qt.ItemDataRole.ForegroundRole and index.column() == 2 and key.startswith("r:"):
            run = self._timeline.runs[key[2:]]
            color = "#6e7781" if run.undone_by or run.undone_paths else STATUS_COLOR.get(run.status)
            return QBrush(QColor(color)) if color else None
        if role == Qt.ItemDataRole.ToolTipRole and key.startswith("r:"):
            run = self._timeline.runs[key[2:]]
            return run.error.message if run.error else run.call_id
        return None

    def headerData(self, section: int, orientation: Qt.Orientation,
                   role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section]
        return None

    def __repr__(self) -> str:
        return f"<TimelineModel agents={len(self._timeline.agents)} runs={len(self._timeline.runs)}>"
