"""What each timeline row says (gui.window.timeline.rows): a call's status and what it changed, an agent's
roll-up that a collapsed row must not hide, and a batch's progress and plan."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime

import pytest

from core import (
    AgentNode,
    AgentStatus,
    BatchNode,
    BatchTotals,
    ChangeKind,
    FileChange,
    GitChange,
    PlanInfo,
    RunNode,
    RunStatus,
)
from gui.window.timeline.rows import (
    agent_columns,
    agent_tip,
    batch_columns,
    batch_state,
    batch_tip,
    rollup_colour,
    run_columns,
)

AT = datetime(2026, 5, 4, 12, 0, tzinfo=UTC)


def _run(status: RunStatus = RunStatus.DONE, duration_s: float | None = 0.012, **fields: object) -> RunNode:
    return RunNode(call_id="c1", agent_id="a1", tool="Bash", summary="make build", args={}, status=status,
                   queued_at=AT, duration_s=duration_s, **fields)  # type: ignore[arg-type]


def _changed(*paths: str) -> tuple[FileChange, ...]:
    return tuple(FileChange(path=p, kind=ChangeKind.MODIFY, before_hash="a", after_hash="b") for p in paths)


def _agent(name: str, parent_id: str | None = None) -> AgentNode:
    return AgentNode(agent_id=name, name=name, agent_kind="scripted", session_id="s", parent_id=parent_id,
                     spawned_by=None, status=AgentStatus.RUNNING, started_at=AT)


@pytest.mark.parametrize(("status", "duration_s", "shown", "took"), [
    (RunStatus.DONE, 0.012, "✓ done", "12 ms"),
    (RunStatus.FAILED, 1.5, "✗ failed", "1.5 s"),
    (RunStatus.BLOCKED_ON_USER, None, "◐ waiting", ""),
    (RunStatus.TIMED_OUT, 30.0, "✗ timed out", "30.0 s"),
])
def test_a_call_row_says_its_tool_what_it_ran_how_it_ended_and_how_long_it_took(
        status: RunStatus, duration_s: float | None, shown: str, took: str) -> None:
    assert run_columns(_run(status, duration_s)) == ("Bash", "make build", shown, took, "", "")


def test_a_call_row_counts_what_it_changed_and_what_of_that_is_undone() -> None:
    commit = GitChange(ref="refs/heads/main", kind="commit", before="1", after="2", what="commit 2: build")
    run = _run(changes=_changed("a.c", "b.c", "c.c"), git_changes=(commit,))
    assert run_columns(run)[2:5] == ("✓ done", "12 ms", "3 files · 1 git ref")
    partly = _run(changes=_changed("a.c", "b.c", "c.c"), undone_paths=("b.c",))
    assert run_columns(partly)[2:5] == ("↶ partly undone", "12 ms", "3 files (1 undone)")
    whole = _run(changes=_changed("a.c"), undone_paths=("a.c",), undone_by="op-1")
    assert run_columns(whole)[2:5] == ("↶ undone", "12 ms", "1 file")


def test_an_agent_row_rolls_up_its_calls_most_urgent_first_and_takes_the_colour_of_what_needs_a_look() -> None:
    counts = Counter({RunStatus.DONE: 38, RunStatus.FAILED: 2, RunStatus.TIMED_OUT: 1, RunStatus.BLOCKED_ON_USER: 1})
    lead = _agent("lead")
    assert agent_columns(lead, counts) == ("lead", "42 calls · 1 waiting · 3 failed", "running", "", "", "")
    assert rollup_colour(counts) == "warning"  # a call waits for a person: that first
    assert rollup_colour(Counter({RunStatus.DONE: 3, RunStatus.TIMED_OUT: 1})) == "danger"
    assert rollup_colour(Counter({RunStatus.DONE: 3})) is None
    one = Counter({RunStatus.RUNNING: 1})
    assert agent_columns(lead, one)[1] == "1 call · 1 running"


def test_an_agent_tip_says_whose_sub_agent_it_is() -> None:
    lead, docs = _agent("lead"), _agent("docs-writer", parent_id="lead")
    counts = Counter({RunStatus.DONE: 2})
    assert agent_tip(docs, lead, counts) == "docs-writer, sub-agent of lead: 2 calls, its sub-agents' included"
    assert agent_tip(lead, None, counts).startswith("lead, scripted agent: 2 calls")


def _batch(**fields: object) -> BatchNode:
    plan = PlanInfo(levels=(("a", "b", "c"), ("d", "e"), ("f",)), critical_path=("a", "d", "f"), max_parallelism=3)
    return BatchNode(batch_id="b1", agent_id="a1", name="survey", size=6, plan=plan, started_at=AT,
                     **fields)  # type: ignore[arg-type]


def test_a_running_batch_says_how_far_it_got_and_how_long_it_expects_to_take_still() -> None:
    batch = _batch(statuses=Counter({RunStatus.DONE: 3, RunStatus.RUNNING: 2}))
    assert batch_columns(batch, live=True, left_s=4.2) == (
        "☰ survey", "6 calls · max parallel 3", "running (3/6 done, ~4.2 s left)", "", "", "")
    assert batch_columns(batch, live=False)[2] == "stopped (3/6 done)"  # its session ended before it did
    assert batch_state(batch, live=True) is RunStatus.RUNNING and batch_state(batch, live=False) is RunStatus.SKIPPED


def test_a_finished_batch_says_how_it_ended_with_what_its_sub_agents_did() -> None:
    totals = BatchTotals(succeeded=5, failed=1, skipped=0, cache_hits=2, duration_s=3.4, max_running=3)
    batch = _batch(statuses=Counter({RunStatus.DONE: 5, RunStatus.FAILED: 1}), totals=totals)
    counts = Counter({RunStatus.DONE: 15, RunStatus.FAILED: 2, RunStatus.BLOCKED_ON_USER: 1})
    cells = batch_columns(batch, live=False, counts=counts)
    assert cells[1] == "6 calls · max parallel 3 · +12 by sub-agents · 1 waiting · 2 failed · 2 cached"
    assert cells[2:4] == ("done: 5 ok, 1 failed, 0 skipped", "3.4 s")
    assert batch_state(batch, live=False) is RunStatus.FAILED


def test_a_batch_tip_gives_the_cells_in_full_and_the_plans_shape() -> None:
    batch = _batch()
    cells = batch_columns(batch, live=True)
    assert batch_tip(batch, cells) == ("Batch survey: 6 calls · max parallel 3\nrunning (0/6 done)\n"
                                       "3 levels of dependencies; critical path: a → d → f")
    unplanned = BatchNode(batch_id="b2", agent_id="a1", name="old", size=2, plan=None, started_at=AT)
    assert batch_tip(unplanned, batch_columns(unplanned, live=False)).endswith("Its plan was not recorded.")


def test_an_agent_row_names_the_tokens_its_branch_used_when_known() -> None:
    from datetime import datetime, timezone

    from core import AgentNode, AgentStatus
    from gui.window.timeline.rows import agent_columns, tokens_short
    agent = AgentNode("a1", "claude-code 1234", "claude-code", "s", None, None, AgentStatus.RUNNING,
                      datetime(2026, 12, 8, tzinfo=timezone.utc))
    assert agent_columns(agent, Counter())[4] == ""
    assert agent_columns(agent, Counter(), 48_213)[4] == "48k tokens"
    assert [tokens_short(n) for n in (3_200, 1_250_000)] == ["3,200 tokens", "1.2M tokens"]
