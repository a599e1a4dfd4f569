"""Batches through the whole console: dataflow order, references, skips, fail-fast, parallelism, the journal.

Real consoles on temporary workspaces, real tools.  Timing assertions are about order and overlap
(which call started before which ended), never about absolute speed.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from core import Console, RunStatus
from core.models.batches import BatchCall
from core.orchestration.graph import BatchError, CycleError
from core.process.overlay import overlay_support
from core.tools.base import Annotations, RunTool, ToolArgs, ToolContext, ToolOutput
from core.tools.catalog import default_tools
from tests.conftest import run


class NapArgs(ToolArgs):
    seconds: float


def _calls(*specs: dict[str, object]) -> list[BatchCall]:
    return [BatchCall.model_validate(s) for s in specs]


async def _batch(workspace: Path, calls: list[BatchCall], **options: object):  # type: ignore[no-untyped-def]
    async with Console(workspace) as console:
        console.set_mode("bypass")
        agent = await console.start_agent("planner", "scripted")
        report = await console.run_batch(agent, calls, **options)  # type: ignore[arg-type]
        history = await console.history()
        return report, history, console.timeline


def test_a_reference_feeds_one_calls_result_into_the_next(workspace: Path) -> None:
    calls = _calls(
        {"id": "find", "tool": "Glob", "args": {"pattern": "src/shop/cart.py", "path": str(workspace)}},
        {"id": "read", "tool": "Read", "args": {"file_path": "${find.data.files[0]}"}},
        {"id": "note", "tool": "Write", "args": {"file_path": str(workspace / "note.txt"),
                                                "content": "first line of the cart: ${read.text}"}},
    )
    report, history, _ = run(_batch(workspace, calls))
    assert report.ok and [r.status for r in report.results] == ["done"] * 3
    assert report.plan.levels == (("find",), ("read",), ("note",)) and report.plan.max_parallelism == 1
    assert "class Cart" in (workspace / "note.txt").read_text()
    assert [c.batch_key for c in history] == ["find", "read", "note"]
    assert len({c.batch_id for c in history}) == 1


def test_a_failed_call_skips_its_dependents_with_the_reason_and_the_rest_go_on(workspace: Path) -> None:
    calls = _calls(
        {"id": "missing", "tool": "Read", "args": {"file_path": str(workspace / "nope.txt")}},
        {"id": "after", "tool": "Read", "args": {"file_path": "${missing.data.path}"}},
        {"id": "after_after", "tool": "LS", "args": {"path": str(workspace)}, "depends_on": ["after"]},
        {"id": "independent", "tool": "LS", "args": {"path": str(workspace)}},
    )
    report, history, timeline = run(_batch(workspace, calls))
    by_id = {r.id: r for r in report.results}
    assert by_id["missing"].status == "failed" and by_id["independent"].status == "done"
    assert by_id["after"].status == "skipped" and "missing did not succeed" in by_id["after"].text
    assert by_id["after_after"].status == "skipped" and "after was skipped" in by_id["after_after"].text
    assert (report.succeeded, report.failed, report.skipped) == (1, 1, 2) and not report.ok
    skipped = [c for c in history if c.status == RunStatus.SKIPPED]
    assert sorted(c.batch_key for c in skipped) == ["after", "after_after"]  # journaled, shown in the timeline
    assert all(timeline.runs[c.call_id].status == RunStatus.SKIPPED for c in skipped)


def test_a_bad_reference_skips_the_call_naming_what_is_wrong(workspace: Path) -> None:
    calls = _calls(
        {"id": "ls", "tool": "LS", "args": {"path": str(workspace)}},
        {"id": "read", "tool": "Read", "args": {"file_path": "${ls.data.entries[99]}"}},
    )
    report, _, _ = run(_batch(workspace, calls))
    [_, read] = report.results
    assert read.status == "skipped" and "index 99 is out of range" in read.text and "args.file_path" in read.text


def test_fail_fast_starts_nothing_after_the_first_failure(workspace: Path) -> None:
    calls = _calls(
        {"id": "bad", "tool": "Read", "args": {"file_path": str(workspace / "nope.txt")}},
        {"id": "later", "tool": "LS", "args": {"path": str(workspace)}, "depends_on": ["slow"]},
        {"id": "slow", "tool": "Bash", "args": {"command": "sleep 0.3"}},
    )
    report, _, _ = run(_batch(workspace, calls, fail_fast=True, concurrency=1))
    by_id = {r.id: r for r in report.results}
    assert by_id["bad"].status == "failed"
    assert by_id["later"].status == "skipped" and "stops at the first failure" in by_id["later"].text


def test_a_cycle_is_refused_with_its_path_before_anything_runs(workspace: Path) -> None:
    calls = _calls(
        {"id": "a", "tool": "LS", "args": {"path": str(workspace)}, "depends_on": ["c"]},
        {"id": "b", "tool": "LS", "args": {"path": str(workspace)}, "depends_on": ["a"]},
        {"id": "c", "tool": "LS", "args": {"path": str(workspace)}, "depends_on": ["b"]},
    )
    with pytest.raises(CycleError) as raised:
        run(_batch(workspace, calls))
    assert "a -> c -> b -> a" in str(raised.value) or "a -> b -> c -> a" in str(raised.value)
    with pytest.raises(BatchError, match="unknown|not in the batch"):
        run(_batch(workspace, _calls({"id": "a", "tool": "LS", "args": {}, "depends_on": ["ghost"]})))


class Nap(RunTool):
    """A read-only tool that takes a while: a stand-in for a slow search, so overlap can be seen."""

    name = "Nap"
    description = "Wait a moment, change nothing."
    Args = NapArgs
    annotations = Annotations(read_only=True, destructive=False, idempotent=True)

    async def run(self, args: ToolArgs, ctx: ToolContext) -> ToolOutput:
        assert isinstance(args, NapArgs)
        await asyncio.sleep(args.seconds)
        return ToolOutput(f"napped {args.seconds} s", {"seconds": args.seconds})


def test_independent_calls_run_at_once_up_to_the_cap(workspace: Path) -> None:
    naps = _calls(*[{"id": f"n{i}", "tool": "Nap", "args": {"seconds": 0.3}} for i in range(5)])

    async def scenario():  # type: ignore[no-untyped-def]
        async with Console(workspace, tools=[*default_tools(), Nap()]) as console:
            agent = await console.start_agent("planner", "scripted")
            return await console.run_batch(agent, naps, concurrency=3)

    report = run(scenario())
    # In two waves, not five: three naps ran at once (the cap), never more.
    assert report.ok and report.max_running == 3 and report.plan.max_parallelism == 5
    # Two Bash commands could each change anything: each in a layer of its own, they run at once (their changes
    # land as each ends); where there are no layers, they never overlap (one author at a time).
    sleepers = [{"id": f"s{i}", "tool": "Bash", "args": {"command": "sleep 0.3"}} for i in range(2)]
    both, _, _ = run(_batch(workspace, _calls(*sleepers)))
    [first, second] = both.results
    assert second.started_s is not None and first.started_s is not None and first.duration_s is not None
    one_then_other = second.started_s >= first.started_s + first.duration_s - 0.05
    other_then_one = first.started_s >= second.started_s + (second.duration_s or 0) - 0.05
    assert (one_then_other or other_then_one) != overlay_support().available


def test_a_read_declared_before_an_edit_of_the_same_file_runs_first(workspace: Path) -> None:
    target = workspace / "src" / "shop" / "cart.py"
    calls = _calls(
        {"id": "read", "tool": "Read", "args": {"file_path": str(target)}},
        {"id": "edit", "tool": "Edit", "args": {"file_path": str(target), "old_string": "class Cart",
                                               "new_string": "class Cart  # checked"}},
    )
    report, _, _ = run(_batch(workspace, calls))
    assert report.ok, [r.text for r in report.results]
    assert report.plan.levels == (("read",), ("edit",))  # the tool's declared dependency
    assert "# checked" in target.read_text()


def test_the_second_identical_read_is_a_cache_hit_until_the_file_changes(workspace: Path) -> None:
    target = workspace / "README.md"

    async def scenario() -> None:
        async with Console(workspace) as console:
            console.set_mode("bypass")
            agent = await console.start_agent("agent", "scripted")
            first = await console.call(agent, "Read", {"file_path": str(target)})
            second = await console.call(agent, "Read", {"file_path": str(target)})
            assert not first.cached and second.cached and second.text == first.text
            target.write_text(target.read_text() + "appended by the editor\n")  # not through Belay
            third = await console.call(agent, "Read", {"file_path": str(target)})
            assert not third.cached and "appended by the editor" in third.text
            await console.call(agent, "Bash", {"command": "echo 'by a command' >> README.md"})
            fourth = await console.call(agent, "Read", {"file_path": str(target)})
            assert not fourth.cached and "by a command" in fourth.text
            stats = console.cache_stats()
            assert stats is not None and stats.hits == 1 and stats.misses >= 3
            grep = {"pattern": "Cart", "path": str(workspace / "src")}
            await console.call(agent, "Grep", grep)
            assert (await console.call(agent, "Grep", grep)).cached
            (workspace / "src" / "shop" / "new.py").write_text("class Cart2: pass\n")
            again = await console.call(agent, "Grep", grep)
            assert not again.cached and "new.py" in again.text
            [record] = [r for r in await console.history() if r.call_id == second.call_id]
            assert record.cached  # journaled as served from the cache

    run(scenario())


def test_a_denied_read_is_never_served_from_the_cache(workspace: Path) -> None:
    target = workspace / "README.md"

    async def scenario() -> None:
        async with Console(workspace) as console:
            console.set_mode("bypass")
            agent = await console.start_agent("agent", "scripted")
            await console.call(agent, "Read", {"file_path": str(target)})
            await console.add_rule("Read(./README.md)", "deny", "session")
            denied = await console.call(agent, "Read", {"file_path": str(target)})
            assert denied.status == RunStatus.DENIED and not denied.cached

    run(scenario())


def test_calls_get_their_own_timeout_and_settings_set_the_default(workspace: Path) -> None:
    (workspace / ".belay").mkdir()
    (workspace / ".belay" / "settings.toml").write_text("[timeouts]\nBash = 1\n")

    async def scenario() -> None:
        async with Console(workspace) as console:
            console.set_mode("bypass")
            agent = await console.start_agent("agent", "scripted")
            slow = await console.call(agent, "Bash", {"command": "sleep 5"})
            assert slow.status == RunStatus.TIMED_OUT and slow.error is not None
            assert slow.error.category == "timeout" and slow.error.recoverable
            report = await console.run_batch(agent, _calls(
                {"id": "quick", "tool": "Bash", "args": {"command": "sleep 5"}, "timeout_s": 0.5}))
            assert report.results[0].status == "timed_out"

    run(scenario())


def test_a_call_ordered_after_a_failure_on_the_same_file_still_runs(workspace: Path) -> None:
    target = workspace / "notes.txt"
    calls = _calls(
        {"id": "edit_missing", "tool": "Edit", "args": {"file_path": str(target), "old_string": "x", "new_string": "y"}},
        {"id": "write", "tool": "Write", "args": {"file_path": str(target), "content": "fresh\n"}},
    )
    report, _, _ = run(_batch(workspace, calls))
    by_id = {r.id: r for r in report.results}
    assert report.plan.levels == (("edit_missing",), ("write",))  # same file: one after the other
    assert by_id["edit_missing"].status == "failed" and by_id["write"].status == "done"  # order, not data
    assert target.read_text() == "fresh\n"


def test_a_plan_can_ask_for_approval_of_a_call_the_policy_would_allow(workspace: Path) -> None:
    calls = _calls({"id": "look", "tool": "LS", "args": {"path": str(workspace)}, "requiresApproval": True})

    async def scenario() -> None:
        async with Console(workspace) as console:
            console.register_approver("test")
            agent = await console.start_agent("planner", "scripted")
            batch = asyncio.ensure_future(console.run_batch(agent, calls))
            while not console.pending_approvals():
                await asyncio.sleep(0.01)
            [request] = console.pending_approvals()
            assert "asks for a person's approval" in request.reason
            console.approve(request.call_id)
            assert (await batch).results[0].status == "done"

    run(scenario())
