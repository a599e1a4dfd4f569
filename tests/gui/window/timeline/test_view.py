"""The timeline view paints a plain row in one call, and a row looks the same whichever way it is painted."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from PySide6.QtCore import QModelIndex, QPoint, QRect, Qt
from PySide6.QtGui import QCursor, QImage
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from core import (
    AgentKey,
    AgentStarted,
    BatchKey,
    BatchStarted,
    CallFinished,
    CallQueued,
    CallStarted,
    PlanInfo,
    RunKey,
    RunStatus,
)
from gui.window.kit.theme import ThemeSwitch
from gui.window.timeline.model import TimelineModel
from gui.window.timeline.view import INDENT, TimelineView

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)


@pytest.fixture(params=["light", "dark"])
def themed(request: pytest.FixtureRequest, qapp: QApplication) -> Iterator[str]:
    """The theme applied (style sheet with alternate rows, palette), put back afterwards."""
    before_palette, before_sheet = qapp.palette(), qapp.styleSheet()
    switch = ThemeSwitch(qapp, request.param)
    switch.apply()
    yield request.param
    switch.setParent(None)
    switch.deleteLater()
    qapp.setPalette(before_palette)
    qapp.setStyleSheet(before_sheet)


def _session() -> TimelineModel:
    """A lead with calls (some failed, one running), a batch, a sub-agent and a sub-sub-agent under it."""
    model = TimelineModel(clock=lambda: T0 + timedelta(seconds=30))
    seq = iter(range(1, 10_000))

    def at(s: float) -> datetime:
        return T0 + timedelta(seconds=s)

    def call(call_id: str, agent: str, s: float, status: RunStatus | None = RunStatus.DONE, **extra: Any) -> None:
        model.apply(CallQueued(seq=next(seq), call_id=call_id, agent_id=agent, tool="Edit", args={},
                               summary=f"src/{call_id}.py", at=at(s), **extra))
        model.apply(CallStarted(seq=next(seq), call_id=call_id, at=at(s + 0.1)))
        if status is not None:
            model.apply(CallFinished(seq=next(seq), call_id=call_id, status=status, duration_s=0.4, at=at(s + 0.5)))

    model.apply(AgentStarted(seq=next(seq), agent_id="lead", session_id="s", name="lead", agent_kind="scripted",
                             at=at(0)))
    for n in range(12):
        call(f"c{n}", "lead", n, RunStatus.FAILED if n % 5 == 3 else RunStatus.DONE)
    model.apply(BatchStarted(seq=next(seq), batch_id="b", agent_id="lead", name="tests", size=3, at=at(13),
                             plan=PlanInfo(levels=(("b0", "b1", "b2"),), critical_path=("b0",), max_parallelism=3)))
    for n in range(3):
        call(f"b{n}", "lead", 13 + n, batch_id="b")
    model.apply(AgentStarted(seq=next(seq), agent_id="sub", session_id="s", name="frontend", agent_kind="subagent",
                             parent_id="lead", at=at(17)))
    model.apply(AgentStarted(seq=next(seq), agent_id="subsub", session_id="s", name="frontend-tests",
                             agent_kind="subagent", parent_id="sub", at=at(18)))
    for n in range(6):
        call(f"s{n}", "subsub", 19 + n, None if n == 5 else RunStatus.DONE)
    return model


def _view(qtbot: Any) -> TimelineView:
    view = TimelineView(_session())
    qtbot.addWidget(view)
    view.resize(900, 560)
    view.expandAll()
    view.show()
    qtbot.waitExposed(view)
    return view


def _through_delegates(view: TimelineView) -> QImage:
    """The viewport as Qt's tree view paints it, cell by cell through the delegates."""
    view.whole = False
    before = view.whole_rows
    try:
        return view.viewport().grab().toImage()
    finally:
        view.whole = True
        assert view.whole_rows == before


def test_every_row_looks_the_same_painted_whole_or_cell_by_cell(themed: str, qtbot: Any) -> None:
    view = _view(qtbot)
    rows = view.rows.source.rowCount(view.rows.source.index(0, 0))
    assert rows > 10
    before = view.whole_rows
    whole = view.viewport().grab().toImage()
    assert view.whole_rows - before >= rows, "the lead's rows were not painted in one call each"
    assert whole == _through_delegates(view)


def test_the_selected_current_row_is_painted_by_the_tree_view_and_the_rest_whole(themed: str, qtbot: Any) -> None:
    view = _view(qtbot)
    before = view.whole_rows
    view.viewport().grab()
    shown = view.whole_rows - before  # every row on screen, none selected
    model = view.rows.source
    view.setFocus()
    view.setCurrentIndex(model.index(2, 0, model.index(0, 0, QModelIndex())))  # selected, with the focus frame
    qtbot.waitUntil(view.hasFocus)
    before = view.whole_rows
    whole = view.viewport().grab().toImage()
    assert view.whole_rows - before == shown - 1
    assert whole == _through_delegates(view)


