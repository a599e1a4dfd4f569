"""Claude Code's hook events through the real hook client and the console's endpoint.

The events here are the JSON Claude Code sends (see tests/integration for the real CLI); the client is
the real stdlib command, run as Claude Code runs it, talking to a real console over its socket.  The
"agent's tool" is played by the test writing files or running a command between PreToolUse and
PostToolUse.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from core import Console, RunStatus
from core.outside import install
from core.policy.settings import config_dir
from core.settings import state_root
from tests.conftest import run


def _client(event: dict[str, Any], cwd: Path) -> subprocess.CompletedProcess[str]:
    command = install.hook_command(state_root(), config_dir())
    return subprocess.run(command, shell=True, input=json.dumps(event), capture_output=True, text=True,
                          cwd=cwd, timeout=30)


async def _client_async(event: dict[str, Any], cwd: Path) -> subprocess.CompletedProcess[str]:
    return await asyncio.to_thread(_client, event, cwd)


def _event(name: str, workspace: Path, **fields: Any) -> dict[str, Any]:
    return {"session_id": "sess-1234abcd", "cwd": str(workspace), "hook_event_name": name,
            "transcript_path": "/dev/null", "permission_mode": "default", **fields}


def _denied(done: subprocess.CompletedProcess[str]) -> str:
    """The reason of a PreToolUse refusal: exit 0 and a structured deny, so the model reads it as a decision."""
    assert (done.returncode, done.stderr) == (0, ""), done
    output = json.loads(done.stdout)["hookSpecificOutput"]
    assert (output["hookEventName"], output["permissionDecision"]) == ("PreToolUse", "deny"), output
    return str(output["permissionDecisionReason"])


async def _pending(console: Console) -> Any:
    while not console.pending_approvals():
        await asyncio.sleep(0.01)
    return console.pending_approvals()[0]


def test_an_approved_write_is_allowed_recorded_against_the_session_and_undoable(workspace: Path) -> None:
    target = workspace / "src" / "shop" / "notes.txt"

    async def scenario() -> None:
        async with Console(workspace) as console:
            console.register_approver("test")
            pre = _event("PreToolUse", workspace, tool_name="Write", tool_use_id="toolu_1",
                         tool_input={"file_path": str(target), "content": "hello from claude\n"})
            answer = asyncio.ensure_future(_client_async(pre, workspace))
            request = await _pending(console)
            assert request.tool == "Write" and request.diffs[0].path == "src/shop/notes.txt"
            console.approve(request.call_id)
            done = await answer
            assert done.returncode == 0, done.stderr
            output = json.loads(done.stdout)["hookSpecificOutput"]
            assert output["permissionDecision"] == "allow"
            target.write_text("hello from claude\n")  # what Claude Code's own Write does next
            post = _event("PostToolUse", workspace, tool_name="Write", tool_use_id="toolu_1",
                          tool_input=pre["tool_input"], tool_response={"type": "create", "filePath": str(target)})
            assert (await _client_async(post, workspace)).returncode == 0
            [record] = await console.history()
            assert record.status == RunStatus.DONE and [c.path for c in record.changes] == ["src/shop/notes.txt"]
            assert record.agent_name.startswith("claude-code sess-123")
            assert console.timeline.externals == []  # the agent's write is its call's, not "outside Belay"
            assert (await console.undo(record.call_id)).ok
            assert not target.exists()

    run(scenario())


def test_a_denied_call_tells_the_model_why(workspace: Path) -> None:
    async def scenario() -> None:
        async with Console(workspace) as console:
            console.register_approver("test")
            pre = _event("PreToolUse", workspace, tool_name="Bash", tool_use_id="toolu_2",
                         tool_input={"command": "rm -rf src", "description": "clean"})
            answer = asyncio.ensure_future(_client_async(pre, workspace))
            request = await _pending(console)
            console.deny(request.call_id, "keep the sources")
            assert "keep the sources" in _denied(await answer)
            [record] = await console.history()
            assert record.status == RunStatus.DENIED

    run(scenario())
    assert (workspace / "src").exists()


def test_an_edited_approval_rewrites_the_agents_input(workspace: Path) -> None:
    target = workspace / "README.md"
    before = target.read_text()

    async def scenario() -> None:
        async with Console(workspace) as console:
            console.register_approver("test")
            pre = _event("PreToolUse", workspace, tool_name="Edit", tool_use_id="toolu_3",
                         tool_input={"file_path": str(target), "old_string": "# shop", "new_string": "# Shop"})
            answer = asyncio.ensure_future(_client_async(pre, workspace))
            request = await _pending(console)
            console.approve(request.call_id, edited={"README.md": "# Shop, as the person wrote it\n"})
            output = json.loads((await answer).stdout)["hookSpecificOutput"]
            updated = output["updatedInput"]
            assert updated["old_string"] == before and updated["new_string"] == "# Shop, as the person wrote it\n"

    run(scenario())


def test_a_multiedit_approved_in_part_runs_with_only_the_accepted_hunks_and_the_model_is_told(
        workspace: Path) -> None:
    target = workspace / "src" / "app.py"
    before = "".join(f"line_{n} = {n}\n" for n in range(60))
    target.write_text(before)
    edits = [{"old_string": f"line_{n} = {n}\n", "new_string": f"line_{n} = -{n}\n"} for n in (5, 30, 55)]

    async def scenario() -> None:
        async with Console(workspace) as console:
            console.register_approver("test")
            pre = _event("PreToolUse", workspace, tool_name="MultiEdit", tool_use_id="toolu_9",
                         tool_input={"file_path": str(target), "edits": edits})
            answer = asyncio.ensure_future(_client_async(pre, workspace))
            request = await _pending(console)
            assert len(request.diffs[0].hunks) == 3
            console.approve(request.call_id, hunks={"src/app.py": {0, 2}}, reason="30 stays positive")
            output = json.loads((await answer).stdout)["hookSpecificOutput"]
            assert output["permissionDecision"] == "allow"
            [edit] = output["updatedInput"]["edits"]
            assert edit["old_string"] == before
            assert edit["new_string"] == before.replace("line_5 = 5\n", "line_5 = -5\n").replace(
                "line_55 = 55\n", "line_55 = -55\n")
            assert "hunk 2 of 3 in src/app.py was not applied: 30 stays positive" in output["additionalContext"]

    run(scenario())


def test_a_notebook_edit_approved_in_part_gives_the_agent_the_cells_approved_source(workspace: Path) -> None:
    target = workspace / "analysis.ipynb"
    lines = [f"step_{n} = {n}\n" for n in range(30)]
    cells = [{"cell_type": "code", "execution_count": None, "id": "c1", "metadata": {}, "outputs": [],
              "source": lines}]
    target.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1)
                      + "\n")
    new_source = "".join(lines).replace("step_2 = 2\n", "step_2 = 'two'\n").replace("step_28 = 28\n", "step_28 = -28\n")

    async def scenario() -> None:
        async with Console(workspace) as console:
            console.register_approver("test")
            pre = _event("PreToolUse", workspace, tool_name="NotebookEdit", tool_use_id="toolu_nb",
                         tool_input={"notebook_path": str(target), "cell_id": "c1", "new_source": new_source})
            answer = asyncio.ensure_future(_client_async(pre, workspace))
            request = await _pending(console)
            assert len(request.diffs[0].hunks) == 2
            console.approve(request.call_id, hunks={"analysis.ipynb": [1]}, reason="step_2 stays a number")
            output = json.loads((await answer).stdout)["hookSpecificOutput"]
            assert output["permissionDecision"] == "allow"
            assert output["updatedInput"] == {"notebook_path": str(target), "cell_id": "c1",
                                              "new_source": "".join(lines).replace("step_28 = 28\n", "step_28 = -28\n")}
            assert "hunk 1 of 2 in analysis.ipynb was not applied: step_2 stays a number" in output["additionalContext"]

    run(scenario())


def test_a_command_side_effects_are_captured_for_its_call(workspace: Path) -> None:
    async def scenario() -> None:
        async with Console(workspace) as console:
            console.set_mode("bypass")
            pre = _event("PreToolUse", workspace, tool_name="Bash", tool_use_id="toolu_4",
                         tool_input={"command": "echo built > out.txt"})
            done = await _client_async(pre, workspace)
            assert json.loads(done.stdout)["hookSpecificOutput"]["permissionDecision"] == "allow"
            subprocess.run("echo built > out.txt", shell=True, cwd=workspace, check=True)  # Claude Code runs it
            post = _event("PostToolUse", workspace, tool_name="Bash", tool_use_id="toolu_4",
                          tool_input=pre["tool_input"], tool_response={"stdout": "", "stderr": "", "interrupted": False})
            await _client_async(post, workspace)
            [record] = await console.history()
            assert [c.path for c in record.changes] == ["out.txt"]

    run(scenario())


def test_sub_agents_are_linked_to_their_spawning_call(workspace: Path) -> None:
    async def scenario() -> None:
        async with Console(workspace) as console:
            console.set_mode("bypass")
            spawn = _event("PreToolUse", workspace, tool_name="Agent", tool_use_id="toolu_5",
                           tool_input={"description": "docs", "prompt": "write docs", "subagent_type": "writer"})
            await _client_async(spawn, workspace)
            await _client_async(_event("SubagentStart", workspace, agent_id="agent-7", agent_type="writer"),
                                workspace)
            sub_call = _event("PreToolUse", workspace, tool_name="Read", tool_use_id="toolu_6", agent_id="agent-7",
                              agent_type="writer", tool_input={"file_path": str(workspace / "README.md")})
            await _client_async(sub_call, workspace)
            await _client_async(_event("PostToolUse", workspace, tool_name="Read", tool_use_id="toolu_6",
                                       agent_id="agent-7", tool_input=sub_call["tool_input"], tool_response={}),
                                workspace)
            records = await console.history()
            spawn_record = next(r for r in records if r.tool == "Agent")
            read_record = next(r for r in records if r.tool == "Read")
            agents = {a.agent_id: a for a in console.timeline.agents.values()}
            writer = agents[read_record.agent_id]
            assert writer.name == "writer" and writer.spawned_by == spawn_record.call_id
            assert agents[writer.parent_id or ""].agent_kind == "claude-code"

    run(scenario())


def test_with_no_console_running_the_hook_blocks_and_says_how_to_start_one(tmp_path: Path) -> None:
    pre = _event("PreToolUse", tmp_path, tool_name="Write", tool_use_id="toolu_7",
                 tool_input={"file_path": str(tmp_path / "x"), "content": "x"})
    assert "belay watch --workspace" in _denied(_client(pre, tmp_path))
    post = _event("PostToolUse", tmp_path, tool_name="Write", tool_use_id="toolu_7", tool_response={})
    quiet = _client(post, tmp_path)
    assert (quiet.returncode, quiet.stderr) == (0, "")  # already happened: nothing left to block


@pytest.mark.allow_warning_logs  # the console logs the refused request
def test_a_wrong_token_is_refused(workspace: Path) -> None:
    async def scenario() -> None:
        async with Console(workspace):
            token = config_dir() / "token"
            real = token.read_text()
            token.write_text("0" * 64)
            try:
                pre = _event("PreToolUse", workspace, tool_name="LS", tool_use_id="toolu_8",
                             tool_input={"path": str(workspace)})
                done = await _client_async(pre, workspace)
                assert done.returncode == 2 and "wrong token" in done.stderr  # the console's refusal, as it said it
            finally:
                token.write_text(real)

    run(scenario())


def test_the_client_imports_nothing_but_the_standard_library() -> None:
    probe = ("import sys, importlib.util; spec = importlib.util.spec_from_file_location('client', %r); "
             "module = importlib.util.module_from_spec(spec); spec.loader.exec_module(module); "
             "print(sorted(k for k in sys.modules if k.split('.')[0] in ('core', 'gui', 'pydantic', 'PySide6')))"
             % str(install.CLIENT))
    done = subprocess.run([sys.executable, "-I", "-S", "-c", probe], capture_output=True, text=True, timeout=30)
    assert done.stdout.strip() == "[]", done.stdout + done.stderr


def test_install_writes_blocking_hooks_and_uninstall_removes_exactly_them(tmp_path: Path) -> None:
    settings = tmp_path / "project" / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    mine = {"permissions": {"allow": ["Bash(ls:*)"]},
            "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "my-linter"}]}]}}
    settings.write_text(json.dumps(mine))
    command = install.hook_command(state_root(), config_dir())
    changed = install.install(settings, command, config_dir())
    assert set(changed.events) == set(install.HOOK_EVENTS)
    data = json.loads(settings.read_text())
    ours = data["hooks"]["PreToolUse"][1]["hooks"][0]
    assert ours["onFailure"] == "block" and ours["command"] == command
    assert install.install(settings, command, config_dir()).events == ()  # twice changes nothing
    install.uninstall(settings, config_dir())
    assert json.loads(settings.read_text()) == mine
    fresh = tmp_path / "other" / ".claude" / "settings.json"
    install.install(fresh, command, config_dir())
    assert install.uninstall(fresh, config_dir()).file_removed and not fresh.exists()
    assert not os.path.lexists(tmp_path / "other")  # the folders Belay made for the file go with it


@pytest.mark.parametrize("order", ["agent call reports back first", "sub-agent starts first"])
def test_background_sub_agents_are_linked_whichever_hook_event_arrives_first(workspace: Path, order: str) -> None:
    """Two background `Agent` calls at once: each sub-agent is linked by the id its call reported back."""
    async def spawn(use_id: str) -> None:
        await _client_async(_event("PreToolUse", workspace, tool_name="Agent", tool_use_id=use_id,
                                   tool_input={"description": use_id, "prompt": "p", "run_in_background": True}),
                            workspace)

    async def reported(use_id: str, agent_id: str) -> None:
        await _client_async(_event("PostToolUse", workspace, tool_name="Agent", tool_use_id=use_id,
                                   tool_input={"description": use_id, "prompt": "p", "run_in_background": True},
                                   tool_response={"isAsync": True, "status": "async_launched", "agentId": agent_id}),
                            workspace)

    async def started(agent_id: str) -> None:
        await _client_async(_event("SubagentStart", workspace, agent_id=agent_id, agent_type="helper"), workspace)

    async def scenario() -> dict[str, str | None]:
        async with Console(workspace) as console:
            console.set_mode("bypass")
            await spawn("toolu_a")
            await spawn("toolu_b")  # two spawning calls open: the sub-agents cannot be told apart by being alone
            if order == "agent call reports back first":
                await reported("toolu_a", "agent-a")
                await reported("toolu_b", "agent-b")
                await started("agent-b")
                await started("agent-a")
            else:
                await started("agent-b")
                await started("agent-a")
                await reported("toolu_a", "agent-a")
                await reported("toolu_b", "agent-b")
            calls = {r.args.get("description"): r.call_id for r in await console.history() if r.tool == "Agent"}
            kids = [a for a in console.timeline.agents.values() if a.agent_kind == "subagent"]
            return {calls_of: next((a.spawned_by for a in kids if a.spawned_by == call), None)
                    for calls_of, call in calls.items()}

    assert all(run(scenario()).values())  # both sub-agents sit under their own Agent call
