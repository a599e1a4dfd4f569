"""The Qt timeline model: a valid item model that follows events live."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from PySide6.QtCore import QModelIndex, Qt

from core import AgentStarted, CallFinished, CallQueued, ConversationRecorded, Message, RunStatus, Timeline
from core.events import ApprovalRequested, BatchFinished, BatchStarted, CallStarted
from core.models.batches import PlanInfo
from gui.window.kit.theme import LIGHT
from gui.window.timeline.gantt import GANTT_ROLE
from gui.window.timeline.model import COLUMNS, KEY_ROLE, STATUS_COLUMN, TIMELINE_COLUMN, TimelineModel


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
    assert sub.data() == "docs-writer" and model.index(2, 1, lead).data() == "1 call"
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
    rows_changed: list[str] = []
    bars_changed: list[tuple[int, int]] = []

    def on_data_changed(first: QModelIndex, last: QModelIndex) -> None:
        if first.column() == TIMELINE_COLUMN == last.column():
            bars_changed.append((first.row(), last.row()))  # the agent's time window moved: its bars rescale
        else:
            rows_changed.append(first.data(KEY_ROLE))

    model.dataChanged.connect(on_data_changed)
    model.apply(CallQueued(seq=10, call_id="c9", agent_id="main", tool="Glob", args={}, summary="*.py"))
    model.apply(CallFinished(seq=11, call_id="c9", status=RunStatus.DONE, duration_s=0.001))
    assert inserted == [(2, 2)] and rows_changed == ["a:main", "r:c9"]  # its roll-up: one call more
    assert bars_changed and set(bars_changed) <= {(0, 1), (0, 2)}


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


# -- batches and the Timeline column ------------------------------------------------------------------------

T0 = datetime(2026, 11, 22, 12, 0, tzinfo=timezone.utc)
PLAN = PlanInfo(levels=(("find", "ls"), ("read",)), critical_path=("find", "read"), max_parallelism=2)


def _at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


class Clock:
    def __init__(self) -> None:
        self.now = _at(0)

    def __call__(self) -> datetime:
        return self.now


def _in_batch(seq: int, call_id: str, key: str, seconds: float, agent_id: str = "main") -> CallQueued:
    return CallQueued(seq=seq, call_id=call_id, agent_id=agent_id, tool="Read", args={}, summary=key,
                      batch_id="b1", batch_key=key, at=_at(seconds))


def _batch_events() -> list[Any]:
    return [
        AgentStarted(seq=1, agent_id="main", session_id="s", name="lead", agent_kind="scripted", at=_at(0)),
        CallQueued(seq=2, call_id="c0", agent_id="main", tool="LS", args={}, summary=".", at=_at(0.5)),
        _in_batch(3, "c1", "find", 1.2),  # before its BatchStarted
        BatchStarted(seq=4, batch_id="b1", agent_id="main", name="scan", plan=PLAN, size=3, at=_at(1)),
        CallStarted(seq=5, call_id="c1", at=_at(1.3)),
        _in_batch(6, "c2", "ls", 1.3),
        AgentStarted(seq=7, agent_id="sub", session_id="s", name="helper", agent_kind="subagent", parent_id="main",
                     spawned_by="c2", at=_at(1.4)),
        CallQueued(seq=8, call_id="c5", agent_id="sub", tool="Edit", args={}, summary="x", at=_at(1.5)),
        CallFinished(seq=9, call_id="c1", status=RunStatus.DONE, duration_s=0.2, at=_at(1.5)),
        CallFinished(seq=10, call_id="c2", status=RunStatus.DONE, cached=True, at=_at(1.6)),
        _in_batch(11, "c3", "read", 1.6),
        ApprovalRequested(seq=12, call_id="c3", agent_id="main", tool="Read", summary="", reason="", args={},
                          at=_at(1.7)),
        CallStarted(seq=13, call_id="c3", at=_at(4.0)),
        CallFinished(seq=14, call_id="c3", status=RunStatus.FAILED, duration_s=0.1, at=_at(4.1)),
        BatchFinished(seq=15, batch_id="b1", succeeded=2, failed=1, skipped=0, cache_hits=1, duration_s=3.1,
                      max_running=2, at=_at(4.1)),
        CallFinished(seq=16, call_id="c5", status=RunStatus.DONE, at=_at(4.2)),
        CallFinished(seq=17, call_id="c0", status=RunStatus.DONE, at=_at(4.3)),
        CallQueued(seq=18, call_id="c6", agent_id="main", tool="Glob", args={}, summary="*.py", at=_at(5)),
    ]


def test_the_model_with_batches_passes_qtmodeltester_while_events_arrive(qtmodeltester: Any) -> None:
    clock = Clock()
    model = TimelineModel(clock=clock)
    qtmodeltester.check(model, force_py=True)  # from here on it checks every signal the events cause
    for event in _batch_events():
        clock.now = event.at
        model.apply(event)
    clock.now = _at(6)
    model.tick()
    qtmodeltester.check(model, force_py=True)


def _fed(until: int | None = None) -> tuple[TimelineModel, Clock]:
    clock = Clock()
    model = TimelineModel(clock=clock)
    for event in _batch_events()[:until]:
        clock.now = event.at
        model.apply(event)
    return model, clock


def _row(model: TimelineModel, index: QModelIndex) -> list[Any]:
    return [model.index(index.row(), column, index.parent()).data() for column in range(len(COLUMNS))]


def test_a_batch_is_a_row_under_its_agent_with_its_calls_and_their_sub_agents() -> None:
    model, _ = _fed(8)
    lead = model.index(0, 0)
    batch = model.index(1, 0, lead)
    assert batch.data(KEY_ROLE) == "b:b1" and model.rowCount(batch) == 3
    assert _row(model, batch) == ["☰ scan", "3 calls · max parallel 2 · +1 by sub-agents · 1 running",
                                  "running (0/3 done)", "", "", ""]
    assert [model.index(r, 0, batch).data(KEY_ROLE) for r in range(3)] == ["r:c1", "r:c2", "a:sub"]
    model, _ = _fed()
    lead = model.index(0, 0)
    batch = model.index(1, 0, lead)
    assert _row(model, batch) == ["☰ scan", "3 calls · max parallel 2 · +1 by sub-agents · 1 failed · 1 cached",
                                  "done: 2 ok, 1 failed, 0 skipped", "3.1 s", "", ""]
    assert model.index(1, STATUS_COLUMN, lead).data(Qt.ItemDataRole.ForegroundRole).color().name() == LIGHT.danger
    assert "critical path: find → read" in batch.data(Qt.ItemDataRole.ToolTipRole)
    assert model.index(2, 0, lead).data(KEY_ROLE) == "r:c6"  # after the batch, under the agent
    assert model.headerData(TIMELINE_COLUMN, Qt.Orientation.Horizontal) == "Timeline"


def test_the_timeline_column_gives_each_run_its_span_on_its_groups_window() -> None:
    model, _ = _fed()
    lead = model.index(0, 0)
    batch = model.index(1, 0, lead)
    asked = model.index(3, TIMELINE_COLUMN, batch)  # c3: queued with the batch, asked, ran, failed
    bar = asked.data(GANTT_ROLE)
    assert (bar.span.queued, bar.span.waiting_from, bar.span.running_from) == (0.0, pytest.approx(0.7), 3.0)
    assert bar.span.ended == pytest.approx(3.1) and bar.span.status == RunStatus.FAILED and not bar.span.live
    assert bar.window.length == pytest.approx(3.1)  # the batch's window: from its start to its end
    assert asked.data(Qt.ItemDataRole.ToolTipRole) == \
        "queued 0.70 s · waited for approval 2.30 s · ran 0.10 s · failed"
    cached = model.index(1, TIMELINE_COLUMN, batch)
    assert cached.data(Qt.ItemDataRole.ToolTipRole).endswith("(cached)")
    assert model.index(0, TIMELINE_COLUMN, lead).data(GANTT_ROLE).window is \
        model.index(1, TIMELINE_COLUMN, lead).data(GANTT_ROLE).window  # c0 and the batch: the agent's window
    assert model.index(0, TIMELINE_COLUMN).data(GANTT_ROLE) is None  # an agent row has no bar
    assert model.index(3, 0, batch).data(GANTT_ROLE) is None  # only the Timeline column has one


def test_the_tick_moves_now_on_for_live_rows_only_and_stops_when_nothing_is_at_work(qtbot: Any) -> None:
    model, clock = _fed()
    lead = model.index(0, 0)
    queued = model.index(2, TIMELINE_COLUMN, lead)  # c6, queued at 5 s
    assert queued.data(GANTT_ROLE).span.live and model._ticker.isActive()
    changed: list[tuple[int, int, int, int]] = []
    model.dataChanged.connect(lambda a, b: changed.append((a.row(), a.column(), b.row(), b.column())))
    clock.now = _at(9)
    model.tick()
    bar = queued.data(GANTT_ROLE)
    assert bar.span.ended == 9.0 and bar.window.length == 9.0  # the agent's window ends now
    assert queued.data(Qt.ItemDataRole.ToolTipRole) == "queued 4.00 s so far"
    assert changed == [(0, TIMELINE_COLUMN, 2, TIMELINE_COLUMN)]  # the Timeline column of the agent's rows
    batch_bar = model.index(1, TIMELINE_COLUMN, lead).data(GANTT_ROLE)
    assert (batch_bar.span.queued, batch_bar.span.ended) == (1.0, pytest.approx(4.1))  # finished: unmoved
    clock.now = _at(9.5)
    model.apply(CallFinished(seq=30, call_id="c6", status=RunStatus.DONE, at=_at(9.5)))
    assert not model._ticker.isActive() and queued.data(GANTT_ROLE).window.length == 9.5


def test_under_a_flood_the_tick_waits_for_the_bridge_s_flush_and_shares_its_repaint(qtbot: Any) -> None:
    model, clock = _fed()
    model.auto_flush = False  # as the bridge has it: it flushes after each of its batches
    lead = model.index(0, 0)
    queued = model.index(2, TIMELINE_COLUMN, lead)  # c6, queued at 5 s
    assert queued.data(GANTT_ROLE).span.ended == 5.0  # painted, so its bar is kept and moved by the ticks
    changed: list[int] = []
    model.dataChanged.connect(lambda a, b: changed.append(a.column()))
    clock.now = _at(9)
    model.timeline.apply(CallQueued(seq=30, call_id="c7", agent_id="main", tool="Read", args={}, summary="x",
                                    at=_at(9)))  # a flood's row, waiting for the bridge
    model.tick()
    assert changed == [] and queued.data(GANTT_ROLE).span.ended == 5.0  # nothing repainted for the tick alone
    model.flush()  # the bridge's batch: its rows, and the tick, in one turn
    assert queued.data(GANTT_ROLE).span.ended == 9.0 and queued.data(GANTT_ROLE).window.length == 9.0
    assert model.rowCount(lead) == 4 and TIMELINE_COLUMN in changed
    changed.clear()
    clock.now = _at(9.5)
    model.tick()  # nothing waiting: a tick of its own, at once
    assert changed and queued.data(GANTT_ROLE).span.ended == 9.5


def test_a_burst_in_the_shared_timeline_is_shown_at_the_flush_as_one_range_insert(qtmodeltester: Any) -> None:
    timeline = Timeline()  # the console's, fed by the bus; the model keeps no copy
    model = TimelineModel(timeline)
    qtmodeltester.check(model, force_py=True)
    inserted: list[tuple[bool, int, int]] = []
    model.rowsInserted.connect(lambda parent, first, last: inserted.append((parent.isValid(), first, last)))
    timeline.apply(AgentStarted(seq=1, agent_id="main", session_id="s", name="lead", agent_kind="scripted"))
    for i in range(200):
        timeline.apply(CallQueued(seq=2 + i, call_id=f"c{i}", agent_id="main", tool="Read", args={},
                                  summary=f"file{i}"))
    timeline.apply(CallFinished(seq=300, call_id="c7", status=RunStatus.DONE, duration_s=0.2))
    assert model.rowCount(QModelIndex()) == 0  # Qt has not been told yet: the view and the model agree
    model.flush()
    lead = model.index(0, 0)
    assert inserted == [(False, 0, 0), (True, 0, 199)] and model.rowCount(lead) == 200
    assert model.index(7, 2, lead).data() == "✓ done" and model.index(199, 1, lead).data() == "file199"
    assert model.timeline is timeline


def test_an_agent_row_rolls_up_the_calls_of_its_sub_agents_at_any_depth_and_follows_them(qtmodeltester: Any) -> None:
    model = TimelineModel()
    model.apply(AgentStarted(seq=1, agent_id="main", session_id="s", name="lead", agent_kind="scripted"))
    model.apply(CallQueued(seq=2, call_id="t1", agent_id="main", tool="Task", args={}, summary="frontend"))
    model.apply(AgentStarted(seq=3, agent_id="fe", session_id="s", name="frontend", agent_kind="subagent",
                             parent_id="main", spawned_by="t1"))
    model.apply(CallQueued(seq=4, call_id="t2", agent_id="fe", tool="Task", args={}, summary="tests"))
    model.apply(AgentStarted(seq=5, agent_id="te", session_id="s", name="tests", agent_kind="subagent",
                             parent_id="fe", spawned_by="t2"))
    for i in range(4):
        model.apply(CallQueued(seq=10 + i, call_id=f"e{i}", agent_id="te", tool="Bash", args={}, summary="pytest"))
    lead = model.index(0, 0)
    changed: list[str] = []
    model.dataChanged.connect(lambda first, last: changed.append(first.data(KEY_ROLE)))
    model.apply(CallFinished(seq=20, call_id="e0", status=RunStatus.FAILED, duration_s=0.1))
    model.apply(CallFinished(seq=21, call_id="e1", status=RunStatus.TIMED_OUT, duration_s=0.1))
    model.apply(ApprovalRequested(seq=22, call_id="e2", agent_id="te", tool="Bash", args={}, summary="pytest",
                                  reason=""))
    assert model.index(0, 1).data() == "6 calls · 1 waiting · 2 failed"  # the lead's, 2 levels up
    assert model.index(0, STATUS_COLUMN).data(Qt.ItemDataRole.ForegroundRole).color().name() == LIGHT.warning
    frontend = model.index(1, 0, lead)
    assert model.index(1, 1, lead).data() == "5 calls · 1 waiting · 2 failed"
    assert frontend.data(Qt.ItemDataRole.ToolTipRole).startswith("frontend, sub-agent of lead: 5 calls · 1 waiting · 2 failed")
    assert {"a:main", "a:fe", "a:te"} <= set(changed)  # each row above told once its roll-up moved
    changed.clear()
    model.apply(CallFinished(seq=23, call_id="e2", status=RunStatus.DONE, duration_s=0.1))
    assert model.index(0, 1).data() == "6 calls · 2 failed"
    assert model.index(0, STATUS_COLUMN).data(Qt.ItemDataRole.ForegroundRole).color().name() == LIGHT.danger
    assert changed.count("a:main") == 1
    qtmodeltester.check(model, force_py=True)


def test_a_flood_arrives_as_a_few_range_inserts_and_no_row_update_spans_more_than_its_row(qtbot: Any) -> None:
    timeline = Timeline()  # the console's, fed by the bus
    model = TimelineModel(timeline)
    model.auto_flush = False  # flushed once a "frame", as the bridge does
    inserts: list[tuple[int, int]] = []
    model.rowsInserted.connect(lambda parent, first, last: inserts.append((first, last)))
    spans: list[tuple[int, int, int, int]] = []
    model.dataChanged.connect(lambda a, b: spans.append((a.row(), b.row(), a.column(), b.column())))
    for agent in ("lead", "fe", "be"):
        timeline.apply(AgentStarted(agent_id=agent, session_id="s", name=agent, agent_kind="scripted"))
    for i in range(5000):
        timeline.apply(CallQueued(call_id=f"c{i}", agent_id=("lead", "fe", "be")[i % 3], tool="Read", args={},
                                  summary=f"file{i}"))
        timeline.apply(CallFinished(call_id=f"c{i}", status=RunStatus.FAILED if i % 50 == 0 else RunStatus.DONE,
                                    duration_s=0.01))
        if i % 1000 == 999:
            model.flush()  # 5 frames
    model.flush()
    # 15,000 events, 5 frames: the three agents, then one insert per agent and frame.
    assert len(inserts) <= 1 + 3 * 5 and sum(last - first + 1 for first, last in inserts) == 5003
    # Only the Timeline column's bars rescale over a range of rows; every other change names one row.
    assert all(first == last or (c0, c1) == (TIMELINE_COLUMN, TIMELINE_COLUMN) for first, last, c0, c1 in spans)
    lead = model.index(0, 0)
    assert model.rowCount(lead) == 1667 and model.index(1666, 1, lead).data() == "file4998"
    assert model.index(0, 2, lead).data() == "✗ failed" and model.index(1, 2, lead).data() == "✓ done"
    assert model.index(0, 1).data() == "1667 calls · 34 failed"  # the roll-up kept as they came


def test_a_row_painted_once_shows_its_later_changes(qtbot: Any) -> None:
    model = TimelineModel()
    for event in _events()[:2]:
        model.apply(event)
    row = model.index(0, 2, model.index(0, 0))  # c1, queued
    assert row.data() == "… queued"  # painted: prepared
    model.apply(CallStarted(seq=20, call_id="c1"))
    assert row.data() == "● running"
    model.apply(CallFinished(seq=21, call_id="c1", status=RunStatus.DONE, duration_s=2.0))
    assert row.data() == "✓ done" and row.siblingAtColumn(3).data() == "2.0 s"


def test_a_running_batch_with_estimates_says_about_how_long_it_has_left() -> None:
    clock = Clock()
    model = TimelineModel(clock=clock)
    timed = PLAN.model_copy(update={"estimates": {"find": 2.0, "ls": 1.0, "read": 6.0}})
    events = [
        AgentStarted(seq=1, agent_id="main", session_id="s", name="lead", agent_kind="scripted", at=_at(0)),
        BatchStarted(seq=2, batch_id="b1", agent_id="main", name="scan", plan=timed, size=3, at=_at(1)),
        _in_batch(3, "c1", "find", 1.0), _in_batch(4, "c2", "ls", 1.0),
        CallStarted(seq=5, call_id="c1", at=_at(1.0)), CallStarted(seq=6, call_id="c2", at=_at(1.0)),
    ]
    for event in events:
        clock.now = event.at
        model.apply(event)
    clock.now = _at(1.5)
    model.apply(CallFinished(seq=7, call_id="c2", status=RunStatus.DONE, at=_at(1.5)))
    batch = model.index(0, 0, model.index(0, 0))
    assert _row(model, batch)[STATUS_COLUMN] == "running (1/3 done, ~7.5 s left)"  # find: 1.5 s, then read


def test_a_batch_row_is_current_whether_it_was_shown_before_its_calls_ended_or_only_after() -> None:
    shown_early, clock = _fed(8)
    lead = shown_early.index(0, 0)
    assert _row(shown_early, shown_early.index(1, 0, lead))[2] == "running (0/3 done)"  # painted: prepared now
    changed: list[int] = []
    shown_early.dataChanged.connect(lambda first, last, roles=(): changed.append(first.row()))
    for event in _batch_events()[8:]:
        clock.now = event.at
        shown_early.apply(event)
    assert _row(shown_early, shown_early.index(1, 0, lead))[2] == "done: 2 ok, 1 failed, 0 skipped"
    assert 1 in changed  # the view that painted it was told its row changed
    shown_late, _ = _fed()  # never read until now: prepared from the timeline as it is
    assert _row(shown_late, shown_late.index(1, 0, shown_late.index(0, 0))) == \
        _row(shown_early, shown_early.index(1, 0, lead))


def _conversation() -> list[Any]:
    at = datetime(2026, 12, 8, 9, 0, tzinfo=timezone.utc)
    words = (Message(message_id="m1", agent_id="main", kind="prompt", text="fix the docs", at=at),
             Message(message_id="m2", agent_id="main", kind="text", text="Reading first.\nThen editing.", at=at))
    return [AgentStarted(seq=1, agent_id="main", session_id="s", name="lead", agent_kind="claude-code"),
            ConversationRecorded(seq=2, agent_id="main", messages=words),
            CallQueued(seq=3, call_id="c1", agent_id="main", tool="Read", args={}, summary="README.md"),
            CallFinished(seq=4, call_id="c1", status=RunStatus.DONE, duration_s=0.01),
            ConversationRecorded(seq=5, agent_id="main", messages=(
                Message(message_id="m3", agent_id="main", kind="thinking", text="It reads fine.", at=at),))]


def test_what_an_agent_said_is_rows_among_its_calls_and_the_model_passes_qtmodeltester(qtmodeltester: Any) -> None:
    model = TimelineModel()
    qtmodeltester.check(model, force_py=True)
    for event in _conversation():
        model.apply(event)
    qtmodeltester.check(model, force_py=True)
    agent = model.index_of("a:main")
    shown = [[model.index(row, column, agent).data() for column in (0, 1)] for row in range(model.rowCount(agent))]
    assert shown == [["» prompt", "fix the docs"], ["✎ said", "Reading first. …"], ["Read", "README.md"],
                     ["☁ thought", "It reads fine."]]
    said = model.index(1, 0, agent)
    assert model.rowCount(said) == 0 and said.data(KEY_ROLE) == "m:m2"
    assert model.index(1, 1, agent).data(Qt.ItemDataRole.ToolTipRole) == "Reading first.\nThen editing."
    assert model.index(1, TIMELINE_COLUMN, agent).data(GANTT_ROLE) is None  # words have no bar
