"""The inbox: every call waiting for the person in this workspace, from every agent and sub-agent, in one list.

Each row says which agent asks (with its branch, e.g. "lead › frontend"), the tool, its target, the
impact, how long it has waited and, when it has a deadline, how long is left.  The row chosen here is
the one the approval panel shows; J / K (and the arrow keys) move through the list.  A request's
deadline is fixed when it is asked (its event's time plus its timeout), so the countdown is the same
here, in the panel, and when the request reaches the front.  The Target column takes the width the
others leave; where that is short of `MIN_TARGET` (a 1024-pixel hub) the Waiting column steps aside and
the Agent column narrows, and the Left column shows only while some request has a deadline: no column
is cut off at the edge.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

from PySide6.QtCore import QModelIndex, Qt, Signal
from PySide6.QtGui import QHideEvent, QKeyEvent, QResizeEvent
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTreeView, QWidget

from core import ApprovalRequested
from gui.window.kit import theme
from gui.window.kit.list_model import ListModel

LIVE_COLUMNS = (4, 5)
"""The columns that change by themselves as time passes."""
WIDTHS = (150, 70, 0, 60, 70, 90)
"""Agent, Tool, Target (the rest), Impact, Waiting, Left."""
TARGET, WAITING, LEFT = 2, 4, 5
MIN_TARGET = 100
"""The Target column's narrowest before the Waiting column steps aside and the Agent column narrows."""
MIN_AGENT = 90
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


class InboxModel(ListModel[ApprovalRequested]):
    """The waiting requests, oldest first, as rows."""

    COLUMNS = ("Agent", "Tool", "Target", "Impact", "Waiting", "Left")

    def __init__(self, path_of: Callable[[str], str], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._path_of = path_of

    def cell(self, request: ApprovalRequested, column: int, role: int) -> object:
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.AccessibleTextRole):
            return self._text(request, column)
        if role == Qt.ItemDataRole.ToolTipRole:
            return f"{self._path_of(request.agent_id)}: {request.tool} {request.summary}\n{request.reason}"
        if role == Qt.ItemDataRole.ForegroundRole and column == 3:
            colour = IMPACT_COLOURS.get(request.impact.level)
            return theme.qcolour(colour) if colour else None
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
        self.append(request)

    def remove(self, call_id: str) -> None:
        self.remove_first(lambda request: request.call_id == call_id)

    def row_of(self, call_id: str) -> int | None:
        return self.find(lambda request: request.call_id == call_id)

    def tick(self) -> None:
        """Time passed: the age and countdown cells of every row (a handful) are due again."""
        self.columns_changed(LIVE_COLUMNS[0], LIVE_COLUMNS[-1])


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
        header = self.header()
        header.setStretchLastSection(False)
        for column, width in enumerate(WIDTHS):
            if column != TARGET:
                self.setColumnWidth(column, width)
        header.setSectionResizeMode(TARGET, QHeaderView.ResizeMode.Stretch)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)  # columns step aside instead
        for signal in (model.rowsInserted, model.rowsRemoved, model.modelReset):
            signal.connect(self._fit_columns)
            signal.connect(self._fit_height)
        self._fit_height()
        self.selectionModel().currentChanged.connect(self._on_current_changed)

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        self._fit_columns()

    def _fit_height(self, *_: object) -> None:
        """The header and a row per request, two at least, six at most (more scroll): at 640 pixels every line
        this list does not need is a line of the diff below it."""
        measured = self.sizeHintForRow(0)  # -1 while there is no row
        rows = measured if measured > 0 else self.fontMetrics().height() + 6
        header = self.header().sizeHint().height()
        self.setFixedHeight(header + rows * min(max(self.model().rowCount(), 2), 6) + 2 * self.frameWidth() + 2)

    def _fit_columns(self, *_: object) -> None:
        """Left while a request has a deadline; Waiting while Target keeps MIN_TARGET."""
        model = self.model()
        timed = isinstance(model, InboxModel) and any(deadline(r) is not None for r in model.rows)
        self.setColumnHidden(LEFT, not timed)
        others = sum(w for c, w in enumerate(WIDTHS) if c not in (0, TARGET, WAITING) and not self.isColumnHidden(c))
        room = self.viewport().width() - others - MIN_TARGET  # for Agent and Waiting
        self.setColumnHidden(WAITING, room - WIDTHS[WAITING] < MIN_AGENT)
        shown = 0 if self.isColumnHidden(WAITING) else WIDTHS[WAITING]
        self.setColumnWidth(0, max(MIN_AGENT, min(WIDTHS[0], room - shown)))  # "lead › fr…": its tooltip has it

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 - Qt override
        step = {Qt.Key.Key_J: 1, Qt.Key.Key_K: -1}.get(Qt.Key(event.key()))
        if step is not None and not event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier:
            rows = self.model().rowCount()
            if rows:
                row = min(max(self.currentIndex().row() + step, 0), rows - 1)
                self.setCurrentIndex(self.model().index(row, 0))
            return
        super().keyPressEvent(event)

    def hideEvent(self, event: QHideEvent) -> None:  # noqa: N802 - Qt override
        """Hidden with the focus (one request left), it hands the focus to the panel, where J / K still work;
        Qt would pass it on to the next widget, the reason box, where J and K would type letters."""
        parent = self.parentWidget()
        if self.hasFocus() and parent is not None:
            parent.setFocus(Qt.FocusReason.OtherFocusReason)
        super().hideEvent(event)

    def _on_current_changed(self, current: QModelIndex, previous: QModelIndex) -> None:
        model = self.model()
        request = model.item(current) if isinstance(model, InboxModel) else None
        if request is not None:
            self.chosen.emit(request.call_id)

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