def test_with_a_column_dragged_to_the_front_rows_look_the_same_and_the_branches_stay_with_the_calls(
        qtbot: Any) -> None:
    view = _view(qtbot)
    view.header().moveSection(view.header().visualIndex(1), 0)  # Summary first; the tree stays in "Call"
    before = view.whole_rows
    whole = view.viewport().grab().toImage()
    assert view.whole_rows > before
    assert whole == _through_delegates(view)


def test_the_row_under_the_mouse_is_painted_by_the_tree_view_as_the_style_wants_it(qtbot: Any) -> None:
    view = _view(qtbot)
    view.setStyleSheet("QTableView::item:hover { background: #ff0000; }")  # a style that marks the hovered row
    viewport = view.viewport()
    row_height = view.visualRect(view.model().index(0, 0)).height()
    QTest.mouseMove(viewport, QPoint(50, row_height * 3 + row_height // 2))
    qtbot.waitUntil(viewport.underMouse)
    hovered = view.indexAt(viewport.mapFromGlobal(QCursor.pos()))
    assert hovered.isValid()
    whole = viewport.grab().toImage()
    assert whole.pixelColor(viewport.width() - 40, row_height * 3 + row_height // 2).name() == "#ff0000"
    assert whole == _through_delegates(view)


def _keys(view: TimelineView) -> list[Any]:
    return [view.rows.key_of(view.rows.index(row, 0)) for row in range(view.rows.rowCount())]


def test_an_agent_s_arrow_closes_and_opens_it_and_selects_nothing(qtbot: Any) -> None:
    view = _view(qtbot)
    sub = view.rows.row_of(AgentKey("sub"))
    rect = view.visualRect(view.rows.index(sub, 0))
    arrow = QPoint(rect.left() + INDENT * 1 + INDENT // 2, rect.center().y())  # depth 1: its arrow's level
    QTest.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=arrow)
    assert AgentKey("subsub") not in _keys(view) and RunKey("s0") not in _keys(view)
    assert view.current_key() is None
    QTest.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=arrow)
    assert _keys(view)[sub + 1:sub + 3] == [AgentKey("subsub"), RunKey("s0")]  # what was open under it still is
    QTest.mouseDClick(view.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(rect.right() + 40, rect.center().y()))
    assert AgentKey("subsub") not in _keys(view)  # a double click on the row closes it too


def test_left_and_right_walk_the_tree_as_in_a_tree_view(qtbot: Any) -> None:
    view = _view(qtbot)
    view.setFocus()
    view.go_to(RunKey("b1"))
    qtbot.keyClick(view, Qt.Key.Key_Left)  # a call: to its batch
    assert view.current_key() == BatchKey("b")
    qtbot.keyClick(view, Qt.Key.Key_Left)  # an open batch: closed
    assert RunKey("b0") not in _keys(view) and view.current_key() == BatchKey("b")
    qtbot.keyClick(view, Qt.Key.Key_Right)  # opened again
    assert RunKey("b0") in _keys(view)
    qtbot.keyClick(view, Qt.Key.Key_Right)  # then to its first call
    assert view.current_key() == RunKey("b0")
    view.collapseAll()
    assert _keys(view) == [AgentKey("lead")]
    view.go_to(AgentKey("lead"))
    qtbot.keyClick(view, Qt.Key.Key_Asterisk)  # everything under it
    assert RunKey("s5") in _keys(view) and len(_keys(view)) == len(view.rows.source.timeline.parent_table())


def test_an_agent_s_arrow_is_drawn_and_points_down_when_open_and_across_when_closed(themed: str, qtbot: Any) -> None:
    view = _view(qtbot)  # the theme's style sheet: its style draws no branch outside a tree view
    sub = view.rows.row_of(AgentKey("sub"))
    rect = view.visualRect(view.rows.index(sub, 0))
    arrow = QRect(rect.left() + INDENT, rect.top(), INDENT, rect.height())  # depth 1

    def drawn() -> QImage:
        return view.viewport().grab().toImage().copy(arrow)

    def colours(image: QImage) -> set[int]:
        return {image.pixel(x, y) for x in range(image.width()) for y in range(image.height())}

    opened = drawn()
    assert len(colours(opened)) > 2, "no arrow on an open agent's row"
    view.collapse(view.rows.source.index_of(AgentKey("sub")))
    closed = drawn()
    assert len(colours(closed)) > 2 and closed != opened
    plain = view.visualRect(view.rows.index(view.rows.row_of(RunKey("c0")), 0))
    call = view.viewport().grab().toImage().copy(QRect(plain.left() + INDENT, plain.top(), INDENT, plain.height()))
    assert len(colours(call)) == 1  # a call has no arrow: its indentation is bare
