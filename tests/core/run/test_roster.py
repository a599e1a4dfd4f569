"""The roster: agents started and finished on the record, and their calls run as tasks one can cancel alone."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from core import AgentStatus, Console, RunStatus
from core.run.calls import AgentHandle
from core.store.journal_reads import JournalReads
from tests.conftest import run, wait_until


def test_a_sub_agent_may_call_at_most_its_parents_tools_and_both_are_on_the_record(workspace: Path) -> None:
    async def scenario() -> None:
        async with Console(workspace) as console:
            roster = console.roster
            lead = await roster.start_agent("lead", "scripted", tools=["Read", "Glob"])
            helper = await roster.start_agent("helper", "subagent", parent=lead, tools=["Read", "Write"])
            assert helper.tools == frozenset({"Read"})  # Write was never the parent's to give
            refused = await roster.call(helper, "Write", {"file_path": str(workspace / "x"), "content": "x"})
            assert refused.status == RunStatus.FAILED and "no tool named 'Write'" in refused.text
            agents = {a.agent_id: a for a in await console.recorder.read(JournalReads.agents)}
            assert agents[helper.agent_id].parent_id == lead.agent_id
            assert console.timeline.agents[helper.agent_id].parent_id == lead.agent_id

    run(scenario())


@pytest.mark.allow_warning_logs  # an agent that fails is logged with its traceback
def test_how_an_agents_body_ends_is_how_it_is_recorded(workspace: Path) -> None:
    async def done(handle: AgentHandle) -> str:
        return "all good"

    async def broken(handle: AgentHandle) -> str:
        raise ValueError("lost the plot")

    async def scenario() -> None:
        async with Console(workspace) as console:
            roster = console.roster
            ok, bad = await roster.start_agent("ok", "scripted"), await roster.start_agent("bad", "scripted")
            assert await roster.run_agent(ok, done) == "all good"
            with pytest.raises(ValueError):
                await roster.run_agent(bad, broken)
            agents = console.timeline.agents
            assert (agents[ok.agent_id].status, agents[ok.agent_id].message) == (AgentStatus.DONE, "all good")
            assert agents[bad.agent_id].status == AgentStatus.FAILED
            assert agents[bad.agent_id].message == "ValueError: lost the plot"

    run(scenario())


def test_a_call_cancelled_from_the_window_is_told_so_and_its_agent_goes_on(workspace: Path) -> None:
    async def scenario() -> None:
        async with Console(workspace) as console:
            console.register_approver("test")
            roster = console.roster
            agent = await roster.start_agent("lead", "scripted")
            waiting = asyncio.ensure_future(roster.call(agent, "Write", {"file_path": str(workspace / "w.txt"),
                                                                          "content": "w"}))
            await wait_until(console.pending_approvals, what="the write to wait for a person")
            assert roster.cancel(console.pending_approvals()[0].call_id)
            outcome = await waiting
            assert outcome.status == RunStatus.CANCELLED and outcome.text == "The user cancelled this call."
            after = await roster.call(agent, "LS", {"path": str(workspace)})
            assert after.status == RunStatus.DONE and not (workspace / "w.txt").exists()
            assert not roster.cancel(outcome.call_id)  # nothing left to stop

    run(scenario())


def test_closing_cancels_launched_agents_and_records_them_cancelled(workspace: Path) -> None:
    async def forever(handle: AgentHandle) -> str:
        await asyncio.Event().wait()
        return "never"

    async def scenario() -> tuple[str, AgentStatus]:
        async with Console(workspace) as console:
            agent = await console.roster.start_agent("sleeper", "scripted")
            task = console.roster.launch(console.roster.run_agent(agent, forever), "sleeper")
            await asyncio.sleep(0)
            assert console.roster.running == 1
        assert task.cancelled()
        async with Console(workspace) as reopened:
            return agent.agent_id, reopened.timeline.agents[agent.agent_id].status

    agent_id, status = run(scenario())
    assert status == AgentStatus.CANCELLED
