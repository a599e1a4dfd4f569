"""A timeline's time spans (core.timeline.spans): when its runs and batches waited, ran and ended, on which axis."""

from __future__ import annotations

import pytest

from core.events import (
    AgentFinished,
    AgentStarted,
    ApprovalRequested,
    BatchFinished,
    CallFinished,
    CallQueued,
    CallStarted,
)
from core.models.records import AgentStatus, RunStatus
from core.timeline.nodes import GanttSpan
from core.timeline.tree import Timeline
from tests.core.timeline.test_tree import _agent, _at, _batch_call, _started


def test_spans_are_seconds_on_the_batch_axis_for_its_calls_and_on_the_agent_axis_for_the_others() -> None:
    t = Timeline()
    t.apply(AgentStarted(agent_id="main", session_id="s", name="lead", agent_kind="scripted", at=_at(0)))
    t.apply(_started(10))
    t.apply(_batch_call("c1", "find", 11))  # waited a second for its dependencies
    t.apply(ApprovalRequested(call_id="c1", agent_id="main", tool="Read", summary="", reason="", args={},
                                    at=_at(12)))
    t.apply(CallStarted(call_id="c1", at=_at(14.5)))
    assert t.span("r:c1", _at(15)) == GanttSpan(0.0, 2.0, 4.5, 5.0, True, RunStatus.RUNNING)
    assert t.live("b:b1") and t.window("b:b1", _at(15)) == 5.0  # ends now while at work
    t.apply(CallFinished(call_id="c1", status=RunStatus.DONE, at=_at(16)))
    t.apply(_batch_call("c2", "ls", 16))
    t.apply(CallFinished(call_id="c2", status=RunStatus.DONE, cached=True, at=_at(16.01)))
    t.apply(_batch_call("c3", "read", 16.5))
    t.apply(CallFinished(call_id="c3", status=RunStatus.SKIPPED, at=_at(16.5)))
    t.apply(BatchFinished(batch_id="b1", succeeded=2, failed=0, skipped=1, cache_hits=1, duration_s=7,
                          max_running=1, at=_at(17)))
    later = _at(100)
    assert t.span("r:c1", later) == GanttSpan(0.0, 2.0, 4.5, 6.0, False, RunStatus.DONE)
    assert t.span("r:c2", later) == GanttSpan(0.0, None, None, pytest.approx(6.01), False, RunStatus.DONE,
                                              cached=True)
    assert t.span("r:c3", later).running_from is None and t.span("r:c3", later).status == RunStatus.SKIPPED
    assert t.window("b:b1", later) == 7.0 and t.group("r:c1") == "b:b1" and t.group("b:b1") == "a:main"
    assert t.span("b:b1", later) == GanttSpan(10.0, None, 10.0, 17.0, False, RunStatus.DONE)
    t.apply(CallQueued(call_id="c4", agent_id="main", tool="LS", args={}, summary="", at=_at(20)))
    assert t.span("r:c4", _at(21)) == GanttSpan(20.0, None, None, 21.0, True, RunStatus.QUEUED)
    assert t.window("a:main", _at(21)) == 21.0
    t.apply(CallFinished(call_id="c4", status=RunStatus.FAILED, at=_at(22)))
    assert t.window("a:main", later) == 22.0  # nothing at work: it ends with the last thing that happened


def test_a_batch_left_unfinished_by_its_agent_stops_growing() -> None:
    t = Timeline()
    t.apply(_agent("main"))
    t.apply(_started())
    assert t.live("b:b1") and t.live("a:main")  # between calls, still at work
    t.apply(AgentFinished(agent_id="main", status=AgentStatus.FAILED, message="cancelled"))
    assert not t.live("b:b1") and not t.live("a:main")
    assert t.span("b:b1", _at(50)).status == RunStatus.CANCELLED
