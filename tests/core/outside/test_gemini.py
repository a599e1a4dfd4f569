"""Gemini CLI's hook events through the real hook client (`--agent gemini`) and the console's endpoint.

The events are the JSON Gemini CLI 0.61 writes (recorded from the real binary: see
tests/integration/GEMINI_HOOKS.md; tests/integration/test_gemini_cli.py drives the binary itself).
The "agent's tool" is played by the test writing files between BeforeTool and AfterTool.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from core import Console, RunStatus
from core.outside import gemini, install
from core.policy.settings import config_dir
from core.settings import state_root
from tests.conftest import run

SESSION = "5690497f-fdad-4e2b-9e23-3cbacf23d97f"


def _client(event: dict[str, Any], cwd: Path) -> subprocess.CompletedProcess[str]:
    command = install.hook_command(state_root(), config_dir(), agent="gemini")
    return subprocess.run(command, shell=True, input=json.dumps(event), capture_output=True, text=True,
                          cwd=cwd, timeout=30, env={"GEMINI_PROJECT_DIR": str(cwd), "PATH": "/usr/bin:/bin"})


async def _ask(event: dict[str, Any], cwd: Path) -> subprocess.CompletedProcess[str]:
    return await asyncio.to_thread(_client, event, cwd)


def _event(name: str, workspace: Path, at: datetime | None = None, **fields: Any) -> dict[str, Any]:
    """As Gemini CLI writes it: these keys in this order, then the event's own."""
    stamp = (at or datetime.now(UTC)).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    return {"session_id": SESSION, "transcript_path": "/dev/null", "cwd": str(workspace), "hook_event_name": name,
            "timestamp": stamp, **fields}


