"""The rules in force as a Qt table: a thin adapter over the console's list of rule entries.

Each row is one `RuleEntry` (rule, action, layer, the file that keeps it).
Display strings are worked out once when the rules arrive, so `data()` only
looks them up.  The whole table is replaced when the console announces a
new rule set; views that care about their selection restore it by `key`.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt

from core import RuleEntry
from gui.window.kit import theme

COLUMNS = ("Rule", "Action", "Layer", "Kept in")
ENTRY_ROLE = Qt.ItemDataRole.UserRole + 1
"""The row's `RuleEntry`."""
ACTION_COLOURS = {"allow": "success", "ask": "warning", "deny": "danger"}
"""Theme roles of the Action column's text."""
LAYERS = {"user": "user (all workspaces)", "workspace": "workspace", "session": "session"}
RuleKey = tuple[str, str, str]
"""What identifies a rule across updates: (rule, action, scope)."""

_Index = QModelIndex | QPersistentModelIndex


def rule_key(entry: RuleEntry) -> RuleKey:
    return entry.rule, entry.action, entry.scope


def kept_in(entry: RuleEntry, workspace: Path) -> str:
    """Where the rule lives, short: relative to the workspace or the home directory."""
    if entry.source is None:
        return "this session only (not saved)"
    path = entry.source
    if path.is_relative_to(workspace):
        return str(path.relative_to(workspace))
    home = Path(os.path.expanduser("~"))
    return f"~/{path.relative_to(home)}" if path.is_relative_to(home) else str(path)


def _tooltip(entry: RuleEntry) -> str:
    lines = [f"{entry.action} {entry.rule}", f"Layer: {LAYERS[entry.scope]}",
             f"File: {entry.source}" if entry.source else "Kept in memory until Belay closes"]
    if entry.timeout_s is not None:
        lines.append(f"An approval it asks for waits {entry.timeout_s:g} s, then: {entry.on_timeout or 'deny'}")
    return "\n".join(lines)


class RulesModel(QAbstractTableModel):
    """Rules in force, user layer first (the console's order)."""

    def __init__(self, workspace: Path) -> None:
        super().__init__()
        self._workspace = workspace
        self._entries: list[RuleEntry] = []
        self._cells: list[tuple[str, str, str, str]] = []
        self._tips: list[str] = []

    def set_rules(self, rules: Sequence[RuleEntry]) -> None:
        self.beginResetModel()
        self._entries = list(rules)
        self._cells = [(e.rule, e.action, LAYERS[e.scope], kept_in(e, self._workspace)) for e in self._entries]
        self._tips = [_tooltip(e) for e in self._entries]
        self.endResetModel()

    def entry(self, row: int) -> RuleEntry | None:
        return self._entries[row] if 0 <= row < len(self._entries) else None

    def row_of(self, key: RuleKey) -> int:
        """The row holding the rule with this key, or -1."""
        return next((row for row, e in enumerate(self._entries) if rule_key(e) == key), -1)

    def keys(self) -> list[RuleKey]:
        return [rule_key(e) for e in self._entries]

    # -- QAbstractTableModel -------------------------------------------------------

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: N802 - Qt override
        return 0 if parent.isValid() else len(self._entries)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: N802 - Qt override
        return 0 if parent.isValid() else len(COLUMNS)

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        if not index.isValid():
            return None
        row, column = index.row(), index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return self._cells[row][column]
        if role == Qt.ItemDataRole.ToolTipRole:
            return self._tips[row]
        if role == Qt.ItemDataRole.ForegroundRole and column == 1:
            return theme.qcolour(ACTION_COLOURS[self._entries[row].action])
        if role == ENTRY_ROLE:
            return self._entries[row]
        return None

    def headerData(self, section: int, orientation: Qt.Orientation,  # noqa: N802 - Qt override
                   role: int = Qt.ItemDataRole.DisplayRole) -> object:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole \
                and 0 <= section < len(COLUMNS):
            return COLUMNS[section]
        return None

    def flags(self, index: _Index) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable | Qt.ItemFlag.ItemNeverHasChildren

    def __repr__(self) -> str:
        return f"<RulesModel rows={len(self._entries)}>"
