"""The Gantt delegate: what each state of a call looks like in the Timeline column, and its words."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import QRect
from PySide6.QtGui import QColor, QImage, QPainter, QStandardItem, QStandardItemModel
from PySide6.QtWidgets import QStyleOptionViewItem

from core import GanttSpan, RunStatus
from gui.window.kit.theme import LIGHT
from gui.window.timeline.gantt import (
    APPROVAL,
    BAR_HEIGHT,
    COLUMN_WIDTH,
    GANTT_ROLE,
    OUTCOME,
    PAD,
    QUEUED,
    RUNNING,
    GanttBar,
    GanttDelegate,
    GanttWindow,
    describe,
)

WINDOW_S = 10.0
PX_PER_S = COLUMN_WIDTH / WINDOW_S  # 16
HEIGHT = 20
TOP = (HEIGHT - 1) // 2 - BAR_HEIGHT // 2  # the bar's first row: centred on the cell
WHITE = QColor("#ffffff")


def _shown(role: str) -> str:
    """The colour a theme role is painted in (the light theme: tests run without a style switch)."""
    return str(getattr(LIGHT, role))


def _paint(span: GanttSpan) -> QImage:
    """One Timeline cell, COLUMN_WIDTH pixels of bar plus padding, painted on white."""
    model = QStandardItemModel()
    item = QStandardItem()
    item.setData(GanttBar(span, GanttWindow(WINDOW_S)), GANTT_ROLE)
    model.appendRow(item)
    image = QImage(COLUMN_WIDTH + 2 * PAD, HEIGHT, QImage.Format.Format_ARGB32)
    image.fill(WHITE)
    option = QStyleOptionViewItem()
    option.rect = QRect(0, 0, image.width(), HEIGHT)
    painter = QPainter(image)
    try:
        GanttDelegate().paint(painter, option, model.index(0, 0))
    finally:
        painter.end()
    return image


def _at(image: QImage, seconds: float, dy: int = 0) -> str:
    """The colour in the bar (just above the axis line) at this moment of the window."""
    y = TOP + 2 + dy
    return image.pixelColor(int(PAD + seconds * PX_PER_S), y).name()


def test_a_live_call_is_grey_while_queued_amber_while_asking_and_blue_while_running_up_to_now(qapp: Any) -> None:
    queued = _paint(GanttSpan(0.0, None, None, 5.0, True, RunStatus.QUEUED))
    assert _at(queued, 1) == _at(queued, 9.5) == _shown(QUEUED)  # a live bar reaches the window's end: now
    asking = _paint(GanttSpan(1.0, 2.0, None, 5.0, True, RunStatus.BLOCKED_ON_USER))
    assert _at(asking, 0.5) == WHITE.name() and _at(asking, 1.5) == _shown(QUEUED)
    assert _at(asking, 3) == _at(asking, 9.5) == _shown(APPROVAL)
    running = _paint(GanttSpan(0.0, None, 3.0, 5.0, True, RunStatus.RUNNING))
    assert _at(running, 2) == _shown(QUEUED) and _at(running, 4) == _at(running, 9.5) == _shown(RUNNING)


@pytest.mark.parametrize("status", [RunStatus.DONE, RunStatus.FAILED, RunStatus.TIMED_OUT])
def test_a_finished_call_takes_its_outcomes_colour_and_stops_where_it_ended(qapp: Any, status: RunStatus) -> None:
    image = _paint(GanttSpan(0.0, 1.0, 3.0, 6.0, False, status))
    assert _at(image, 0.5) == _shown(QUEUED) and _at(image, 2) == _shown(APPROVAL)
    assert _at(image, 4) == _at(image, 5.9) == _shown(OUTCOME[status])
    assert _at(image, 7) == WHITE.name()


@pytest.mark.parametrize("status", [RunStatus.SKIPPED, RunStatus.DENIED])
def test_a_call_that_never_ran_ends_in_a_grey_tick(qapp: Any, status: RunStatus) -> None:
    image = _paint(GanttSpan(0.0, 2.0 if status == RunStatus.DENIED else None, None, 4.0, False, status))
    assert _at(image, 4, dy=-2) == _shown(OUTCOME[status]) == LIGHT.muted  # taller than the bar
    assert _at(image, 5) == WHITE.name()


def test_a_cached_result_is_a_short_outlined_mark_however_short_it_was(qapp: Any) -> None:
    image = _paint(GanttSpan(0.0, None, 3.0, 3.001, False, RunStatus.DONE, cached=True))
    outline = image.pixelColor(int(PAD + 3 * PX_PER_S) + 3, TOP - 1).name()  # one row above the bar
    assert outline == _shown(OUTCOME[RunStatus.DONE])
    plain = _paint(GanttSpan(0.0, None, 3.0, 3.001, False, RunStatus.DONE))
    assert _at(plain, 3.0) == _shown(OUTCOME[RunStatus.DONE])  # a very short run is still visible
    assert _at(plain, 3.3) == WHITE.name() and _at(image, 3.3, dy=-3) == _shown(OUTCOME[RunStatus.DONE])


def test_a_row_without_a_bar_paints_nothing_and_the_column_asks_for_its_width(qapp: Any) -> None:
    model = QStandardItemModel()
    model.appendRow(QStandardItem(""))
    image = QImage(COLUMN_WIDTH, HEIGHT, QImage.Format.Format_ARGB32)
    image.fill(WHITE)
    option = QStyleOptionViewItem()
    option.rect = QRect(0, 0, COLUMN_WIDTH, HEIGHT)
    painter = QPainter(image)
    GanttDelegate().paint(painter, option, model.index(0, 0))
    painter.end()
    assert {image.pixelColor(x, HEIGHT // 2).name() for x in range(COLUMN_WIDTH)} == {WHITE.name()}
    assert GanttDelegate().sizeHint(option, model.index(0, 0)).width() == COLUMN_WIDTH


def test_the_tooltip_says_how_long_each_phase_took() -> None:
    assert describe(GanttSpan(0.0, 0.0, 2.31, 2.43, False, RunStatus.DONE, cached=True)) == \
        "queued 0.00 s · waited for approval 2.31 s · ran 0.12 s (cached)"
    assert describe(GanttSpan(0.0, None, 1.0, 2.5, True, RunStatus.RUNNING)) == "queued 1.00 s · ran 1.50 s so far"
    assert describe(GanttSpan(0.5, None, None, 0.5, False, RunStatus.SKIPPED)) == "queued 0.00 s · skipped"
    assert describe(GanttSpan(0.0, None, 0.0, 4.0, False, RunStatus.TIMED_OUT, attempts=3)) == \
        "queued 0.00 s · ran 4.00 s · 3 attempts · timed out"