def _answer(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert (done.returncode, done.stderr) == (0, ""), done
    return json.loads(done.stdout) if done.stdout.strip() else {}


async def _pending(console: Console) -> Any:
    while not console.pending_approvals():
        await asyncio.sleep(0.01)
    return console.pending_approvals()[0]


def test_an_approved_replace_shows_its_diff_is_recorded_by_its_after_tool_and_undoes(workspace: Path) -> None:
    readme = workspace / "README.md"
    before = readme.read_text()
    args = {"file_path": "README.md", "old_string": "# shop", "new_string": "# Shop", "instruction": "title"}

    async def scenario() -> None:
        async with Console(workspace) as console:
            console.register_approver("test")
            asked = asyncio.ensure_future(_ask(_event("BeforeTool", workspace, tool_name="replace", tool_input=args),
                                               workspace))
            request = await _pending(console)
            assert request.tool == "Edit" and request.diffs[0].path == "README.md"
            console.approve(request.call_id)
            assert _answer(await asked) == {"decision": "allow"}
            readme.write_text(before.replace("# shop", "# Shop", 1))  # what Gemini's own replace does next
            after = _event("AfterTool", workspace, tool_name="replace", tool_input=args,
                           tool_response={"llmContent": "Successfully modified file", "returnDisplay": {}})
            assert _answer(await _ask(after, workspace)) == {}
            [record] = await console.history()
            assert record.status == RunStatus.DONE and [c.path for c in record.changes] == ["README.md"]
            assert record.agent_name == f"gemini-cli {SESSION[:8]}"
            assert (await console.undo(record.call_id)).ok

    run(scenario())
    assert readme.read_text() == before


def test_content_the_person_edits_goes_back_as_the_write_files_own_arguments(workspace: Path) -> None:
    args = {"file_path": str(workspace / "notes.md"), "content": "draft\n"}

    async def scenario() -> dict[str, Any]:
        async with Console(workspace) as console:
            console.register_approver("test")
            asked = asyncio.ensure_future(_ask(_event("BeforeTool", workspace, tool_name="write_file", tool_input=args),
                                               workspace))
            request = await _pending(console)
            console.approve(request.call_id, edited={"notes.md": "final\n"})
            return _answer(await asked)

    assert run(scenario()) == {"decision": "allow", "hookSpecificOutput": {"tool_input": {**args, "content": "final\n"}}}


def test_a_denied_call_answers_with_the_reason_the_model_reads(workspace: Path) -> None:
    async def scenario() -> dict[str, Any]:
        async with Console(workspace) as console:
            console.register_approver("test")
            asked = asyncio.ensure_future(_ask(_event("BeforeTool", workspace, tool_name="run_shell_command",
                                                      tool_input={"command": "rm -rf src"}), workspace))
            request = await _pending(console)
            assert request.tool == "Bash" and request.args == {"command": "rm -rf src"}
            console.deny(request.call_id, "not the sources")
            return _answer(await asked)

    answer = run(scenario())
    assert answer["decision"] == "deny" and "not the sources" in answer["reason"]


def test_a_sub_agents_calls_are_told_from_its_parents_by_when_they_began(workspace: Path) -> None:
    """A call stamped before Belay let `invoke_agent` through is its sibling in the parent's turn; one stamped
    after is the sub-agent's, which Gemini CLI reports with the parent's session id."""
    spawn = {"agent_name": "generalist", "prompt": "look around"}

    async def scenario() -> None:
        async with Console(workspace) as console:
            console.set_mode("bypass")
            sibling_at = datetime.now(UTC)
            assert _answer(await _ask(_event("BeforeTool", workspace, tool_name="invoke_agent", tool_input=spawn),
                                      workspace))["decision"] == "allow"
            sibling = _event("BeforeTool", workspace, sibling_at, tool_name="read_file", tool_input={"file_path": "a"})
            child = _event("BeforeTool", workspace, datetime.now(UTC) + timedelta(milliseconds=5),
                           tool_name="read_file", tool_input={"file_path": "b"})
            for event in (sibling, child):
                assert _answer(await _ask(event, workspace))["decision"] == "allow"
            done = _event("AfterTool", workspace, tool_name="invoke_agent", tool_input=spawn,
                          tool_response={"llmContent": [{"text": "Subagent 'generalist' finished."}]})
            assert _answer(await _ask(done, workspace)) == {}
            records = {r.args.get("file_path") or r.tool: r for r in await console.history()}
            agents = console.timeline.agents
            parent = agents[records["Agent"].agent_id]
            assert records[str(workspace / "a")].agent_id == parent.agent_id
            sub = agents[records[str(workspace / "b")].agent_id]
            assert (sub.agent_kind, sub.name, sub.spawned_by, sub.parent_id) == (
                "subagent", "generalist", records["Agent"].call_id, parent.agent_id)
            assert records["Agent"].status == RunStatus.DONE

    run(scenario())


def test_a_call_that_never_reports_back_is_closed_when_the_turn_ends(workspace: Path) -> None:
    async def scenario() -> None:
        async with Console(workspace) as console:
            console.set_mode("bypass")
            pre = _event("BeforeTool", workspace, tool_name="run_shell_command", tool_input={"command": "true"})
            assert _answer(await _ask(pre, workspace))["decision"] == "allow"
            assert console.interceptor is not None and console.interceptor.waiting == 1
            end = _event("AfterAgent", workspace, prompt="go", prompt_response="", stop_hook_active=False)
            assert _answer(await _ask(end, workspace)) == {}
            assert console.interceptor.waiting == 0
            [record] = await console.history()
            assert record.status == RunStatus.FAILED and record.error is not None
            assert "did not report this call back" in record.error.message

    run(scenario())


def test_with_no_console_a_before_tool_is_refused_in_gemini_clis_form_and_the_rest_pass(tmp_path: Path) -> None:
    pre = _client(_event("BeforeTool", tmp_path, tool_name="write_file", tool_input={"file_path": "x", "content": ""}),
                  tmp_path)
    refusal = _answer(pre)
    assert refusal["decision"] == "deny" and refusal["reason"].startswith(f"Belay: no Belay console is running for {tmp_path}")
    for name in ("AfterTool", "SessionStart", "AfterAgent"):
        assert _answer(_client(_event(name, tmp_path), tmp_path)) == {}


def test_install_adds_one_named_entry_per_event_with_a_timeout_above_the_clients_wait_and_uninstall_takes_it_out(
        tmp_path: Path) -> None:
    path = tmp_path / ".gemini" / "settings.json"
    path.parent.mkdir()
    path.write_text(json.dumps({"hooks": {"BeforeTool": [{"matcher": "write_.*", "hooks": [
        {"type": "command", "command": "./mine.sh"}]}]}, "model": {"name": "x"}}))
    command = install.hook_command(state_root(), config_dir(), agent="gemini")
    assert gemini.install(path, command, config_dir()).events == gemini.EVENTS
    assert gemini.install(path, command, config_dir()).events == ()
    hooks = json.loads(path.read_text())["hooks"]
    ours = hooks["BeforeTool"][1]
    assert ours["matcher"] == "*" and ours["hooks"][0]["name"] == "belay" and "--agent gemini" in ours["hooks"][0]["command"]
    assert ours["hooks"][0]["timeout"] > 3000 * 1000  # ms, above the client's longest wait: a timeout runs the call
    assert "matcher" not in hooks["SessionStart"][0]
    assert set(gemini.HOOKS.uninstall(path, config_dir()).events) == set(gemini.EVENTS)
    assert json.loads(path.read_text()) == {"hooks": {"BeforeTool": [{"matcher": "write_.*", "hooks": [
        {"type": "command", "command": "./mine.sh"}]}]}, "model": {"name": "x"}}


def test_settings_files_are_the_users_or_the_projects_shared_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GEMINI_CLI_HOME", str(tmp_path / "home"))
    assert gemini.settings_file(None, True) == tmp_path / "home" / ".gemini" / "settings.json"
    assert gemini.settings_file(tmp_path, False) == tmp_path.resolve() / ".gemini" / "settings.json"
    assert install.agent_hooks("gemini") is gemini.HOOKS
