"""What every timeline cell draws under its text (gui.window.timeline.item_paint): the selected or hovered
panel, over the whole row under the mouse, and the focus frame of the current cell only."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import QRect, Qt
from PySide6.QtGui import QImage, QPainter
from PySide6.QtWidgets import QStyle, QStyleOptionViewItem, QTableView

from gui.window.timeline.item_paint import ACTIVE, ENABLED, HAS_FOCUS, paint_focus, paint_panel, row_state

HOVERED, SELECTED = "#ff0000", "#0000ff"
"""What the style sheet below gives each panel, to tell them apart."""
State = QStyle.StateFlag


class _Rows(QTableView):
    """A view that says which row the mouse is over, as the timeline view does."""

    hovered_row = -1


@pytest.fixture
def view(qtbot: Any) -> _Rows:
    rows = _Rows()
    qtbot.addWidget(rows)
    rows.setStyleSheet(f"QTableView::item:hover {{ background: {HOVERED}; }} "
                       f"QTableView::item:selected {{ background: {SELECTED}; }}")
    return rows


def _option(view: QTableView, state: State) -> QStyleOptionViewItem:
    option = QStyleOptionViewItem()
    option.rect = QRect(0, 0, 120, 24)
    option.state = State.State_Enabled | State.State_Active | state
    option.palette = view.palette()
    option.widget = view
    return option


def _painted(paint: Any, option: QStyleOptionViewItem, state: int) -> set[str]:
    """The colours `paint` leaves on a clear cell."""
    image = QImage(option.rect.size(), QImage.Format.Format_ARGB32)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    try:
        paint(painter, option, state)
    finally:
        painter.end()
    return {image.pixelColor(x, y).name() for x in range(image.width())
            for y in range(image.height()) if image.pixelColor(x, y).alpha()}


def test_a_plain_cell_gets_no_panel_and_a_selected_or_hovered_one_gets_the_styles(view: _Rows) -> None:
    plain = _option(view, State.State_None)
    assert _painted(paint_panel, plain, row_state(plain, 0)) == set()
    selected = _option(view, State.State_Selected)
    assert SELECTED in _painted(paint_panel, selected, row_state(selected, 0))
    hovered = _option(view, State.State_MouseOver)
    assert HOVERED in _painted(paint_panel, hovered, row_state(hovered, 0))


def test_every_cell_of_the_row_under_the_mouse_is_hovered_not_only_the_one_beneath_it(view: _Rows) -> None:
    view.hovered_row = 3
    beside = _option(view, State.State_None)  # a cell of row 3 the mouse is not over: the table says plain
    state = row_state(beside, 3)
    assert state & State.State_MouseOver.value and beside.state & State.State_MouseOver
    assert HOVERED in _painted(paint_panel, beside, state)
    other = _option(view, State.State_None)
    assert _painted(paint_panel, other, row_state(other, 4)) == set()


def test_only_the_current_cell_gets_a_focus_frame(view: _Rows) -> None:
    current = _option(view, State.State_HasFocus)
    assert row_state(current, 0) & HAS_FOCUS
    assert _painted(paint_focus, current, row_state(current, 0))
    other = _option(view, State.State_None)
    assert row_state(other, 0) == ENABLED | ACTIVE
    assert _painted(paint_focus, other, row_state(other, 0)) == set()
