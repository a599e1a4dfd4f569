"""The rules in force as a Qt table: a thin adapter over the console's list of rule entries.

Each row is one `RuleEntry` (rule, action, layer, the file that keeps it).
Display strings are worked out once when the rules arrive, so `data()` only
looks them up.  The whole table is replaced when the console announces a
new rule set; views that care about their selection restore it by `key`.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import Qt

from core import RuleEntry
from gui.window.kit import theme
from gui.window.kit.list_model import ListModel

ENTRY_ROLE = Qt.ItemDataRole.UserRole + 1
"""The row's `RuleEntry`."""
ACTION_COLOURS = {"allow": "success", "ask": "warning", "deny": "danger"}
"""Theme roles of the Action column's text."""
LAYERS = {"user": "user (all workspaces)", "workspace": "workspace", "session": "session"}
RuleKey = tuple[str, str, str]
"""What identifies a rule across updates: (rule, action, scope)."""


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


@dataclass(frozen=True)
class RuleRow:
    """One rule as the table shows it: its entry, and its cells and tooltip worked out when the rules arrived."""

    entry: RuleEntry
    cells: tuple[str, str, str, str]
    tip: str


class RulesModel(ListModel[RuleRow]):
    """Rules in force, user layer first (the console's order)."""

    COLUMNS = ("Rule", "Action", "Layer", "Kept in")

    def __init__(self, workspace: Path) -> None:
        super().__init__()
        self._workspace = workspace

    def set_rules(self, rules: Sequence[RuleEntry]) -> None:
        self.replace_all(RuleRow(e, (e.rule, e.action, LAYERS[e.scope], kept_in(e, self._workspace)), _tooltip(e))
                         for e in rules)

    def entry(self, row: int) -> RuleEntry | None:
        return self.rows[row].entry if 0 <= row < len(self.rows) else None

    def row_of(self, key: RuleKey) -> int:
        """The row holding the rule with this key, or -1."""
        row = self.find(lambda r: rule_key(r.entry) == key)
        return -1 if row is None else row

    def keys(self) -> list[RuleKey]:
        return [rule_key(r.entry) for r in self.rows]

    def cell(self, row: RuleRow, column: int, role: int) -> object:
        if role == Qt.ItemDataRole.DisplayRole:
            return row.cells[column]
        if role == Qt.ItemDataRole.ToolTipRole:
            return row.tip
        if role == Qt.ItemDataRole.ForegroundRole and column == 1:
            return theme.qcolour(ACTION_COLOURS[row.entry.action])
        if role == ENTRY_ROLE:
            return row.entry
        return None
