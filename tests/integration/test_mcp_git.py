"""The reference git MCP server (`mcp-server-git`) reached over MCP through Belay: undoing its checkout puts back a
state that existed, the files and HEAD together, not the old files on the new branch."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from core import Console, RunStatus
from core.policy.settings import config_dir
from tests.conftest import run

GIT = ["git", "-c", "user.name=Belay test", "-c", "user.email=test@belay.invalid", "-c", "init.defaultBranch=main"]


def _git(ws: Path, *args: str) -> str:
    return subprocess.run([*GIT, *args], cwd=ws, check=True, capture_output=True, text=True).stdout.strip()


@pytest.mark.timeout(120)
def test_undoing_mcp_git_checkout_puts_back_the_files_and_the_branch_head_was_on(tmp_path: Path) -> None:
    ws = tmp_path / "repo"
    ws.mkdir()
    _git(ws, "init", "-q")
    (ws / "app.py").write_text("print('main')\n")
    _git(ws, "add", "-A")
    _git(ws, "commit", "-q", "-m", "main")
    _git(ws, "checkout", "-q", "-b", "feature")
    (ws / "app.py").write_text("print('feature')\n")
    _git(ws, "commit", "-q", "-am", "feature")
    _git(ws, "checkout", "-q", "main")
    server = [sys.executable, "-m", "mcp_server_git", "--repository", str(ws)]
    (config_dir() / "settings.toml").write_text(
        f"[mcp.servers.git]\ncommand = {json.dumps(server[0])}\nargs = {json.dumps(server[1:])}\n"
        "startup_timeout_s = 60\n")

    async def scenario() -> tuple[RunStatus, str, bool, str]:
        async with Console(ws) as console:
            console.set_mode("bypass")  # the policy is tested elsewhere; this is about what undo restores
            started = await console.mcp_started(60)
            assert [s.state.value for s in started] == ["ready"], started
            agent = await console.start_agent("agent", "scripted")
            checkout = await console.call(agent, "mcp__git__git_checkout", {"repo_path": str(ws),
                                                                             "branch_name": "feature"})
            moved = _git(ws, "rev-parse", "--abbrev-ref", "HEAD")
            report = await console.undo(checkout.call_id)
            return checkout.status, moved, report.ok, report.message

    status, moved, undone, said = run(scenario())
    assert status == RunStatus.DONE and moved == "feature"  # the server's checkout happened
    assert undone, said
    assert _git(ws, "rev-parse", "--abbrev-ref", "HEAD") == "main"  # HEAD back where it was
    assert (ws / "app.py").read_text() == "print('main')\n"  # with the files it had there
    assert _git(ws, "status", "--porcelain") == ""  # a state that existed: nothing staged or changed
