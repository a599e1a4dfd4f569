"""The timeline's column widths: set once, the Call column widened to the deepest agent's name, and the
Summary column narrowed (never below `MIN_SUMMARY`) so the Status column is seen without scrolling."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject, QTimer, Signal
from PySide6.QtWidgets import QWidget

from core import Timeline
from gui.window.timeline.filter import call_column_width
from gui.window.timeline.gantt import COLUMN_WIDTH
from gui.window.timeline.model import STATUS_COLUMN, TIMELINE_COLUMN
from gui.window.timeline.view import TimelineView

SUMMARY_COLUMN = 1
MIN_SUMMARY = 120
WIDTHS = (150, 215, 190, 56, 64)
"""Call, Summary (room for "201 calls · 1 waiting · 9 failed"), Status, Duration, Changed."""


class ResizeWatch(QObject):
    """Lives on a widget and says when it was resized (it dies with the widget: no filter outlives its target).

    Signals:
        resized: the watched widget's size changed.
    """

    resized = Signal()

    def __init__(self, watched: QWidget) -> None:
        super().__init__(watched)
        watched.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        if event.type() == QEvent.Type.Resize:
            self.resized.emit()
        return False


class ColumnFit(QObject):
    """Keeps the timeline's columns readable as agents come and the view narrows."""

    def __init__(self, tree: TimelineView, timeline: Callable[[], Timeline]) -> None:
        """`timeline`: the read model the tree shows now (a resync replaces it)."""
        super().__init__(tree)
        self._tree, self._timeline = tree, timeline
        self._soon = QTimer(self)
        self._soon.setSingleShot(True)
        self._soon.setInterval(0)
        self._soon.timeout.connect(self._fit_status_column)
        ResizeWatch(tree.viewport()).resized.connect(self._soon.start)  # a narrower timeline

    def reset(self) -> None:
        """Every column at its starting width, then fitted."""
        for column, width in enumerate(WIDTHS):
            self._tree.setColumnWidth(column, width)
        self._tree.setColumnWidth(TIMELINE_COLUMN, COLUMN_WIDTH)
        self.fit_call_column()

    def fit_call_column(self) -> None:
        """Wide enough for the deepest agent's name; never narrower than the person made it."""
        self._tree.setColumnWidth(0, max(self._tree.columnWidth(0), call_column_width(self._tree, self._timeline())))
        self._soon.start()

    def _fit_status_column(self) -> None:
        status_end = self._tree.header().sectionPosition(STATUS_COLUMN) + self._tree.columnWidth(STATUS_COLUMN)
        over = status_end - self._tree.viewport().width()
        summary = self._tree.columnWidth(SUMMARY_COLUMN)
        if over > 0 and summary > MIN_SUMMARY:
            self._tree.setColumnWidth(SUMMARY_COLUMN, max(MIN_SUMMARY, summary - over))
