"""`belay calls` (gui.terminal.calls) as a person runs it from a shell: it answers without loading what only a
console, the window or an agent needs (issue 37: commands without the window start fast)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from core import Console, RunStatus
from tests.conftest import ROOT, run

HEAVY = ("pydantic", "pydantic_core", "asyncio", "mcp", "anyio", "httpx", "watchdog", "pygments", "tree_sitter",
         "yaml", "PySide6", "qasync", "platformdirs", "core.console", "core.events", "core.models", "core.policy",
         "core.run", "core.outside.endpoint", "core.store.journal", "gui.window")
"""Modules (and their submodules) a command that only reads or compacts the journal must not import: each
costs `belay calls` or `belay gc` tens to hundreds of milliseconds of its start (bench/cli_start.py)."""

CHILD = """
import json, sys
from gui.terminal.cli import main
code = main(sys.argv[1:])
sys.stdout.flush()
sys.stderr.write("\\n" + json.dumps(sorted(sys.modules)) + "\\n")
sys.exit(code)
"""
"""`belay` run as its console script runs it, then the modules it imported, as the last line on stderr."""


def heavy_imports(*args: str) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    """Run `belay ARGS` in a new Python; what it did, and which of HEAVY it imported."""
    done = subprocess.run([sys.executable, "-c", CHILD, *args], cwd=ROOT, capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, stdin=subprocess.DEVNULL)
    modules = json.loads(done.stderr.strip().splitlines()[-1])
    return done, [name for name in HEAVY if any(m == name or m.startswith(name + ".") for m in modules)]


def _journaled(ws: Path, state_dir: Path) -> str:
    async def write() -> str:
        async with Console(ws, state_dir=state_dir) as console:
            await console.add_rule("Write", "allow", "session")
            agent = await console.start_agent("editor", "scripted")
            outcome = await console.call(agent, "Write", {"file_path": str(ws / "a.txt"), "content": "a\n"})
            assert outcome.status == RunStatus.DONE
            return outcome.call_id

    return run(write())


def test_calls_lists_a_journal_without_loading_the_console_pydantic_or_asyncio(workspace: Path,
                                                                                state_dir: Path) -> None:
    call_id = _journaled(workspace, state_dir)
    done, heavy = heavy_imports("calls", "--workspace", str(workspace), "--state-dir", str(state_dir))
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[1].split()[:5] == [call_id, "editor", "Write", "done", "a.txt"]
    assert heavy == [], f"`belay calls` imported {', '.join(heavy)}: import them where they are used"
    done, heavy = heavy_imports("calls", "--workspace", str(workspace), "--state-dir", str(state_dir), "--json")
    assert [row["id"] for row in json.loads(done.stdout)] == [call_id] and heavy == []


def test_long_agent_and_tool_names_are_shown_whole_in_columns_that_line_up(workspace: Path, state_dir: Path) -> None:
    """A sub-agent's long name and an MCP tool's long name: neither cut, and every column starts where its
    header does."""
    import asyncio
    import io

    from core import Console
    from gui.terminal.calls import list_calls

    async def scenario() -> None:
        async with Console(workspace) as console:
            console.set_mode("bypass")
            agent = await console.start_agent("documentation-writer-for-receipts", "scripted")
            await console.call(agent, "Read", {"file_path": str(workspace / "README.md")})
            await console.call(agent, "mcp__github__create_pull_request_review_comment", {"body": "x"})

    asyncio.run(scenario())
    out = io.StringIO()
    assert list_calls(str(workspace), None, False, out) == 0
    lines = out.getvalue().splitlines()
    assert all("documentation-writer-for-receipts" in line for line in lines[1:])
    assert "mcp__github__create_pull_request_review_comment" in lines[2]
    starts = [lines[0].index(column) for column in ("AGENT", "TOOL", "STATUS")]
    for line in lines[1:]:
        for start in starts:
            assert line[start - 2:start] == "  " and line[start] != " ", (line, start)
