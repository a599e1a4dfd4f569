"""The timeline's column widths: set once, the Call column widened to the deepest agent's name, the Summary
column narrowed (never below `MIN_SUMMARY`) so the Status column is seen without scrolling, and the columns of
less weight (Changed, Duration, the Timeline's bars, in that order of keeping) shown only where they fit
whole: a narrow timeline (a 1024-pixel hub with a request waiting) hides them rather than cut them."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject, QTimer, Signal
from PySide6.QtWidgets import QWidget

from core import Timeline
from gui.window.timeline.filter import call_column_width
from gui.window.timeline.gantt import COLUMN_WIDTH
from gui.window.timeline.model import STATUS_COLUMN, TIMELINE_COLUMN
from gui.window.timeline.rows import STATUS_TEXT
from gui.window.timeline.view import TimelineView

SUMMARY_COLUMN = 1
DURATION_COLUMN = 3
CHANGED_COLUMN = 4
MIN_SUMMARY = 90
MIN_CALL = 80
"""The Call column's narrowest (before any agent's name widens it)."""
WIDTHS = (150, 215, 190, 56, 64)
"""Call, Summary (room for "201 calls · 1 waiting · 9 failed"), Status, Duration, Changed."""
OPTIONAL = (CHANGED_COLUMN, DURATION_COLUMN, TIMELINE_COLUMN)
"""The columns shown only where they fit whole, the first kept longest."""
STATUS_PADDING = 24
"""Pixels of a Status cell beside its text: the margins, and room for a bolder font."""
STARTING = {SUMMARY_COLUMN: WIDTHS[SUMMARY_COLUMN], STATUS_COLUMN: WIDTHS[STATUS_COLUMN],
            DURATION_COLUMN: WIDTHS[DURATION_COLUMN], CHANGED_COLUMN: WIDTHS[CHANGED_COLUMN],
            TIMELINE_COLUMN: COLUMN_WIDTH}


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
        self._wanted = dict(STARTING)
        """The widths the fitted columns take when there is room (set, or made by the person)."""
        self._fitting = False
        self._soon = QTimer(self)
        self._soon.setSingleShot(True)
        self._soon.setInterval(0)
        self._soon.timeout.connect(self._fit_columns)
        ResizeWatch(tree.viewport()).resized.connect(self._soon.start)  # a narrower timeline
        tree.header().sectionResized.connect(self._on_header_section_resized)

    def reset(self) -> None:
        """Every column at its starting width, then fitted; the Status column as wide as its longest word."""
        self._fitting = True
        self._wanted.update(STARTING)
        longest = max(self._tree.fontMetrics().horizontalAdvance(text) for text in STATUS_TEXT.values())
        self._wanted[STATUS_COLUMN] = min(WIDTHS[STATUS_COLUMN], longest + STATUS_PADDING)
        for column, width in enumerate(WIDTHS):
            self._tree.setColumnWidth(column, width)
        self._tree.setColumnWidth(TIMELINE_COLUMN, COLUMN_WIDTH)
        self._tree.setColumnWidth(STATUS_COLUMN, self._wanted[STATUS_COLUMN])
        self._tree.setColumnWidth(0, max(MIN_CALL, call_column_width(self._tree, self._timeline())))  # names' need
        self._fitting = False
        self.fit_call_column()

    def fit_call_column(self) -> None:
        """Wide enough for the deepest agent's name; never narrower than the person made it."""
        self._tree.setColumnWidth(0, max(self._tree.columnWidth(0), call_column_width(self._tree, self._timeline())))
        self._soon.start()

    def hidden_columns(self) -> list[int]:
        """The columns left out for want of room."""
        return [c for c in OPTIONAL if self._tree.header().isSectionHidden(c)]

    def _on_header_section_resized(self, column: int, _old: int, new: int) -> None:
        header = self._tree.header()
        last = max((c for c in range(header.count()) if not header.isSectionHidden(c)), key=header.visualIndex)
        if not self._fitting and column in self._wanted and new > 0 and column != last:  # the last is stretched
            self._wanted[column] = new  # the person's width, from now on

    def _fit_columns(self) -> None:
        """Summary at its least, then the optional columns in order while each fits whole, then what is left
        back to the Summary, up to the width it wants."""
        tree, header = self._tree, self._tree.header()
        room = tree.viewport().width() - tree.columnWidth(0) - self._wanted[STATUS_COLUMN] - MIN_SUMMARY
        self._fitting = True
        try:
            for column in OPTIONAL:
                fits = room >= self._wanted[column]
                if fits:
                    room -= self._wanted[column]
                if header.isSectionHidden(column) == fits:
                    header.setSectionHidden(column, not fits)
                    if fits:
                        tree.setColumnWidth(column, self._wanted[column])
            tree.setColumnWidth(SUMMARY_COLUMN, max(MIN_SUMMARY, min(self._wanted[SUMMARY_COLUMN],
                                                                     MIN_SUMMARY + max(room, 0))))
            if not header.stretchLastSection() or not all(header.isSectionHidden(c) for c in OPTIONAL):
                tree.setColumnWidth(STATUS_COLUMN, self._wanted[STATUS_COLUMN])
        finally:
            self._fitting = False
