"""`belay hooks install --project` as a person runs it, then the real Claude Code CLI in that project.

The hooks go to the project's `.claude/settings.local.json` (this machine's own file), never to the shared
`settings.json` a project commits: the command line in them names this machine's Python and paths, and the
hooks refuse every call when no console answers, so in the shared file they would stop a teammate's
Claude Code.  The CLI runs with no `--settings`: it finds the hooks in the project as a user's would.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from core import Console, RunStatus
from tests.conftest import ROOT, run
from tests.integration.fake_anthropic import ScriptedModel, ToolCall, Turn, answers, bundled_cli


def _belay(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gui.terminal.cli", *args], cwd=ROOT, text=True,
                          capture_output=True, timeout=120, env=dict(os.environ))


async def _claude_in(model: ScriptedModel, project: Path) -> int:
    process = await asyncio.create_subprocess_exec(
        str(bundled_cli()), "-p", "do the scripted work", "--output-format", "stream-json", "--verbose",
        cwd=project, env=model.env(), stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE, start_new_session=True)
    try:
        await asyncio.wait_for(process.communicate(), 60)
    finally:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        await process.wait()
    return process.returncode or 0


@pytest.mark.timeout(180)
def test_project_hooks_go_to_this_machines_own_settings_and_claude_code_finds_them(workspace: Path) -> None:
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    installed = _belay("hooks", "install", "--project", str(workspace))
    assert installed.returncode == 0, installed.stderr
    local = workspace / ".claude" / "settings.local.json"
    assert local.exists() and not (workspace / ".claude" / "settings.json").exists()
    assert str(local) in installed.stdout and "not meant to be committed" in installed.stdout
    assert "git does not ignore it yet" in installed.stdout  # this repository has no such .gitignore line

    turns = [Turn(tools=[ToolCall("Write", {"file_path": str(workspace / "notes.md"), "content": "n\n"}, id="w")]),
             Turn(text="Done.", when=answers("w"))]

    async def scenario() -> list[tuple[str, RunStatus]]:
        async with Console(workspace) as console:  # no person: the Write is asked, and headless means denied
            with ScriptedModel(turns) as model:
                await _claude_in(model, workspace)
            return [(r.tool, r.status) for r in await console.history()]

    assert ("Write", RunStatus.DENIED) in run(scenario())  # the hook in settings.local.json reached the console
    assert not (workspace / "notes.md").exists()

    removed = _belay("hooks", "uninstall", "--project", str(workspace))
    assert removed.returncode == 0 and not local.exists()
