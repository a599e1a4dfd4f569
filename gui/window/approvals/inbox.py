"""The inbox: every call waiting for the person in this workspace, from every agent and sub-agent, in one list.

Each row says which agent asks (with its branch, e.g. "lead › frontend"), the tool, its target, the
impact, how long it has waited and, when it has a deadline, how long is left.  The row chosen here is
the one the approval panel shows; J / K (and the arrow keys) move through the list.  A request's
deadline is fixed when it is asked (its event's time plus its timeout), so the countdown is the same
here, in the panel, and when the request reaches the front.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QAbstractItemView, QTreeView, QWidget

from core import ApprovalRequested
from gui.window.kit import theme

Index = QModelIndex | QPersistentModelIndex
COLUMNS = ("Agent", "Tool", "Target", "Impact", "Waiting", "Left")
LIVE_COLUMNS = (4, 5)
"""The columns that change by themselves as time passes."""
IMPACT_COLOURS = {"high": "danger", "medium": "warning"}
"""Theme roles of the Impact column's text."""


def deadline(request: ApprovalRequested) -> float | None:
    """When the request's timeout applies, on the wall clock (seconds since the epoch); None: it waits for ever."""
    return request.at.timestamp() + request.timeout_s if request.timeout_s else None


def seconds_left(request: ApprovalRequested, now: float | None = None) -> int | None:
    due = deadline(request)
    return None if due is None else max(0, math.ceil(due - (time.time() if now is None else now)))


def waited(request: ApprovalRequested, now: float | None = None) -> str:
    seconds = max(0, int((time.time() if now is None else now) - request.at.timestamp()))
    return f"{seconds} s" if seconds < 60 else f"{seconds // 60} min {seconds % 60:02d} s" if seconds < 3600 else \
        f"{seconds // 3600} h {seconds // 60 % 60:02d} min"


class InboxModel(QAbstractTableModel):
    """The waiting requests, oldest first, as rows."""

    def __init__(self, path_of: Callable[[str], str], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._path_of = path_of
        self.requests: list[ApprovalRequested] = []

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: N802 - Qt override
        return 0 if parent.isValid() else len(self.requests)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: N802 - Qt override
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation,  # noqa: N802 - Qt override
                   role: int = Qt.ItemDataRole.DisplayRole) -> object:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole \
                and 0 <= section < len(COLUMNS):
            return COLUMNS[section]
        return None

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        if not index.isValid() or not 0 <= index.row() < len(self.requests):
            return None
        request, column = self.requests[index.row()], index.column()
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.AccessibleTextRole):
            return self._text(request, column)
        if role == Qt.ItemDataRole.ToolTipRole:
            return f"{self._path_of(request.agent_id)}: {request.tool} {request.summary}\n{request.reason}"
        if role == Qt.ItemDataRole.ForegroundRole and column == 3:
            role = IMPACT_COLOURS.get(request.impact.level)
            return theme.qcolour(role) if role else None
        return None

    def _text(self, request: ApprovalRequested, column: int) -> str:
        if column == 0:
            return str(self._path_of(request.agent_id))
        if column == 1:
            return request.tool
        if column == 2:
            return request.summary
        if column == 3:
            return request.impact.level
        if column == 4:
            return waited(request)
        left = seconds_left(request)
        if left is None:
            return ""
        return f"{'allowed' if request.on_timeout == 'allow' else 'denied'} in {left} s"

    def add(self, request: ApprovalRequested) -> None:
        self.beginInsertRows(QModelIndex(), len(self.requests), len(self.requests))
        self.requests.append(request)
        self.endInsertRows()

    def remove(self, call_id: str) -> None:
        for row, request in enumerate(self.requests):
            if request.call_id == call_id:
                self.beginRemoveRows(QModelIndex(), row, row)
                del self.requests[row]
                self.endRemoveRows()
                return

    def row_of(self, call_id: str) -> int | None:
        return next((row for row, r in enumerate(self.requests) if r.call_id == call_id), None)

    def tick(self) -> None:
        """Time passed: the age and countdown cells of every row (a handful) are due again."""
        if self.requests:
            self.dataChanged.emit(self.index(0, LIVE_COLUMNS[0]), self.index(len(self.requests) - 1, LIVE_COLUMNS[-1]),
                                  [Qt.ItemDataRole.DisplayRole])


class InboxView(QTreeView):
    """The inbox's list; J / K move like the arrow keys.

    Signals:
        chosen(str): the person moved to this request (its call id).
    """

    chosen = Signal(str)

    def __init__(self, model: InboxModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("inbox")
        self.setAccessibleName("Waiting requests")
        self.setRootIsDecorated(False)
        self.setUniformRowHeights(True)
        self.setAllColumnsShowFocus(True)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setModel(model)
        for column, width in enumerate((150, 70, 220, 60, 70, 90)):
            self.setColumnWidth(column, width)
        rows = self.fontMetrics().height() + 6
        self.setMinimumHeight(rows * 4 + 8)  # the header and three rows at least, at most six
        self.setMaximumHeight(rows * 7 + 8)
        self.selectionModel().currentChanged.connect(self._on_current_changed)

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 - Qt override
        step = {Qt.Key.Key_J: 1, Qt.Key.Key_K: -1}.get(Qt.Key(event.key()))
        if step is not None and not event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier:
            rows = self.model().rowCount()
            if rows:
                row = min(max(self.currentIndex().row() + step, 0), rows - 1)
                self.setCurrentIndex(self.model().index(row, 0))
            return
        super().keyPressEvent(event)

    def _on_current_changed(self, current: QModelIndex, previous: QModelIndex) -> None:
        model = self.model()
        if current.isValid() and isinstance(model, InboxModel) and current.row() < len(model.requests):
            self.chosen.emit(model.requests[current.row()].call_id)

    def show_current(self, call_id: str | None) -> None:
        """Follow the panel: select the request it shows, without announcing it back."""
        model = self.model()
        row = model.row_of(call_id) if isinstance(model, InboxModel) and call_id else None
        if row is None or self.currentIndex().row() == row:
            return
        self.blockSignals(True)
        self.selectionModel().blockSignals(True)
        try:
            self.setCurrentIndex(model.index(row, 0))
        finally:
            self.selectionModel().blockSignals(False)
            self.blockSignals(False)
        self.viewport().update()

