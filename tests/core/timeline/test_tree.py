"""The timeline read model: a tree from a flat stream of events."""

from __future__ import annotations

import asyncio
import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

from core.console import Console
from core.errors import ErrorInfo, ErrorKind
from core.events import (
    AgentStarted,
    ApprovalRequested,
    ApprovalResolved,
    BatchFinished,
    BatchStarted,
    CallFinished,
    CallQueued,
    CallStarted,
    ProposedFile,
)
from core.models.batches import PlanInfo
from core.models.records import AgentRecord, AgentStatus, BatchRecord, CallRecord, Decision, RunStatus
from core.timeline.excerpts import ARGS_CHARS, OUTPUT_HEAD_CHARS, OUTPUT_TAIL_CHARS, STRING_CHARS
from core.timeline.nodes import BatchTotals, GanttSpan, Inserted, RunNode, Updated
from core.timeline.tree import Timeline
from tests.conftest import run, wait_until


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
    t.watch(lambda changes: seen.extend(s for c in changes if isinstance(c, Inserted)
                                        for s in (f"begin {c.parent} {c.row}", f"end {c.key}")))
    t.apply(_agent("main"))
    t.apply(_call("c1", "main"))
    assert seen == ["begin None 0", "end a:main", "begin a:main 0", "end r:c1"]
    changes = t.apply(CallFinished(call_id="c1", status=RunStatus.DONE, duration_s=0.5))
    assert changes == [Updated("r:c1")] and t.runs["c1"].status == RunStatus.DONE
    assert t.counts()[RunStatus.DONE] == 1


def test_a_snapshot_is_independent_and_has_no_hooks() -> None:
    t = Timeline()
    t.watch(lambda changes: None)
    t.apply(_agent("main"))
    snap = t.snapshot()
    t.apply(_call("c1", "main"))
    assert snap.children("a:main") == [] and snap.watching == 0


def test_a_reloaded_sub_agent_sits_right_after_the_call_that_spawned_it() -> None:
    from datetime import datetime, timedelta, timezone

    from core.models.records import AgentRecord, AgentStatus, CallRecord, RunStatus

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


# -- batches and time spans ------------------------------------------------------------------------------

T0 = datetime(2026, 11, 22, 12, 0, tzinfo=timezone.utc)
PLAN = PlanInfo(levels=(("find", "ls"), ("read",)), critical_path=("find", "read"), max_parallelism=2)


def _at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def _batch_call(call_id: str, key: str, seconds: float, agent_id: str = "main", tool: str = "Read") -> CallQueued:
    return CallQueued(call_id=call_id, agent_id=agent_id, tool=tool, args={}, summary=key, batch_id="b1",
                      batch_key=key, at=_at(seconds))


def _started(seconds: float = 0) -> BatchStarted:
    return BatchStarted(batch_id="b1", agent_id="main", name="scan", plan=PLAN, size=3, at=_at(seconds))


def test_a_call_of_a_batch_before_its_batch_started_makes_the_batch_row_which_the_event_then_fills() -> None:
    t = Timeline()
    seen: list[str] = []
    t.watch(lambda changes: seen.extend(s for c in changes if isinstance(c, Inserted)
                                        for s in (f"begin {c.parent} {c.row}", f"end {c.key}")))
    t.apply(AgentStarted(agent_id="main", session_id="s", name="lead", agent_kind="scripted", at=_at(0)))
    t.apply(CallQueued(call_id="c0", agent_id="main", tool="LS", args={}, summary="", at=_at(0.5)))
    t.apply(_batch_call("c1", "find", 2))  # its BatchStarted comes late
    assert t.children("a:main") == ["r:c0", "b:b1"] and t.children("b:b1") == ["r:c1"]
    assert t.batches["b1"].name == "batch" and t.batches["b1"].plan is None
    changes = t.apply(_started(1))
    assert Updated("b:b1") in changes and Updated("r:c1") in changes  # the batch starts earlier: c1's span shifts
    batch = t.batches["b1"]
    assert (batch.name, batch.size, batch.plan, batch.started_at) == ("scan", 3, PLAN, _at(1))
    t.apply(_batch_call("c2", "ls", 2.5))
    t.apply(CallQueued(call_id="c3", agent_id="main", tool="Read", args={}, summary="", at=_at(3)))
    assert t.children("a:main") == ["r:c0", "b:b1", "r:c3"] and t.children("b:b1") == ["r:c1", "r:c2"]
    assert t.parent("r:c2") == "b:b1" and t.row("r:c2") == 1 and t.parent("b:b1") == "a:main"
    assert seen == ["begin None 0", "end a:main", "begin a:main 0", "end r:c0", "begin a:main 1", "end b:b1",
                    "begin b:b1 0", "end r:c1", "begin b:b1 1", "end r:c2",
                    "begin a:main 2", "end r:c3"]


