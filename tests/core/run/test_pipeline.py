"""Belay's own calls through the real console: bad input, tools an agent lacks, writes after approval, endings."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from core import Console, ErrorKind, RunStatus
from core.run.pipeline import EDITED_NOTE
from core.tools.base import Annotations, RunTool, ToolArgs, ToolContext, ToolOutput
from core.tools.catalog import default_tools
from tests.conftest import run, wait_until


class HoldArgs(ToolArgs):
    crash: bool = False


class Hold(RunTool[HoldArgs]):
    """A read-only tool that crashes when asked to, or else works until it is cancelled."""

    name = "Hold"
    description = "Wait until cancelled, or crash."
    Args = HoldArgs
    annotations = Annotations(read_only=True, destructive=False)

    def __init__(self) -> None:
        self.stopped = asyncio.Event()

    async def run(self, args: HoldArgs, ctx: ToolContext) -> ToolOutput:
        if args.crash:
            raise RuntimeError("the tool fell over")
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            self.stopped.set()
            raise
        return ToolOutput("never")


def test_malformed_arguments_fail_with_what_the_tool_takes_and_are_journaled_as_sent(workspace: Path) -> None:
    async def scenario() -> None:
        async with Console(workspace) as console:
            agent = await console.start_agent("agent", "scripted")
            listed = await console.call(agent, "Read", ["README.md"])
            assert listed.status == RunStatus.FAILED and listed.error is not None
            assert listed.error.kind == ErrorKind.INVALID_ARGS and "must be a JSON object, got list" in listed.text
            misnamed = await console.call(agent, "Read", {"path": str(workspace / "README.md")})
            assert misnamed.status == RunStatus.FAILED and misnamed.error is not None
            assert "file_path" in misnamed.error.message and "path" in misnamed.error.message
            assert misnamed.error.suggestion == "Read takes: file_path, offset (optional), limit (optional)."
            records = {r.call_id: r for r in await console.history()}
            assert records[listed.call_id].args == {"_raw": "['README.md']"}
            assert records[listed.call_id].summary == "invalid arguments"
            assert records[misnamed.call_id].args == {"path": str(workspace / "README.md")}
            assert all(r.status == RunStatus.FAILED for r in records.values())

    run(scenario())


def test_an_agent_calling_a_tool_it_was_not_given_is_told_the_ones_it_has(workspace: Path) -> None:
    async def scenario() -> None:
        async with Console(workspace) as console:
            console.register_approver("test")
            agent = await console.start_agent("reader", "scripted", tools=["Read", "Grep"])
            for tool in ("Write", "Frobnicate"):  # one registered but not the agent's, one that does not exist
                outcome = await console.call(agent, tool, {"file_path": str(workspace / "x"), "content": "1"})
                assert outcome.status == RunStatus.FAILED and outcome.error is not None
                assert outcome.error.kind == ErrorKind.UNKNOWN_TOOL
                assert outcome.error.message == f"reader has no tool named {tool!r}"
                assert outcome.error.suggestion == "Available tools: Grep, Read."
            assert console.pending_approvals() == []

    run(scenario())
    assert not (workspace / "x").exists()


def test_a_write_lands_after_approval_and_the_persons_version_is_what_is_journaled(workspace: Path) -> None:
    target = workspace / "README.md"
    original = target.read_text()

    async def scenario() -> None:
        async with Console(workspace) as console:
            console.register_approver("test")
            agent = await console.start_agent("agent", "scripted")
            task = asyncio.ensure_future(console.call(agent, "Write", {"file_path": str(target),
                                                                       "content": "agent's version\n"}))
            await wait_until(console.pending_approvals, what="the approval request")
            [request] = console.pending_approvals()
            [waiting] = await console.history()
            assert waiting.status == RunStatus.BLOCKED_ON_USER and waiting.changes == ()
            assert target.read_text() == original
            console.approve(request.call_id, edited={"README.md": "person's version\n"})
            outcome = await task
            assert outcome.status == RunStatus.DONE and outcome.text.endswith(EDITED_NOTE)
            assert outcome.data["paths"] == ["README.md"]
            assert target.read_text() == "person's version\n"
            assert (await console.undo(outcome.call_id)).ok
            assert target.read_text() == original
            assert (await console.redo(outcome.call_id)).ok
            assert target.read_text() == "person's version\n"  # what was recorded is what landed, not the agent's

    run(scenario())


def test_an_edit_that_cannot_apply_fails_without_asking_anyone(workspace: Path) -> None:
    target = workspace / "src" / "shop" / "cart.py"
    original = target.read_text()

    async def scenario() -> None:
        async with Console(workspace) as console:
            console.register_approver("test")
            agent = await console.start_agent("agent", "scripted")
            outcome = await console.call(agent, "Edit", {"file_path": str(target), "old_string": "no such text",
                                                         "new_string": "anything"})
            assert outcome.status == RunStatus.FAILED and outcome.error is not None
            assert outcome.error.kind == ErrorKind.NOT_FOUND
            assert outcome.error.message == "old_string not found in src/shop/cart.py"
            assert console.timeline.runs[outcome.call_id].approval is None  # never put before the person

    run(scenario())
    assert target.read_text() == original


def test_cancelling_a_running_call_stops_the_tool_and_records_it_cancelled(workspace: Path) -> None:
    hold = Hold()

    async def scenario() -> None:
        async with Console(workspace, tools=[*default_tools(), hold]) as console:
            agent = await console.start_agent("agent", "scripted")
            task = asyncio.ensure_future(console.call(agent, "Hold", {}))

            def running() -> list[str]:
                return [c for c, r in console.timeline.runs.items() if r.status == RunStatus.RUNNING]

            await wait_until(running, what="the call to start")
            [call_id] = running()
            assert console.cancel(call_id)
            outcome = await task
            assert outcome.status == RunStatus.CANCELLED
            assert hold.stopped.is_set()
            [record] = await console.history()
            assert record.status == RunStatus.CANCELLED and record.error is not None
            assert record.error.kind == ErrorKind.CANCELLED

    run(scenario())


@pytest.mark.allow_warning_logs
def test_a_tool_that_crashes_becomes_a_failed_run_and_the_console_carries_on(workspace: Path) -> None:
    async def scenario() -> None:
        async with Console(workspace, tools=[*default_tools(), Hold()]) as console:
            agent = await console.start_agent("agent", "scripted")
            crashed = await console.call(agent, "Hold", {"crash": True})
            assert crashed.status == RunStatus.FAILED and crashed.error is not None
            assert crashed.error.kind == ErrorKind.SYSTEM
            assert crashed.error.message == "Hold failed unexpectedly: RuntimeError('the tool fell over')"
            after = await console.call(agent, "Read", {"file_path": str(workspace / "README.md")})
            assert after.status == RunStatus.DONE
            records = {r.call_id: r.status for r in await console.history()}
            assert records == {crashed.call_id: RunStatus.FAILED, after.call_id: RunStatus.DONE}

    run(scenario())


def test_a_write_approved_in_part_writes_only_the_accepted_hunks_and_tells_the_agent_which_were_not(
        workspace: Path) -> None:
    target = workspace / "src" / "app.py"
    old = [f"    value_{n} = x + {n}\n" for n in range(2000)]
    new = list(old)
    for k in range(30):
        new[15 + k * 66] = f"    value_{15 + k * 66} = x * 2  # the agent's\n"
    target.write_text("".join(old))
    rejected = {2, 8, 11, 15, 20, 26, 29}
    expected = list(new)
    for k in rejected:
        expected[15 + k * 66] = old[15 + k * 66]

    async def scenario() -> None:
        async with Console(workspace) as console:
            console.register_approver("test")
            agent = await console.start_agent("agent", "scripted")
            task = asyncio.ensure_future(console.call(agent, "Write", {"file_path": str(target),
                                                                       "content": "".join(new)}))
            await wait_until(console.pending_approvals, what="the approval request")
            [request] = console.pending_approvals()
            assert len(request.diffs[0].hunks) == 30
            console.approve(request.call_id, hunks={"src/app.py": set(range(30)) - rejected},
                            reason="keep the additions")
            outcome = await task
            assert outcome.status == RunStatus.DONE
            assert ("hunks 3, 9, 12, 16, 21, 27 and 30 of 30 in src/app.py were not applied: keep the additions."
                    in outcome.text), outcome.text
            assert target.read_bytes() == "".join(expected).encode()
            [record] = await console.history()
            assert record.decision is not None and record.decision.decision.value == "approved_edited"
            assert record.decision.reason.startswith("hunks 3, 9, 12, 16, 21, 27 and 30 of 30 in src/app.py")
            assert (await console.undo(outcome.call_id)).ok
            assert target.read_text() == "".join(old)

    run(scenario())


def test_a_partial_approval_of_a_new_file_is_refused_and_nothing_is_written(workspace: Path) -> None:
    target = workspace / "fresh.txt"

    async def scenario() -> None:
        async with Console(workspace) as console:
            console.register_approver("test")
            agent = await console.start_agent("agent", "scripted")
            task = asyncio.ensure_future(console.call(agent, "Write", {"file_path": str(target), "content": "a\n"}))
            await wait_until(console.pending_approvals, what="the approval request")
            [request] = console.pending_approvals()
            console.approve(request.call_id, hunks={"fresh.txt": ()})
            outcome = await task
            assert outcome.status == RunStatus.DENIED
            assert "fresh.txt is created whole by this call, so it cannot be approved in part" in outcome.text

    run(scenario())
    assert not target.exists()


def test_a_notebook_cell_edit_approved_in_part_writes_the_cell_as_the_accepted_hunks_show_it(
        workspace: Path) -> None:
    target = workspace / "analysis.ipynb"
    lines = [f"step_{n} = {n}\n" for n in range(30)]
    cells = [{"cell_type": "code", "execution_count": 1, "id": "c1", "metadata": {},
              "outputs": [{"name": "stdout", "output_type": "stream", "text": ["ok\n"]}], "source": lines}]
    target.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1)
                      + "\n")
    new_source = "".join(lines).replace("step_2 = 2\n", "step_2 = 'two'\n").replace("step_28 = 28\n", "step_28 = -28\n")

    async def scenario() -> None:
        async with Console(workspace) as console:
            console.register_approver("test")
            agent = await console.start_agent("agent", "scripted")
            task = asyncio.ensure_future(console.call(agent, "NotebookEdit", {
                "notebook_path": str(target), "cell_id": "c1", "new_source": new_source}))
            await wait_until(console.pending_approvals, what="the approval request")
            [request] = console.pending_approvals()
            assert len(request.diffs[0].hunks) == 2  # the first change; the second with the cleared output
            console.approve(request.call_id, hunks={"analysis.ipynb": [0]}, reason="keep step_28")
            outcome = await task
            assert outcome.status == RunStatus.DONE, outcome.text
            assert "hunk 2 of 2 in analysis.ipynb was not applied: keep step_28" in outcome.text

    run(scenario())
    [cell] = json.loads(target.read_text())["cells"]
    assert "".join(cell["source"]) == "".join(lines).replace("step_2 = 2\n", "step_2 = 'two'\n")
    assert cell["outputs"] == cells[0]["outputs"]  # its clearing was in the rejected hunk


class Nothing(RunTool[ToolArgs]):
    """A read-only tool that does nothing: what a call costs the console itself."""

    name = "Nothing"
    description = "Do nothing."
    Args = ToolArgs
    annotations = Annotations(read_only=True, destructive=False)

    async def run(self, args: ToolArgs, ctx: ToolContext) -> ToolOutput:
        return ToolOutput("done")


def test_a_call_costs_one_journal_commit_and_a_burst_of_calls_fewer_than_one_each(workspace: Path) -> None:
    burst = 32

    async def scenario() -> None:
        async with Console(workspace, tools=[*default_tools(), Nothing()]) as console:
            agent = await console.start_agent("agent", "scripted")
            writer = console._recorder.writer  # noqa: SLF001 - counting what the console does not show
            before = writer.commits
            for _ in range(4):
                assert (await console.call(agent, "Nothing", {})).status == RunStatus.DONE
            assert writer.commits - before == 4  # queued, allowed, started, finished: one commit per call
            before = writer.commits
            outcomes = await asyncio.wait_for(asyncio.gather(*(console.call(agent, "Nothing", {})
                                                               for _ in range(burst))), 20)
            assert writer.commits - before < burst  # several calls share a commit
            records = {r.call_id: r for r in await console.history()}
            assert all(records[o.call_id].status == RunStatus.DONE for o in outcomes)
            assert all(records[o.call_id].decision is not None for o in outcomes)

    run(scenario())
