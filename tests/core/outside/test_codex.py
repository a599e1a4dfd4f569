"""Codex's hook events through the real hook client (`--agent codex`) and the console's endpoint.

The events are shaped as the real Codex CLI sends them (tests/integration/CODEX_HOOKS.md; the CLI itself
runs in tests/integration/test_codex_cli.py).  The "agent's tool" is played by the test changing files
between PreToolUse and PostToolUse.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path
from typing import Any

from core import Console, RunStatus
from core.outside import install
from core.outside.codex import NO_REPORT
from core.policy.settings import config_dir
from core.settings import state_root
from tests.conftest import run

PATCH = "*** Begin Patch\n*** Update File: README.md\n@@\n-# shop\n+# Shop\n*** Add File: notes.md\n+n\n*** End Patch\n"


def _client(event: dict[str, Any], cwd: Path) -> subprocess.CompletedProcess[str]:
    command = install.hook_command(state_root(), config_dir(), agent="codex")
    return subprocess.run(command, shell=True, input=json.dumps(event), capture_output=True, text=True,
                          cwd=cwd, timeout=30)


async def _client_async(event: dict[str, Any], cwd: Path) -> subprocess.CompletedProcess[str]:
    return await asyncio.to_thread(_client, event, cwd)


def _event(name: str, workspace: Path, **fields: Any) -> dict[str, Any]:
    return {"session_id": "01a2160e-4a86-7cc3-85e1-d048b50bf374", "turn_id": "turn-1", "transcript_path": None,
            "cwd": str(workspace), "hook_event_name": name, "model": "gpt-5.5",
            "permission_mode": "bypassPermissions", **fields}


def _run_as_codex_would(answer: subprocess.CompletedProcess[str], given: dict[str, Any], cwd: Path) -> None:
    """Codex runs the allowed command: Belay's `updatedInput` (the command inside its sandbox) where it sent one,
    else the model's own (an empty answer is Codex's "go ahead")."""
    assert answer.returncode == 0, answer.stderr
    output = json.loads(answer.stdout)["hookSpecificOutput"] if answer.stdout else {}
    assert output.get("permissionDecision", "allow") == "allow", output
    command = output.get("updatedInput", given)["command"]
    subprocess.run(["bash", "-c", command], cwd=cwd, check=True, stdin=subprocess.DEVNULL)


async def _pending(console: Console) -> Any:
    while not console.pending_approvals():
        await asyncio.sleep(0.01)
    return console.pending_approvals()[0]


def test_an_approved_patch_shows_each_files_diff_is_allowed_silently_and_undoes(workspace: Path) -> None:
    readme = workspace / "README.md"
    before = readme.read_text()

    async def scenario() -> None:
        async with Console(workspace) as console:
            console.register_approver("test")
            pre = _event("PreToolUse", workspace, tool_name="apply_patch", tool_use_id="call_1",
                         tool_input={"command": PATCH})
            answer = asyncio.ensure_future(_client_async(pre, workspace))
            request = await _pending(console)
            assert request.tool == "apply_patch" and request.summary == "patch README.md, notes.md"
            assert [(d.path, d.status) for d in request.diffs] == [("README.md", "modify"), ("notes.md", "create")]
            console.approve(request.call_id)
            done = await answer
            assert (done.returncode, done.stdout, done.stderr) == (0, "", "")  # Codex's "go ahead"
            readme.write_text(before.replace("# shop", "# Shop", 1))  # what Codex's apply_patch does next
            (workspace / "notes.md").write_text("n\n")
            post = _event("PostToolUse", workspace, tool_name="apply_patch", tool_use_id="call_1",
                          tool_input=pre["tool_input"], tool_response="Exit code: 0\nOutput:\nSuccess.")
            assert (await _client_async(post, workspace)).returncode == 0
            [record] = await console.history()
            assert record.status == RunStatus.DONE and {c.path for c in record.changes} == {"README.md", "notes.md"}
            assert record.agent_name == "codex b50bf374"  # the UUIDv7 session id's random end
            assert (await console.undo(record.call_id)).ok

    run(scenario())
    assert readme.read_text() == before and not (workspace / "notes.md").exists()


def test_a_patch_the_person_rewrote_is_allowed_with_codexs_updated_input(workspace: Path) -> None:
    async def scenario() -> None:
        async with Console(workspace) as console:
            console.register_approver("test")
            pre = _event("PreToolUse", workspace, tool_name="apply_patch", tool_use_id="call_e",
                         tool_input={"command": PATCH})
            answer = asyncio.ensure_future(_client_async(pre, workspace))
            console.approve((await _pending(console)).call_id, edited={"notes.md": "the person's notes\n"})
            output = json.loads((await answer).stdout)["hookSpecificOutput"]
            assert output["permissionDecision"] == "allow" and set(output["updatedInput"]) == {"command"}
            patch = output["updatedInput"]["command"]
            assert "*** Add File: notes.md\n+the person's notes\n" in patch and "+# Shop" in patch

    run(scenario())


def test_a_patch_approved_in_part_sends_codex_only_the_accepted_hunk_and_tells_the_model(workspace: Path) -> None:
    lines = workspace / "lines.txt"
    lines.write_text("".join(f"line {i}\n" for i in range(1, 21)))
    two = ("*** Begin Patch\n*** Update File: lines.txt\n@@\n-line 1\n+LINE ONE\n@@\n-line 20\n+LINE TWENTY\n"
           "*** End Patch\n")

    async def scenario() -> None:
        async with Console(workspace) as console:
            console.register_approver("test")
            pre = _event("PreToolUse", workspace, tool_name="apply_patch", tool_use_id="call_h",
                         tool_input={"command": two})
            answer = asyncio.ensure_future(_client_async(pre, workspace))
            request = await _pending(console)
            console.approve(request.call_id, hunks={"lines.txt": [0]}, reason="keep the last line")
            output = json.loads((await answer).stdout)["hookSpecificOutput"]
            patch = output["updatedInput"]["command"]
            assert "+LINE ONE\n" in patch and "+line 20\n" in patch and "TWENTY" not in patch, patch
            assert "keep the last line" in output["additionalContext"]

    run(scenario())


def test_a_denied_command_is_refused_in_codexs_form_with_the_reason(workspace: Path) -> None:
    async def scenario() -> None:
        async with Console(workspace) as console:
            console.register_approver("test")
            pre = _event("PreToolUse", workspace, tool_name="Bash", tool_use_id="call_2",
                         tool_input={"command": "rm -rf src"})
            answer = asyncio.ensure_future(_client_async(pre, workspace))
            console.deny((await _pending(console)).call_id, "keep the sources")
            done = await answer
            assert done.returncode == 0, done.stderr
            output = json.loads(done.stdout)["hookSpecificOutput"]
            assert (output["permissionDecision"], output["hookEventName"]) == ("deny", "PreToolUse")
            assert "keep the sources" in output["permissionDecisionReason"]
            permission = _event("PermissionRequest", workspace, tool_name="Bash", tool_input={"command": "rm -rf src"})
            asked = json.loads((await _client_async(permission, workspace)).stdout)["hookSpecificOutput"]
            assert asked["decision"]["behavior"] == "deny"

    run(scenario())
    assert (workspace / "src").exists()


def test_a_call_codex_never_reports_back_ends_with_its_turn(workspace: Path) -> None:
    """A patch Codex could not apply gets no PostToolUse: Stop ends it, failed, and lets go of its files."""
    async def scenario() -> None:
        async with Console(workspace) as console:
            console.set_mode("bypass")
            pre = _event("PreToolUse", workspace, tool_name="apply_patch", tool_use_id="call_3",
                         tool_input={"command": PATCH})
            assert (await _client_async(pre, workspace)).stdout == ""
            permission = _event("PermissionRequest", workspace, tool_name="apply_patch", tool_input={"command": PATCH})
            asked = json.loads((await _client_async(permission, workspace)).stdout)["hookSpecificOutput"]
            assert asked == {"hookEventName": "PermissionRequest", "decision": {"behavior": "allow"}}
            assert console.interceptor is not None and console.interceptor.waiting == 1
            stop = _event("Stop", workspace, stop_hook_active=False, last_assistant_message="done")
            assert (await _client_async(stop, workspace)).returncode == 0
            assert console.interceptor.waiting == 0
            [record] = await console.history()
            assert record.status == RunStatus.FAILED and NO_REPORT in record.output

    run(scenario())


def test_a_sub_agents_calls_go_under_its_spawn_agent_call(workspace: Path) -> None:
    async def scenario() -> None:
        async with Console(workspace) as console:
            console.set_mode("bypass")
            spawn = _event("PreToolUse", workspace, tool_name="spawn_agent", tool_use_id="call_s",
                           tool_input={"message": "stamp the docs"})
            assert (await _client_async(spawn, workspace)).returncode == 0
            spawned = _event("PostToolUse", workspace, tool_name="spawn_agent", tool_use_id="call_s",
                             tool_input=spawn["tool_input"], tool_response='{"agent_id":"sub-1","nickname":"Ada"}')
            await _client_async(spawned, workspace)
            start = _event("SubagentStart", workspace, turn_id="turn-2", agent_id="sub-1", agent_type="default")
            await _client_async(start, workspace)
            sub = _event("PreToolUse", workspace, turn_id="turn-2", agent_id="sub-1", agent_type="default",
                         tool_name="Bash", tool_use_id="call_sub", tool_input={"command": "echo s > s.txt"})
            _run_as_codex_would(await _client_async(sub, workspace), sub["tool_input"], workspace)
            await _client_async({**sub, "hook_event_name": "PostToolUse", "tool_response": ""}, workspace)
            history = {r.tool: r for r in await console.history()}
            agent = console.timeline.agents[history["Bash"].agent_id]
            assert agent.agent_kind == "subagent" and agent.spawned_by == history["spawn_agent"].call_id
            assert [c.path for c in history["Bash"].changes] == ["s.txt"]

    run(scenario())


def test_with_no_console_a_call_is_refused_in_codexs_form_and_a_report_is_quiet(tmp_path: Path) -> None:
    pre = _event("PreToolUse", tmp_path, tool_name="Bash", tool_use_id="c", tool_input={"command": "true"})
    done = _client(pre, tmp_path)
    assert done.returncode == 0, done.stderr
    output = json.loads(done.stdout)["hookSpecificOutput"]
    assert output["permissionDecision"] == "deny"
    assert output["permissionDecisionReason"].startswith(f"Belay: no Belay console is running for {tmp_path}")
    assert "`belay hooks uninstall --agent codex`" in output["permissionDecisionReason"]
    permission = _client(_event("PermissionRequest", tmp_path, tool_name="Bash", tool_input={}), tmp_path)
    assert json.loads(permission.stdout)["hookSpecificOutput"]["decision"]["behavior"] == "deny"
    post = _client(_event("PostToolUse", tmp_path, tool_name="Bash", tool_use_id="c", tool_response=""), tmp_path)
    assert (post.returncode, post.stdout) == (0, "")