def test_a_sub_agent_spawned_inside_a_batch_sits_in_the_batch_after_its_call() -> None:
    t = Timeline()
    t.apply(_agent("main"))
    t.apply(_started())
    t.apply(_batch_call("c1", "find", 1, tool="Task"))
    t.apply(_agent("sub", parent="main", spawned_by="c1"))
    t.apply(_call("c2", "sub", "Edit"))
    t.apply(_batch_call("c3", "read", 2))
    assert t.children("b:b1") == ["r:c1", "a:sub", "r:c3"] and t.children("a:sub") == ["r:c2"]
    assert t.parent("a:sub") == "b:b1" and t.agents["sub"].parent_id == "main"


def test_sub_agents_are_listed_in_the_trees_order_those_in_a_batch_where_the_batch_sits() -> None:
    """The agent filter's choices: a sub-agent spawned in a batch started earlier comes before one spawned later
    outside it, though it was spawned last; and the tools seen so far, without a walk of the runs."""
    t = Timeline()
    t.apply(_agent("main"))
    t.apply(_started())
    t.apply(_batch_call("c1", "find", 1, tool="Task"))
    t.apply(_call("c2", "main", "Task"))
    t.apply(_agent("outside", parent="main", spawned_by="c2"))
    t.apply(_agent("inside", parent="main", spawned_by="c1"))
    t.apply(_call("c3", "inside", "Edit"))
    assert t.children("a:main") == ["b:b1", "r:c2", "a:outside"] and t.children("b:b1") == ["r:c1", "a:inside"]
    assert t.sub_agents("a:main") == ["a:inside", "a:outside"]
    assert t.sub_agents("b:b1") == ["a:inside"] and t.sub_agents("a:inside") == []
    assert list(t.tools) == ["Task", "Edit"]


def test_a_rollup_counts_the_calls_of_sub_agents_at_any_depth_those_spawned_in_a_batch_too() -> None:
    t = Timeline()
    t.apply(_agent("main"))
    t.apply(_started())
    t.apply(_batch_call("c1", "find", 1, tool="Task"))
    t.apply(_agent("sub", parent="main", spawned_by="c1"))
    t.apply(_call("c2", "sub", "Task"))
    t.apply(_agent("deep", parent="sub", spawned_by="c2"))
    t.apply(_call("c3", "deep", "Edit"))
    t.apply(_call("c4", "deep", "Bash"))
    t.apply(CallFinished(call_id="c3", status=RunStatus.FAILED))
    t.apply(_call("c5", "main"))
    assert t.rollup("a:deep") == {RunStatus.FAILED: 1, RunStatus.QUEUED: 1}
    assert sum(t.rollup("a:sub").values()) == 3 and t.rollup("a:sub")[RunStatus.FAILED] == 1
    assert sum(t.rollup("b:b1").values()) == 4  # its call and the sub-agent it spawned, with its own
    assert sum(t.rollup("a:main").values()) == 5 and t.rollup("a:main")[RunStatus.FAILED] == 1
    assert t.agents["main"].statuses[RunStatus.FAILED] == 0  # its own calls alone did not fail


def test_a_batch_counts_its_calls_as_they_finish_and_keeps_its_totals() -> None:
    t = Timeline()
    t.apply(_agent("main"))
    t.apply(_started())
    t.apply(_batch_call("c1", "find", 1))
    assert t.apply(CallFinished(call_id="c1", status=RunStatus.DONE, cached=True, attempts=2)) == \
        [Updated("r:c1"), Updated("b:b1")]
    t.apply(_batch_call("c2", "ls", 1))
    t.apply(CallFinished(call_id="c2", status=RunStatus.SKIPPED))
    batch = t.batches["b1"]
    assert batch.statuses[RunStatus.DONE] == 1 and batch.statuses[RunStatus.SKIPPED] == 1
    assert t.runs["c1"].cached and t.runs["c1"].attempts == 2 and t.live("b:b1")  # not finished yet
    t.apply(BatchFinished(batch_id="b1", succeeded=1, failed=0, skipped=2, cache_hits=1, duration_s=3.5,
                          max_running=2, at=_at(4)))
    assert batch.totals == BatchTotals(1, 0, 2, 1, 3.5, 2) and batch.finished_at == _at(4)
    assert not t.live("b:b1") and t.counts()[RunStatus.SKIPPED] == 1


