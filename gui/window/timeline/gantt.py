"""The timeline's Gantt column: one thin bar per call showing when it waited, asked, ran, and how it ended.

The model hands each row a `GanttBar` under `GANTT_ROLE`: the row's span,
precomputed from the read model (`core.GanttSpan`, seconds from
its group's start), and the `GanttWindow` it is drawn in, which every row
of the group (a batch, or an agent's own calls) shares.  While the group is
at work its window ends "now": the model stretches the one shared window in
place, so finished rows rescale without being recomputed.  Painting only
scales the precomputed seconds to pixels and fills a few rectangles.

Colours: grey while queued (waiting for dependencies or a slot), amber while
waiting for approval, blue while running; once finished the running part is
green (done), red (failed, timed out, interrupted) or dark grey (skipped,
denied, cancelled).  A call that never ran ends in a short tick; a cached
result is a short hatched, outlined mark.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from PySide6.QtCore import QModelIndex, QObject, QPersistentModelIndex, QRect, QRectF, QSize, Qt
from PySide6.QtGui import QBrush, QColor, QPainter, QPalette, QPen
from PySide6.QtWidgets import QStyledItemDelegate, QStyleOptionViewItem

from core import GanttSpan, RunStatus
from gui.window.kit import theme
from gui.window.timeline.item_paint import paint_focus, paint_panel, row_state

GANTT_ROLE = Qt.ItemDataRole.UserRole + 2
"""The role under which the timeline model gives a row's `GanttBar` (None for agent rows)."""
COLUMN_WIDTH = 160
PAD = 4
BAR_HEIGHT = 6
MIN_RUN_PX = 2.0
CACHED_PX = 8.0
MIN_WINDOW_S = 0.001

QUEUED = "chart_queued"
"""Theme roles (gui/window/kit/theme.py) of the bar's parts; looked up when painting, so a theme switch shows."""
APPROVAL = "waiting_border"
RUNNING = "running"
AXIS = "chart_axis"
OUTCOME = {
    RunStatus.DONE: "success",
    RunStatus.FAILED: "danger",
    RunStatus.TIMED_OUT: "danger",
    RunStatus.INTERRUPTED: "danger",
    RunStatus.SKIPPED: "muted",
    RunStatus.DENIED: "muted",
    RunStatus.CANCELLED: "muted",
    RunStatus.QUEUED: QUEUED,
    RunStatus.BLOCKED_ON_USER: APPROVAL,
    RunStatus.RUNNING: RUNNING,
}


class GanttWindow:
    """A group's time axis in seconds, shared by all its rows; stretched in place while the group is at work."""

    __slots__ = ("length",)

    def __init__(self, length: float = 0.0) -> None:
        self.length = length

    def __repr__(self) -> str:
        return f"<GanttWindow {self.length:.2f} s>"


@dataclass(frozen=True, slots=True)
class GanttBar:
    """One row's bar: its span and the window it is drawn in."""

    span: GanttSpan
    window: GanttWindow


def describe(span: GanttSpan) -> str:
    """The bar in words, for its tooltip: "queued 0.00 s · waited for approval 2.31 s · ran 0.12 s (cached)"."""
    asked, ran, end = span.waiting_from, span.running_from, span.ended
    parts = [f"queued {_first(asked, ran, end) - span.queued:.2f} s"]
    if asked is not None:
        parts.append(f"waited for approval {_first(ran, end) - asked:.2f} s")
    if ran is not None:
        parts.append(f"ran {end - ran:.2f} s")
    text = " · ".join(parts) + (" so far" if span.live else "")
    if span.cached:
        text += " (cached)"
    if span.attempts > 1:
        text += f" · {span.attempts} attempts"
    if not span.live and span.status != RunStatus.DONE:
        text += f" · {span.status.value.replace('_', ' ')}"
    return text


def _first(*moments: float | None) -> float:
    return next(m for m in moments if m is not None)


class GanttDelegate(QStyledItemDelegate):
    """Paints the Timeline column's bars from the precomputed `GanttBar` of each row."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._colours = theme.PaletteColours()

    def paint(self, painter: QPainter, option: QStyleOptionViewItem,
              index: QModelIndex | QPersistentModelIndex) -> None:
        state = row_state(option, index.row())
        paint_panel(painter, option, state)  # the cell has no text: background and selection, then the bar
        paint_focus(painter, option, state)
        self.draw(painter, option.rect, index.data(GANTT_ROLE), option.palette)

    def draw(self, painter: QPainter, rect: QRect, bar: GanttBar | None, palette: QPalette) -> None:
        """`bar` in the cell `rect`, in `palette`'s theme colours (nothing for no bar); what `paint` draws over
        the cell's panel, for a view that paints a whole row in one call (`gui.window.timeline.view`)."""
        width = rect.width() - 2 * PAD
        if bar is None or width <= 0:
            return
        span, length = bar.span, max(bar.window.length, MIN_WINDOW_S)
        scale, left, top = width / length, rect.left() + PAD, rect.center().y() - BAR_HEIGHT / 2
        end = length if span.live else min(span.ended, length)
        colours = functools.partial(self._colours.get, palette)
        painter.save()
        painter.fillRect(QRectF(left, rect.center().y(), width, 1), colours(AXIS))
        asked, ran = span.waiting_from, span.running_from
        self._fill(painter, left, top, scale, span.queued, _first(asked, ran, end), colours(QUEUED), 0.0)
        if asked is not None:
            self._fill(painter, left, top, scale, asked, _first(ran, end), colours(APPROVAL), 0.0)
        if ran is not None and span.cached:
            x = left + ran * scale
            outcome = colours(OUTCOME[span.status])
            painter.fillRect(QRectF(x, top - 1, CACHED_PX, BAR_HEIGHT + 2), QBrush(outcome, Qt.BrushStyle.BDiagPattern))
            painter.setPen(QPen(outcome, 1.0))
            painter.drawRect(QRectF(x, top - 1, CACHED_PX, BAR_HEIGHT + 2))
        elif ran is not None:
            colour = colours(RUNNING if span.live else OUTCOME[span.status])
            self._fill(painter, left, top, scale, ran, end, colour, MIN_RUN_PX)
        elif not span.live:  # it never ran: a tick where it ended
            painter.fillRect(QRectF(left + end * scale - 1, top - 2, 2, BAR_HEIGHT + 4),
                             colours(OUTCOME[span.status]))
        painter.restore()

    @staticmethod
    def _fill(painter: QPainter, left: float, top: float, scale: float, start: float, end: float,
              colour: QColor, min_px: float) -> None:
        width = max((end - start) * scale, min_px)
        if width > 0:
            painter.fillRect(QRectF(left + start * scale, top, width, BAR_HEIGHT), colour)

    def sizeHint(self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex) -> QSize:  # noqa: N802
        return QSize(COLUMN_WIDTH, super().sizeHint(option, index).height())

    def __repr__(self) -> str:
        return "<GanttDelegate>"
