"""The timeline read model: a tree from a flat stream of events."""

from __future__ import annotations

from core.events import AgentStarted, CallFinished, CallQueued
from core.models import RunStatus
from core.timeline import Inserted, Timeline, Updated


def _agent(agent_id: str, parent: str | None = None, spawned_by: str | None = None) -> AgentStarted:
    return AgentStarted(agent_id=agent_id, session_id="s", name=agent_id, agent_kind="scripted",
                        parent_id=parent, spawned_by=spawned_by)


def _call(call_id: str, agent_id: str, tool: str = "Read") -> CallQueued:
    return CallQueued(call_id=call_id, agent_id=agent_id, tool=tool, args={}, summary="")


def test_sub_agents_sit_under_their_parent_after_the_spawning_call() -> None:
    t = Timeline()
    t.apply(_agent("main"))
    t.apply(_call("c1", "main", "Task"))
    t.apply(_agent("sub", parent="main", spawned_by="c1"))
    t.apply(_call("c2", "sub", "Edit"))
    t.apply(_call("c3", "main"))
    assert t.children(None) == ["a:main"]
    assert t.children("a:main") == ["r:c1", "a:sub", "r:c3"]
    assert t.children("a:sub") == ["r:c2"]
    assert t.parent("r:c2") == "a:sub" and t.row("r:c3") == 2


def test_a_sub_agent_with_an_unknown_parent_is_shown_at_the_top() -> None:
    t = Timeline()
    t.apply(_agent("orphan", parent="never-seen"))
    assert t.children(None) == ["a:orphan"]


def test_a_call_from_an_unknown_agent_gets_a_placeholder_agent() -> None:
    t = Timeline()
    changes = t.apply(_call("c1", "ghost"))
    assert [type(c) for c in changes] == [Inserted, Inserted]
    assert t.agents["ghost"].name == "unknown agent"


def test_updates_report_the_row_and_hooks_bracket_every_insert() -> None:
    t = Timeline()
    seen: list[str] = []
    t.before_insert = lambda parent, row: seen.append(f"begin {parent} {row}")
    t.after_insert = lambda key: seen.append(f"end {key}")
    t.apply(_agent("main"))
    t.apply(_call("c1", "main"))
    assert seen == ["begin None 0", "end a:main", "begin a:main 0", "end r:c1"]
    changes = t.apply(CallFinished(call_id="c1", status=RunStatus.DONE, duration_s=0.5))
    assert changes == [Updated("r:c1")] and t.runs["c1"].status == RunStatus.DONE
    assert t.counts()[RunStatus.DONE] == 1


def test_a_snapshot_is_independent_and_has_no_hooks() -> None:
    t = Timeline()
    t.before_insert = lambda parent, row: None
    t.apply(_agent("main"))
    snap = t.snapshot()
    t.apply(_call("c1", "main"))
    assert snap.children("a:main") == [] and snap.before_insert is None


def test_a_reloaded_sub_agent_sits_right_after_the_call_that_spawned_it() -> None:
    from datetime import datetime, timedelta, timezone

    from core.models import AgentRecord, AgentStatus, CallRecord, RunStatus

    t0 = datetime(2026, 11, 22, tzinfo=timezone.utc)

    def call(call_id: str, agent_id: str, seconds: int) -> CallRecord:
        return CallRecord(call_id=call_id, session_id="s", agent_id=agent_id, agent_name="", tool="Read",
                          summary="", args={}, status=RunStatus.DONE, created_at=t0 + timedelta(seconds=seconds),
                          duration_s=0.1)

    agents = [AgentRecord(agent_id="a", session_id="s", name="main", kind="scripted", parent_id=None,
                          spawned_by=None, status=AgentStatus.DONE, started_at=t0),
              AgentRecord(agent_id="b", session_id="s", name="helper", kind="subagent", parent_id="a",
                          spawned_by="c2", status=AgentStatus.DONE, started_at=t0 + timedelta(seconds=3))]
    timeline = Timeline()
    timeline.load(agents, [call("c1", "a", 1), call("c2", "a", 2), call("c3", "b", 4), call("c4", "a", 5)])
    assert timeline.children("a:a") == ["r:c1", "r:c2", "a:b", "r:c4"]