def _records() -> tuple[list[AgentRecord], list[BatchRecord], list[CallRecord]]:
    def call(call_id: str, seconds: float, batch_key: str | None, status: RunStatus = RunStatus.DONE,
             agent_id: str = "a") -> CallRecord:
        return CallRecord(call_id=call_id, session_id="s", agent_id=agent_id, agent_name="", tool="Read",
                          summary="", args={}, status=status, created_at=_at(seconds), duration_s=0.5,
                          batch_id="b1" if batch_key else None, batch_key=batch_key, cached=call_id == "c3")

    agents = [AgentRecord(agent_id="a", session_id="s", name="main", kind="scripted", parent_id=None,
                          spawned_by=None, status=AgentStatus.DONE, started_at=_at(0)),
              AgentRecord(agent_id="sub", session_id="s", name="helper", kind="subagent", parent_id="a",
                          spawned_by="c2", status=AgentStatus.DONE, started_at=_at(3.5))]
    batches = [BatchRecord(batch_id="b1", agent_id="a", name="scan", plan=PLAN, created_at=_at(2),
                           finished_at=_at(6), summary={"succeeded": 3, "failed": 0, "skipped": 0, "cache_hits": 1,
                                                        "duration_s": 4.0, "max_running": 2})]
    calls = [call("c1", 1, None), call("c2", 3, "find"), call("c3", 3, "ls"), call("c5", 4, None, agent_id="sub"),
             call("c4", 5, "read"), call("c6", 7, None)]
    return agents, batches, calls


def test_a_reloaded_journal_shows_the_same_groups() -> None:
    agents, batches, calls = _records()
    t = Timeline()
    t.load(agents, calls, (), batches)
    assert t.children("a:a") == ["r:c1", "b:b1", "r:c6"]
    assert t.children("b:b1") == ["r:c2", "r:c3", "a:sub", "r:c4"] and t.children("a:sub") == ["r:c5"]
    batch = t.batches["b1"]
    assert (batch.name, batch.size, batch.totals.cache_hits, batch.statuses[RunStatus.DONE]) == ("scan", 3, 1, 3)
    assert t.runs["c3"].cached and t.runs["c2"].batch_key == "find"
    # Only the duration of a reloaded call is known: it is drawn from when it was queued.
    assert t.span("r:c4", _at(100)) == GanttSpan(0.0, None, 3.0, 3.5, False, RunStatus.DONE)
    assert not t.live("b:b1") and t.window("b:b1", _at(100)) == 4.0


def test_a_reloaded_batch_that_never_finished_is_interrupted_not_at_work() -> None:
    agents, batches, calls = _records()
    unfinished = [batches[0].model_copy(update={"finished_at": None, "summary": None})]
    t = Timeline()
    t.load(agents, calls, (), unfinished)
    assert t.batches["b1"].interrupted and not t.live("b:b1")
    assert t.span("b:b1", _at(100)).status == RunStatus.INTERRUPTED
    orphan = Timeline()
    orphan.load(agents, calls)  # no batch records: the batch is made from its calls
    assert orphan.children("b:b1")[:2] == ["r:c2", "r:c3"] and not orphan.live("b:b1")


# -- what the timeline keeps of each call: excerpts, whatever the agent sent ----------------------------------------

ARGS_CAP = ARGS_CHARS + 2 * STRING_CHARS + 200
"""The most an excerpt of arguments may reach: the budget, the string that crosses it, the markers."""
CAP = 2 * ARGS_CAP + 2 * (OUTPUT_HEAD_CHARS + OUTPUT_TAIL_CHARS + 100) + STRING_CHARS
"""The most one call's node may keep, in characters: its arguments (and an answered question's), its output
and its error's message, its summary."""
MB = 1024 * 1024


def _kept(node: RunNode) -> int:
    """Characters of arguments, output and approval a node holds (what grows with what the agent sent)."""
    approval = len(node.approval.model_dump_json()) if node.approval is not None else 0
    error = len(node.error.message) if node.error is not None else 0
    return len(json.dumps(node.args)) + len(node.output) + len(node.live_output) + error + approval


