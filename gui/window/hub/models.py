"""The hub's two lists: the supervised workspaces (with what waits and runs in each) and every waiting request."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont

from gui.window.kit.list_model import ListModel

if TYPE_CHECKING:  # a workspace's page (and the core's models) load when one opens: the hub paints first
    from core import ApprovalRequested
    from gui.window.workspace.window import MainWindow


@dataclass
class WorkspaceRow:
    """One supervised workspace and its page."""

    root: Path
    page: MainWindow
    waiting: int = 0
    running: int = 0
    host: str | None = None
    """The host of a console attached over ssh (None: this machine's)."""
    where: str = ""
    """How it was reached (ssh://host/path), for the tooltip."""

    @property
    def name(self) -> str:
        name = self.root.name or str(self.root)
        return f"{name} on {self.host}" if self.host else name

    @property
    def state(self) -> str:
        """"2 waiting · 1 agent running", or "idle"."""
        parts = [f"{self.waiting} waiting"] if self.waiting else []
        parts.append(f"{self.running} agent{'s' * (self.running != 1)} running" if self.running else "idle")
        return " · ".join(parts)


class WorkspacesModel(ListModel[WorkspaceRow]):
    """The supervised workspaces, in the order they were opened: name, waiting count, running agents."""

    def cell(self, row: WorkspaceRow, column: int, role: int) -> object:
        if role == Qt.ItemDataRole.DisplayRole:
            return f"{row.name}\n{row.state}"
        if role == Qt.ItemDataRole.ToolTipRole:
            return row.where or str(row.root)
        if role == Qt.ItemDataRole.FontRole and row.waiting:
            font = QFont()
            font.setBold(True)
            return font
        if role == Qt.ItemDataRole.AccessibleTextRole:
            return f"{row.name}: {row.state}"
        return None

    def add(self, row: WorkspaceRow) -> int:
        return self.append(row)

    def set_counts(self, page: MainWindow, waiting: int, running: int) -> None:
        number = self.find(lambda row: row.page is page)
        if number is not None and (self.rows[number].waiting, self.rows[number].running) != (waiting, running):
            self.rows[number].waiting, self.rows[number].running = waiting, running
            self.changed(number)


@dataclass(frozen=True)
class WaitingRow:
    """A request waiting in one of the workspaces, and the line the hub shows for it."""

    page: MainWindow
    request: ApprovalRequested
    line: str


class WaitingModel(ListModel[WaitingRow]):
    """Every request waiting for the person, in every workspace, oldest first."""

    def cell(self, row: WaitingRow, column: int, role: int) -> object:
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.AccessibleTextRole):
            return row.line
        if role == Qt.ItemDataRole.ToolTipRole:
            return f"{row.line}\n{row.request.reason}"
        return None

    def add(self, page: MainWindow, request: ApprovalRequested, line: str) -> None:
        if self.find(lambda row: row.request.call_id == request.call_id) is None:
            self.append(WaitingRow(page, request, line))

    def remove(self, call_id: str) -> None:
        self.remove_first(lambda row: row.request.call_id == call_id)
