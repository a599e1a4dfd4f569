"""The timeline's columns: the Status column stays in sight as the timeline narrows, and the Call column is wide
enough for the deepest agent's name but never narrower than the person made it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from core import AgentStarted, CallQueued
from gui.window.timeline.model import STATUS_COLUMN, TimelineModel
from gui.window.timeline.view import TimelineView
from gui.window.workspace.columns import MIN_SUMMARY, OPTIONAL, SUMMARY_COLUMN, ColumnFit


@pytest.fixture
def timeline(qtbot: Any) -> Iterator[tuple[TimelineModel, TimelineView, ColumnFit]]:
    """A timeline with one agent and its call, shown wide, its columns set as the window sets them."""
    model = TimelineModel()
    model.apply(AgentStarted(seq=1, agent_id="lead", session_id="s", name="lead", agent_kind="scripted"))
    model.apply(CallQueued(seq=2, call_id="c1", agent_id="lead", tool="Read", args={}, summary="README.md"))
    view = TimelineView(model)
    qtbot.addWidget(view)
    view.resize(1200, 400)
    view.show()
    qtbot.waitExposed(view)
    view.expandAll()
    columns = ColumnFit(view, lambda: model.timeline)
    columns.reset()
    yield model, view, columns
    view.close()


def _status_in_sight(tree: TimelineView) -> bool:
    header = tree.header()
    left = header.sectionViewportPosition(STATUS_COLUMN)
    return left >= 0 and left + header.sectionSize(STATUS_COLUMN) <= tree.viewport().width()


def test_the_status_column_stays_in_sight_as_the_timeline_narrows(qtbot: Any, timeline: Any) -> None:
    _, tree, _ = timeline
    qtbot.waitUntil(lambda: _status_in_sight(tree))
    summary = tree.columnWidth(SUMMARY_COLUMN)
    header = tree.header()
    status_end = header.sectionPosition(STATUS_COLUMN) + header.sectionSize(STATUS_COLUMN)
    frame = tree.width() - tree.viewport().width()
    tree.resize(frame + status_end - summary // 3, tree.height())  # the Status column would end out of sight
    qtbot.waitUntil(lambda: tree.columnWidth(SUMMARY_COLUMN) < summary)  # the Summary gives up the room
    assert _status_in_sight(tree)
    tree.resize(200, tree.height())  # far too narrow for all of it
    # The Summary narrows to its least, not below: a summary still says something; the Status column scrolls.
    qtbot.waitUntil(lambda: tree.columnWidth(SUMMARY_COLUMN) == MIN_SUMMARY)


def test_the_call_column_widens_for_a_deep_agents_name_but_keeps_the_persons_width(timeline: Any) -> None:
    model, tree, columns = timeline
    before = tree.columnWidth(0)
    parent = "lead"
    for depth, name in enumerate(("frontend", "tests", "integration-tests-for-the-payments-service"), 3):
        model.apply(AgentStarted(seq=depth, agent_id=name, session_id="s", name=name, agent_kind="subagent",
                                 parent_id=parent))
        parent = name
    columns.fit_call_column()
    assert tree.columnWidth(0) > before
    wider = tree.columnWidth(0) + 80
    tree.setColumnWidth(0, wider)  # the person drags it wider still
    columns.fit_call_column()
    assert tree.columnWidth(0) == wider


def _shown_whole(tree: TimelineView) -> list[int]:
    """The columns shown, each ending inside the viewport (not cut at its right edge)."""
    header = tree.header()
    shown = [c for c in range(header.count()) if not header.isSectionHidden(c)]
    assert all(header.sectionViewportPosition(c) + header.sectionSize(c) <= tree.viewport().width()
               for c in shown if c != shown[-1] or not header.stretchLastSection()), "a column is cut"
    return shown


def test_columns_of_less_weight_step_aside_rather_than_be_cut_and_come_back_with_room(
        qtbot: Any, timeline: Any) -> None:
    _, tree, columns = timeline
    qtbot.waitUntil(lambda: not columns.hidden_columns())  # 1200 pixels: everything
    assert _shown_whole(tree) == [0, 1, 2, 3, 4, 5]
    frame = tree.width() - tree.viewport().width()
    header = tree.header()
    status_end = header.sectionPosition(STATUS_COLUMN) - tree.columnWidth(SUMMARY_COLUMN) + MIN_SUMMARY + \
        header.sectionSize(STATUS_COLUMN)
    tree.resize(frame + status_end + 70, tree.height())  # room for one more column: Changed
    qtbot.waitUntil(lambda: columns.hidden_columns() == list(OPTIONAL[1:]))
    assert _shown_whole(tree) == [0, 1, 2, 4]
    tree.resize(frame + status_end + 5, tree.height())  # none of them
    qtbot.waitUntil(lambda: columns.hidden_columns() == list(OPTIONAL))
    assert _shown_whole(tree) == [0, 1, 2]
    qtbot.waitUntil(lambda: tree.horizontalScrollBar().maximum() == 0)  # nothing left out to scroll to
    tree.resize(1200, tree.height())
    qtbot.waitUntil(lambda: not columns.hidden_columns())
    assert _shown_whole(tree) == [0, 1, 2, 3, 4, 5]
