"""The workspace window's status bar: the counts, which call holds the workspace while others wait for it, and how
outside agents (and `belay attach` in a terminal) reach the window."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QLabel

from core import AutoReviewer, Console
from core.outside import install
from core.policy.settings import config_dir
from core.settings import state_root
from gui.window.workspace.window import MainWindow
from tests.conftest import wait_until
from tests.gui.window.workspace.test_window import in_window
from tests.inotify_limits import limit_instances_to


def _claude_hook(workspace: Path, name: str, session: str, use_id: str, command: str
                 ) -> subprocess.CompletedProcess[str]:
    """Belay's hook command with one Claude Code Bash event, as Claude Code runs it."""
    event = {"session_id": session, "hook_event_name": name, "cwd": str(workspace), "tool_name": "Bash",
             "tool_use_id": use_id, "tool_input": {"command": command}, "tool_response": {"stdout": ""}}
    env = {k: v for k, v in os.environ.items() if k not in ("BELAY_HOOK_WAIT", "BELAY_HOOK_MAX_WAIT")}
    env["CLAUDE_PROJECT_DIR"] = str(workspace)
    return subprocess.run(install.hook_command(state_root(), config_dir()), shell=True, input=json.dumps(event),
                          capture_output=True, text=True, cwd=workspace, env=env, timeout=60)


def test_the_status_bar_says_which_call_holds_the_workspace_while_others_wait_for_it(
        qtbot: Any, loop: Any, workspace: Path) -> None:
    async def body(console: Console, window: MainWindow) -> None:
        reviewer = AutoReviewer(console)
        reviewer.start()
        try:
            first = await asyncio.to_thread(_claude_hook, workspace, "PreToolUse", "sess-aaaa1111", "toolu_a",
                                            "sleep 30")
            assert "allow" in first.stdout  # allowed: it holds the workspace until it reports back
            second = asyncio.ensure_future(asyncio.to_thread(_claude_hook, workspace, "PreToolUse", "sess-bbbb2222",
                                                             "toolu_b", "echo hi"))
            await wait_until(window.held.isVisible, 8, "the status bar to say why the call waits")
            assert "1 call waits: Bash · sleep 30 (claude-code sess-aaa" in window.held.text()
            assert not second.done()
            await asyncio.to_thread(_claude_hook, workspace, "PostToolUse", "sess-aaaa1111", "toolu_a", "sleep 30")
            assert "allow" in (await second).stdout
            await wait_until(lambda: not window.held.isVisible(), 5, "the line to go once nobody waits")
        finally:
            await reviewer.stop()

    in_window(qtbot, loop, workspace, body)


def test_a_window_can_be_followed_from_a_terminal(qtbot: Any, loop: Any, tmp_path: Path) -> None:
    from core import Attached, config_dir, install_token

    ws = tmp_path / "ws"
    ws.mkdir()

    async def body(console: Console, window: MainWindow) -> None:
        assert console.endpoint is not None
        attached = await Attached.connect(console.endpoint.path, install_token(config_dir()), client="terminal")
        assert attached.welcome.workspace == str(ws) and attached.welcome.session_id == console.session_id
        await attached.close()
    in_window(qtbot, loop, ws, body)


def test_the_counts_follow_the_calls_and_the_bar_says_how_outside_agents_reach_the_window(
        qtbot: Any, loop: Any, workspace: Path) -> None:
    async def body(console: Console, window: MainWindow) -> None:
        agent = await console.start_agent("reader", "scripted")
        await console.call(agent, "Read", {"file_path": str(workspace / "README.md")})
        await console.call(agent, "Read", {"file_path": str(workspace / "missing.md")})
        await wait_until(lambda: "✓ 1 done" in window.status_text() and "✗ 1 failed" in window.status_text(),
                         what="the counts")
        assert "● 0 running" in window.status_text()
        assert console.endpoint is not None
        serving = [label for label in window.statusBar().findChildren(QLabel) if "Claude Code hooks" in label.text()]
        assert len(serving) == 1 and serving[0].isVisible()
        assert str(console.endpoint.path) in serving[0].toolTip() and "belay attach" in serving[0].toolTip()
        window.tabs.setCurrentWidget(window.rules)
        assert serving[0].isVisible() and window.sandbox.isVisible()  # the bar is the window's, on every tab

    in_window(qtbot, loop, workspace, body)


def test_at_the_instance_limit_the_workspace_window_says_its_files_are_not_watched(
        qtbot: Any, loop: Any, workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    limit_instances_to(monkeypatch, 0)

    async def body(console: Console, window: MainWindow) -> None:
        indicator = window.statusBar().findChild(QLabel, "watchIndicator")
        assert indicator is not None and indicator.isVisible()
        assert "Not watching files: each command rescans the workspace" in indicator.text()
        assert "fs.inotify.max_user_instances" in indicator.toolTip()

    in_window(qtbot, loop, workspace, body)