def test_large_calls_leave_nodes_no_bigger_than_the_cap_live_and_reloaded(workspace: Path, state_dir: Path) -> None:
    async def scenario() -> None:
        async with Console(workspace) as console:
            console.set_mode("bypass")
            agent = await console.start_agent("agent", "scripted")
            for i in range(12):
                done = await console.call(agent, "Write", {"file_path": str(workspace / f"big{i}.txt"),
                                                           "content": f"{i}" + "x" * MB})
                assert done.status == RunStatus.DONE
            shown = await console.call(agent, "Bash", {"command": "seq 1 200000"})
            runs = list(console.timeline.runs.values())
            assert max(_kept(node) for node in runs) < CAP
            node = console.timeline.runs[done.call_id]
            assert node.args_cut and node.args["file_path"].endswith("big11.txt")
            assert node.args["content"].endswith(f"{MB + 2 - STRING_CHARS:,} more characters in the journal]")
            assert console.timeline.runs[shown.call_id].output_cut
            record = await console.call_record(done.call_id)  # the journal keeps it whole
            assert record is not None and len(record.args["content"]) == MB + len(str(11))
        async with Console(workspace) as reopened:  # an earlier session's calls, read from the journal
            reloaded = reopened.timeline.runs[done.call_id]
            assert len(reopened.timeline.runs) == 13 and max(_kept(n) for n in reopened.timeline.runs.values()) < CAP
            assert reloaded.args == node.args and reloaded.args_cut
            assert reopened.timeline.runs[shown.call_id].output_cut

    run(scenario())


def test_an_approval_keeps_its_diff_while_it_waits_and_drops_it_once_answered(workspace: Path) -> None:
    target = workspace / "README.md"

    async def scenario() -> None:
        async with Console(workspace) as console:
            console.register_approver("test")
            agent = await console.start_agent("agent", "scripted")
            content = "new line\n" * 100_000
            task = asyncio.ensure_future(console.call(agent, "Write", {"file_path": str(target), "content": content}))
            await wait_until(console.pending_approvals, what="the approval request")
            [request] = console.pending_approvals()
            node = console.timeline.runs[request.call_id]
            assert node.approval is not None and node.approval.diffs and node.approval.proposed
            assert node.approval.proposed[0].content == content  # the panel can still edit the whole of it
            console.approve(request.call_id)
            assert (await task).status == RunStatus.DONE
            assert node.approval is not None and node.approval.diffs == () and node.approval.proposed == ()
            assert node.approval.reason == request.reason and _kept(node) < CAP
            assert target.read_text() == content

    run(scenario())


def test_what_an_outside_agent_sends_is_bounded_too_summary_output_error_and_answered_question() -> None:
    t = Timeline()
    huge = "z" * MB
    t.apply(CallQueued(call_id="c1", agent_id="main", tool="mcp__x__y", summary=huge, args={"blob": huge}))
    t.apply(ApprovalRequested(call_id="c1", agent_id="main", tool="mcp__x__y", summary=huge, reason="asks",
                              args={"blob": huge}, proposed=(ProposedFile(path="a", content=huge),)))
    node = t.runs["c1"]
    assert node.approval is not None and node.approval.proposed[0].content == huge  # whole while it waits
    t.apply(ApprovalResolved(call_id="c1", decision=Decision.APPROVED))
    t.apply(CallFinished(call_id="c1", status=RunStatus.FAILED, output=huge,
                         error=ErrorInfo(kind=ErrorKind.SYSTEM, message=huge)))
    assert _kept(node) + len(node.summary) < CAP and node.output_cut and node.args_cut
    assert node.approval is not None and node.approval.reason == "asks" and node.approval.proposed == ()
    assert node.error is not None and node.error.kind == ErrorKind.SYSTEM


def test_the_status_counts_are_kept_as_runs_come_and_change_and_agree_with_a_recount() -> None:
    from collections import Counter

    t = Timeline()
    t.apply(_agent("main"))
    for i in range(300):
        t.apply(_call(f"c{i}", "main"))
        if i % 3:
            t.apply(CallStarted(call_id=f"c{i}"))
        if i % 3 == 2:
            status = RunStatus.FAILED if i % 7 == 0 else RunStatus.DONE
            t.apply(CallFinished(call_id=f"c{i}", status=status, duration_s=0.1))
    counts = t.counts()
    assert counts == Counter(run.status for run in t.runs.values())
    assert counts[RunStatus.QUEUED] == 100 and counts[RunStatus.RUNNING] == 100 and sum(counts.values()) == 300
    counts[RunStatus.DONE] += 5  # a copy: the caller's changes do not reach the timeline's tally
    assert t.counts() == Counter(run.status for run in t.runs.values())
