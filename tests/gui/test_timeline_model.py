"""The Qt timeline model: a valid item model that follows events live."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QModelIndex, Qt

from core import AgentStarted, CallFinished, CallQueued, RunStatus, Timeline
from gui.timeline_model import KEY_ROLE, TimelineModel


def _events() -> list[Any]:
    return [
        AgentStarted(seq=1, agent_id="main", session_id="s", name="lead", agent_kind="scripted"),
        CallQueued(seq=2, call_id="c1", agent_id="main", tool="Read", args={}, summary="README.md"),
        CallQueued(seq=3, call_id="c2", agent_id="main", tool="Task", args={}, summary="docs"),
        AgentStarted(seq=4, agent_id="sub", session_id="s", name="docs-writer", agent_kind="subagent",
                     parent_id="main", spawned_by="c2"),
        CallQueued(seq=5, call_id="c3", agent_id="sub", tool="Edit", args={}, summary="docs/usage.md"),
        CallFinished(seq=6, call_id="c3", status=RunStatus.DONE, duration_s=0.012),
        CallFinished(seq=7, call_id="c1", status=RunStatus.FAILED, duration_s=1.5),
    ]


def test_the_model_passes_qtmodeltester_while_events_arrive(qtmodeltester: Any) -> None:
    model = TimelineModel()
    qtmodeltester.check(model, force_py=True)
    for event in _events():
        model.apply(event)
    qtmodeltester.check(model, force_py=True)


def test_sub_agents_are_collapsible_rows_under_their_parent() -> None:
    model = TimelineModel()
    for event in _events():
        model.apply(event)
    lead = model.index(0, 0)
    assert lead.data() == "lead" and model.rowCount(lead) == 3
    sub = model.index(2, 0, lead)
    assert sub.data() == "docs-writer" and model.index(2, 1, lead).data() == "sub-agent of lead"
    edit = model.index(0, 0, sub)
    assert edit.data() == "Edit" and model.index(0, 2, sub).data() == "✓ done"
    assert model.index(0, 3, sub).data() == "12 ms"
    assert model.index(0, 2, lead).data() == "✗ failed" and model.index(0, 3, lead).data() == "1.5 s"
    assert model.parent(edit) == sub and edit.data(KEY_ROLE) == "r:c3"


def test_live_inserts_and_updates_emit_the_right_signals(qtbot: Any) -> None:
    model = TimelineModel()
    for event in _events()[:3]:
        model.apply(event)
    inserted: list[tuple[int, int]] = []
    model.rowsInserted.connect(lambda parent, first, last: inserted.append((first, last)))
    changed: list[str] = []
    model.dataChanged.connect(lambda a, b: changed.append(a.data(KEY_ROLE)))
    model.apply(CallQueued(seq=10, call_id="c9", agent_id="main", tool="Glob", args={}, summary="*.py"))
    model.apply(CallFinished(seq=11, call_id="c9", status=RunStatus.DONE, duration_s=0.001))
    assert inserted == [(2, 2)] and changed == ["r:c9"]


def test_a_snapshot_reset_replaces_everything_and_old_events_are_skipped() -> None:
    source = Timeline()
    for event in _events():
        source.apply(event)
    model = TimelineModel()
    model.reset(source.snapshot())
    assert model.rowCount(QModelIndex()) == 1 and model.rowCount(model.index(0, 0)) == 3
    model.apply(_events()[1])  # seq 2 is already in the snapshot
    assert model.rowCount(model.index(0, 0)) == 3
    assert model.headerData(2, Qt.Orientation.Horizontal) == "Status"
