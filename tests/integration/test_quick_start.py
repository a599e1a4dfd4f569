"""The README's quick start, followed literally in a clean HOME: `belay hooks install` in the project, a
console, the real Claude Code CLI asking for a Write, the person approving, `belay calls`, `belay undo`.

What cannot be literal here: the console is opened in this test (as the window opens it) and its person is
a task that approves what it is shown, and Claude Code talks to the scripted model on 127.0.0.1.  Every
`belay` command runs as a person types it: in the project folder, with no --workspace.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from core import Console
from tests.conftest import ROOT, run
from tests.integration.fake_anthropic import ScriptedModel, ToolCall, Turn, answers, bundled_cli


def _belay(project: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`belay ARGS` typed in the project folder, with the clean HOME."""
    env = {**os.environ, "HOME": str(home), "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "gui.terminal.cli", *args], cwd=project, text=True,
                          capture_output=True, timeout=120, env=env)


async def _approving(console: Console) -> None:
    """The person at the window: approves what waits (Ctrl+Enter)."""
    while True:
        for request in console.pending_approvals():
            console.approve(request.call_id)
        await asyncio.sleep(0.02)


async def _claude(model: ScriptedModel, project: Path, home: Path) -> int:
    process = await asyncio.create_subprocess_exec(
        str(bundled_cli()), "-p", "add a notes file", "--output-format", "stream-json", "--verbose", cwd=project,
        env=model.env(home=home), stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
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


@pytest.mark.timeout(240)
def test_the_readme_quick_start_supervises_approves_and_undoes_a_claude_code_write(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "your-project"
    home.mkdir()
    project.mkdir()
    (project / "main.py").write_text("print('hello')\n")

    installed = _belay(project, home, "hooks", "install")  # step 3, with no flag: this folder's project
    assert installed.returncode == 0, installed.stderr
    assert (project / ".claude" / "settings.local.json").exists()
    assert f"in {project}" in installed.stdout and "asks you in its terminal instead" in installed.stdout

    notes = project / "notes.md"
    turns = [Turn(tools=[ToolCall("Write", {"file_path": str(notes), "content": "# Notes\n"}, id="w")]),
             Turn(text="Added notes.md.", when=answers("w"))]

    async def scenario() -> tuple[str, str, str]:
        async with Console(project) as console:  # step 4: the console
            console.register_approver("the window")
            person = asyncio.ensure_future(_approving(console))  # step 6: approve
            try:
                with ScriptedModel(turns) as model:  # step 5: Claude Code in the project
                    code = await _claude(model, project, home)
                    assert code == 0 and model.unscripted == []
            finally:
                person.cancel()
                await asyncio.wait([person])
            assert notes.read_text() == "# Notes\n"
            listed = await asyncio.to_thread(_belay, project, home, "calls", "--json")  # step 7
            assert listed.returncode == 0, listed.stderr
            write = next(c for c in json.loads(listed.stdout) if c["tool"] == "Write")
            undone = await asyncio.to_thread(_belay, project, home, "undo", str(write["id"]))
            return listed.stdout, undone.stdout, undone.stderr

    listed, undone, problem = run(scenario())
    assert "notes.md" in listed
    assert "Removed 1 file the call had created: notes.md" in undone, undone + problem
    assert not notes.exists() and (project / "main.py").read_text() == "print('hello')\n"
