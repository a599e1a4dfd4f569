"""The hook command Claude Code runs, run as Claude Code runs it: which console it asks, and failing closed."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
from pathlib import Path
from typing import Any

from core import Console, install_token
from core.outside import install
from core.policy.settings import config_dir
from core.settings import state_root, workspace_state_dir
from tests.conftest import run

BLOCKING = ("PreToolUse", "PermissionRequest", "UserPromptSubmit")
AFTER_THE_FACT = ("PostToolUse", "PostToolUseFailure", "SessionStart", "SessionEnd", "SubagentStop", "Stop",
                  "Notification")


def _hook(name: str, cwd: Path, project: Path | None = None, session: str = "sess-1234abcd"
          ) -> subprocess.CompletedProcess[str]:
    """The installed command with one event on stdin, from `cwd`; `project` is Claude Code's $CLAUDE_PROJECT_DIR."""
    event: dict[str, Any] = {"session_id": session, "hook_event_name": name, "cwd": str(cwd),
                             "tool_name": "Write", "tool_use_id": "toolu_1",
                             "tool_input": {"file_path": str(cwd / "x.txt"), "content": "x"}}
    env = {k: v for k, v in os.environ.items() if k != "CLAUDE_PROJECT_DIR"}
    if project is not None:
        env["CLAUDE_PROJECT_DIR"] = str(project)
    return subprocess.run(install.hook_command(state_root(), config_dir()), shell=True, input=json.dumps(event),
                          capture_output=True, text=True, cwd=cwd, env=env, timeout=30)


async def _hook_async(name: str, cwd: Path, project: Path | None = None, session: str = "sess-1234abcd"
                      ) -> subprocess.CompletedProcess[str]:
    return await asyncio.to_thread(_hook, name, cwd, project, session)


def _sessions(console: Console) -> list[str]:
    return sorted(a.name for a in console.timeline.agents.values())


def test_with_no_console_calls_that_can_still_be_stopped_are_blocked_and_the_rest_only_warned(tmp_path: Path) -> None:
    for name in (*BLOCKING, *AFTER_THE_FACT):
        done = _hook(name, tmp_path)
        assert done.returncode == (2 if name in BLOCKING else 1), (name, done.stderr)
        assert done.stderr.startswith(f"Belay: no Belay console is running for {tmp_path}")
        assert f"belay watch --workspace {tmp_path}" in done.stderr and done.stdout == ""


def test_a_stale_socket_of_a_console_that_died_fails_closed_saying_to_restart_it(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    state = workspace_state_dir(workspace)
    state.mkdir(parents=True)
    install_token(config_dir())  # the install's token is there: only the console is not
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)  # bound, never listening: connecting is refused
    dead.bind(str(tmp_path / "dead.sock"))
    try:
        for address, why in ((tmp_path / "dead.sock", "Connection refused"), (tmp_path / "gone.sock", "No such file")):
            (state / "endpoint.sock").write_text(str(address))
            pre, post = _hook("PreToolUse", workspace), _hook("PostToolUse", workspace)
            assert pre.returncode == 2 and post.returncode == 1, (pre.stderr, post.stderr)
            assert f"the Belay console for {workspace} cannot be reached" in pre.stderr and why in pre.stderr
            assert f"Restart it with `belay watch --workspace {workspace}`" in pre.stderr
    finally:
        dead.close()


def test_an_answer_that_is_not_the_consoles_fails_closed(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    state = workspace_state_dir(workspace)
    state.mkdir(parents=True)
    install_token(config_dir())

    async def impostor(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        header = json.loads(await reader.readline())
        await reader.readexactly(header["length"])  # all of it: closing on unread bytes would reset the client
        writer.write(b'{"ok": true}\n')  # some other server's idea of an answer
        await writer.drain()
        writer.close()

    async def scenario() -> tuple[subprocess.CompletedProcess[str], subprocess.CompletedProcess[str]]:
        server = await asyncio.start_unix_server(impostor, path=str(tmp_path / "other.sock"))
        try:
            (state / "endpoint.sock").write_text(str(tmp_path / "other.sock"))
            return await _hook_async("PermissionRequest", workspace), await _hook_async("SubagentStop", workspace)
        finally:
            server.close()
            await server.wait_closed()

    blocked, warned = run(scenario())
    assert blocked.returncode == 2 and warned.returncode == 1 and blocked.stdout == ""
    assert "cannot be reached (the console's answer is not a hook answer)" in blocked.stderr


def test_the_console_of_the_nearest_workspace_at_or_above_the_project_answers(workspace: Path, tmp_path: Path) -> None:
    inner = workspace / "src"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()

    async def scenario() -> None:
        async with Console(workspace) as outer_console, Console(inner) as inner_console:
            answers = [await _hook_async("SessionStart", workspace / "src" / "shop", session="inner-from-deep"),
                       await _hook_async("SessionStart", inner, session="inner-itself"),
                       await _hook_async("SessionStart", workspace / "docs", session="outer-from-docs"),
                       await _hook_async("SessionStart", workspace, session="outer-itself"),
                       # Claude Code's project directory, not where the hook happens to run, says which
                       await _hook_async("SessionStart", elsewhere, project=workspace / "docs", session="outer-by-env")]
            assert [a.returncode for a in answers] == [0] * 5, [a.stderr for a in answers]
            assert _sessions(inner_console) == ["claude-code inner-fr", "claude-code inner-it"]
            assert _sessions(outer_console) == ["claude-code outer-by", "claude-code outer-fr", "claude-code outer-it"]

    run(scenario())
