"""`belay claude`: Claude Code started by Belay through the Agent SDK, supervised through its callbacks.

The same scripted model as test_claude_code.py; here there are no installed hooks: the SDK's hook and
`can_use_tool` callbacks reach the console directly, and the window's stop reaches the session.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from core import Console, RunStatus
from tests.conftest import run
from tests.integration.fake_anthropic import ScriptedModel, ToolCall, Turn, answers, bundled_cli, result_text


@pytest.mark.timeout(180)
def test_a_launched_session_is_supervised_and_its_sub_agent_linked_by_the_sdks_task_messages(
        workspace: Path) -> None:
    usage = workspace / "docs" / "usage.md"
    turns = [
        Turn(tools=[ToolCall("Write", {"file_path": str(workspace / "plan.md"), "content": "plan\n"}, id="l_write")]),
        Turn(tools=[ToolCall("Write", {"file_path": str(workspace / "nope.md"), "content": "x\n"}, id="l_deny")],
             when=answers("l_write")),
        Turn(tools=[ToolCall("Agent", {"description": "Docs", "prompt": "SUBTASK: touch the docs",
                                       "subagent_type": "general-purpose", "run_in_background": False},
                             id="l_agent")], when=answers("l_deny")),
        Turn(text="Finished.", when=answers("l_agent")),
    ]
    agents = {"SUBTASK:": [
        Turn(tools=[ToolCall("Read", {"file_path": str(usage)}, id="l_sub_read")]),
        Turn(tools=[ToolCall("Edit", {"file_path": str(usage), "old_string": "# Using", "new_string": "# Using it"},
                             id="l_sub_edit")]),
        Turn(text="Done."),
    ]}

    async def person(console: Console) -> None:
        answered: set[str] = set()
        while True:
            for request in console.pending_approvals():
                if request.call_id not in answered:
                    answered.add(request.call_id)
                    if "nope.md" in str(request.args.get("file_path")):
                        console.deny(request.call_id, "not that file")
                    else:
                        console.approve(request.call_id)
            await asyncio.sleep(0.02)

    async def scenario() -> None:
        async with Console(workspace) as console:
            console.register_approver("test")
            helper = asyncio.ensure_future(person(console))
            try:
                with ScriptedModel(turns, agents=agents) as model:
                    session = console.launch_claude("do the scripted work", env=model.env(),
                                                    cli_path=str(bundled_cli()))
                    end = await asyncio.wait_for(session, 120)
                    denied = next(r.tool_result("l_deny") for r in model.message_requests()
                                  if r.tool_result("l_deny"))
            finally:
                helper.cancel()
                await asyncio.wait([helper])
            assert end.ok and end.summary == "Finished.", end
            assert denied is not None and "not that file" in result_text(denied)
            history = await console.history()
            by_tool = {(r.tool, r.args.get("file_path")): r for r in history}
            assert by_tool[("Write", str(workspace / "plan.md"))].status == RunStatus.DONE
            assert by_tool[("Write", str(workspace / "nope.md"))].status == RunStatus.DENIED
            sub_edit = by_tool[("Edit", str(usage))]
            spawn = next(r for r in history if r.tool == "Agent")
            sub_agent = console.timeline.agents[sub_edit.agent_id]
            assert sub_agent.spawned_by == spawn.call_id and sub_agent.parent_id == spawn.agent_id
            # Its conversation is read too: the SDK's callbacks carry the transcript's path, as the hooks do.
            for _ in range(100):
                if "Finished." in [m.text for m in console.timeline.said(spawn.agent_id)]:
                    break
                await asyncio.sleep(0.05)
            assert [(m.kind, m.text) for m in console.timeline.said(spawn.agent_id)] == [
                ("prompt", "do the scripted work"), ("text", "Finished.")]
            assert [(m.kind, m.text) for m in console.timeline.said(sub_edit.agent_id)] == [
                ("prompt", "SUBTASK: touch the docs"), ("text", "Done.")]
            assert (await console.undo(sub_edit.call_id)).ok and "# Using it" not in usage.read_text()

    run(scenario())
    assert (workspace / "plan.md").read_text() == "plan\n" and not (workspace / "nope.md").exists()


@pytest.mark.timeout(120)
def test_stopping_a_launched_session_withdraws_its_waiting_call(workspace: Path) -> None:
    turns = [Turn(tools=[ToolCall("Write", {"file_path": str(workspace / "w.md"), "content": "w\n"}, id="s_w")]),
             Turn(text="never reached", when=answers("s_w"))]

    async def scenario() -> None:
        async with Console(workspace) as console:
            console.register_approver("test")  # a person who does not answer
            with ScriptedModel(turns) as model:
                session = console.launch_claude("write it", env=model.env(), cli_path=str(bundled_cli()))
                while not console.pending_approvals():
                    await asyncio.sleep(0.02)
                [request] = console.pending_approvals()
                controls = console.controls(request.agent_id)
                assert controls is not None  # the window's Interrupt / Stop act on this
                controls.stop()
                end = await asyncio.wait_for(session, 60)
            assert not end.ok and "stopped" in end.summary
            assert console.pending_approvals() == []
            [record] = [r for r in await console.history() if r.tool == "Write"]
            assert record.status == RunStatus.CANCELLED

    run(scenario())
    assert not (workspace / "w.md").exists()


@pytest.mark.timeout(180)
def test_a_launched_session_ends_its_agent_and_reads_as_done_when_the_workspace_is_reopened(
        workspace: Path) -> None:
    turns = [Turn(tools=[ToolCall("Read", {"file_path": str(workspace / "README.md")}, id="e_read")]),
             Turn(text="Read it.", when=answers("e_read"))]

    async def session_then_agents() -> dict[str, str]:
        async with Console(workspace) as console:
            with ScriptedModel(turns) as model:
                end = await asyncio.wait_for(console.launch_claude("read the readme", env=model.env(),
                                                                   cli_path=str(bundled_cli())), 120)
            assert end.ok, end
            return {a.agent_id: a.status.value for a in console.timeline.agents.values()}

    async def reopened() -> dict[str, str]:
        async with Console(workspace) as console:
            return {a.agent_id: a.status.value for a in console.timeline.agents.values()}

    live = run(session_then_agents())
    assert list(live.values()) == ["done"]  # the session's agent ended with it
    assert run(reopened()) == live  # and is not taken for a crashed one on reopening


@pytest.mark.timeout(180)
def test_a_launched_session_in_a_project_with_belays_hooks_installed_decides_each_call_once(workspace: Path) -> None:
    from core import config_dir, hook_command, install_hooks, state_root
    install_hooks(workspace / ".claude" / "settings.local.json", hook_command(state_root(), config_dir()), config_dir())
    turns = [Turn(tools=[ToolCall("Bash", {"command": "echo twice > once.txt", "description": "w"}, id="o_bash")]),
             Turn(text="Done.", when=answers("o_bash"))]

    async def scenario() -> list[str]:
        async with Console(workspace) as console:
            console.set_mode("bypass")
            with ScriptedModel(turns) as model:
                session = console.launch_claude("write it", env=model.env(), cli_path=str(bundled_cli()))
                end = await asyncio.wait_for(session, 90)  # the hook command's copy used to wait on the lock
            assert end.ok, end
            return [r.tool for r in await console.history()]

    assert run(scenario()) == ["Bash"]  # once, not once per route
    assert (workspace / "once.txt").read_text() == "twice\n"
