"""The real Claude Code CLI supervised through http hooks: its tool calls reach the console's loopback door.

As in test_claude_code.py, the CLI runs offline against a scripted model (tests/integration/fake_anthropic.py);
the hooks are what `belay hooks install --http --project` writes: http hooks for the tool events, the command
for the session's.  What is checked is what a person would see: a call asked of them waits for their
answer, however long, a denial reaches the model with their reason, and with no console every call is
refused.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from core import Console, RunStatus
from core.outside import install
from core.policy.settings import config_dir
from core.settings import state_root
from tests.conftest import run
from tests.integration.fake_anthropic import ScriptedModel, ToolCall, Turn, answers, result_text
from tests.integration.test_claude_code import CLI_PREFIX, _claude


def _http_settings(tmp_path: Path, workspace: Path) -> Path:
    settings = tmp_path / "claude-settings.json"
    install.install(settings, install.hook_command(state_root(), config_dir()), config_dir(),
                    http=install.project_http_hook(workspace, config_dir()))
    hooks = json.loads(settings.read_text())["hooks"]
    assert hooks["PreToolUse"][0]["hooks"][0]["type"] == "http"  # this test is about http hooks
    return settings


@pytest.mark.timeout(180)
def test_an_http_hooked_session_is_supervised_asked_calls_wait_and_denials_say_why(workspace: Path,
                                                                                     tmp_path: Path) -> None:
    turns = [
        Turn(tools=[ToolCall("Read", {"file_path": str(workspace / "README.md")}, id="t_read")]),
        Turn(tools=[ToolCall("Write", {"file_path": str(workspace / "notes.md"), "content": "notes\n"},
                             id="t_write")], when=answers("t_read")),
        Turn(tools=[ToolCall("Write", {"file_path": str(workspace / "secret.txt"), "content": "k\n"},
                             id="t_deny")], when=answers("t_write")),
        Turn(text="Done.", when=answers("t_deny")),
    ]
    settings = _http_settings(tmp_path, workspace)
    waited: list[float] = []

    async def person(console: Console) -> None:
        """Thinks for two seconds over each call, then approves notes.md and denies secret.txt."""
        seen: set[str] = set()
        while True:
            for request in console.pending_approvals():
                if request.call_id in seen:
                    continue
                seen.add(request.call_id)
                await asyncio.sleep(2)
                waited.append(2)
                if "secret" in str(request.args.get("file_path")):
                    console.deny(request.call_id, "no secrets in the repository")
                else:
                    console.approve(request.call_id)
            await asyncio.sleep(0.02)

    async def scenario() -> tuple[dict[str, Any], dict[str, Any], list[tuple[str, RunStatus]]]:
        async with Console(workspace) as console:
            console.register_approver("test")
            deciding = asyncio.ensure_future(person(console))
            try:
                with ScriptedModel(turns) as model:
                    code, output = await _claude(model, workspace, settings)
                    assert code == 0 and model.unscripted == [], output
                    results = {i: next(r.tool_result(i) for r in model.message_requests() if r.tool_result(i))
                               for i in ("t_write", "t_deny")}
            finally:
                deciding.cancel()
                await asyncio.wait([deciding])
            history = [(r.tool, r.status) for r in await console.history()]
            assert console.endpoint is not None and console.endpoint.door is not None
            assert console.endpoint.door.answered >= 5  # Read and Write: before and after; secret.txt: before
        return results["t_write"], results["t_deny"], history

    written, denied, history = run(scenario())
    assert sorted(history) == sorted([("Read", RunStatus.DONE), ("Write", RunStatus.DONE),
                                      ("Write", RunStatus.DENIED)])
    assert waited == [2, 2] and (workspace / "notes.md").read_text() == "notes\n"
    assert not written.get("is_error"), written
    assert not (workspace / "secret.txt").exists()
    told = result_text(denied)
    assert denied["is_error"] and told.startswith(CLI_PREFIX) and "no secrets in the repository" in told, told
    assert "http://" not in told  # a decision, not a failed hook


@pytest.mark.timeout(120)
def test_with_no_console_an_http_hooked_call_is_refused(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    turns = [Turn(tools=[ToolCall("Write", {"file_path": str(workspace / "x.txt"), "content": "x\n"}, id="t_x")]),
             Turn(text="Could not write.", when=answers("t_x"))]
    settings = _http_settings(tmp_path, workspace)

    async def scenario() -> dict[str, Any]:
        with ScriptedModel(turns) as model:
            code, output = await _claude(model, workspace, settings)
            assert code == 0, output
            return next(r.tool_result("t_x") for r in model.message_requests() if r.tool_result("t_x"))

    result = run(scenario())
    assert not (workspace / "x.txt").exists()
    told = result_text(result)
    door = json.loads(settings.read_text())["hooks"]["PreToolUse"][0]["hooks"][0]["url"]
    assert result["is_error"] and f"[{door}]: failed; blocking because onFailure is \"block\"" in told, told
    assert "ECONNREFUSED" in told, told
