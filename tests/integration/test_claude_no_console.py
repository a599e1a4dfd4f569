"""Belay's hooks installed and Belay not running: the real Claude Code CLI asks its person, or refuses.

In a terminal (run in a pseudo-terminal here, as a person runs it) Claude Code shows its own permission
prompt for the call, with Belay's reason above it, in every permission mode, bypass included; nothing is
written until the person answers (the test never does).  Headless (`-p`) there is nobody to ask, and the call
is refused with Belay's reason.  The CLI talks to the scripted model on 127.0.0.1 (fake_anthropic.py).
"""

from __future__ import annotations

import json
import os
import pty
import re
import select
import signal
import subprocess
import time
from pathlib import Path

import pytest

from core.outside import install
from core.policy.settings import config_dir
from core.settings import state_root
from tests.integration.fake_anthropic import ScriptedModel, ToolCall, Turn, answers, bundled_cli, result_text

PROMPT_S = 60.0
"""How long the terminal is watched for Claude Code's prompt (bounds a loop; nothing is timed)."""
_ESCAPES = re.compile(rb"\x1b\][^\x07]*\x07|\x1b\[[0-9;?>]*[a-zA-Z]|\x1b[()][A-Z0-9]|\x1b[=>]")
MODES = {"default": [], "acceptEdits": ["--permission-mode", "acceptEdits"],
         "bypass": ["--permission-mode", "bypassPermissions"]}


def _session(tmp_path: Path) -> tuple[Path, Path, list[Turn]]:
    """A workspace, Belay's hooks as `belay hooks install` writes them (in a --settings file), and a Write."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    settings = tmp_path / "claude-settings.json"
    install.install(settings, install.hook_command(state_root(), config_dir()), config_dir())
    turns = [Turn(tools=[ToolCall("Write", {"file_path": str(workspace / "x.txt"), "content": "x\n"}, id="w")]),
             Turn(text="Done.", when=answers("w"))]
    return workspace, settings, turns


def _environment(model: ScriptedModel, workspace: Path, mode: str) -> dict[str, str]:
    """The scripted model's environment, with Claude Code's first-run questions already answered (onboarding,
    the API key, trusting the folder) so that the terminal goes straight to the call."""
    env = model.env()
    env["TERM"] = "xterm-256color"
    if mode == "bypass":
        env["IS_SANDBOX"] = "1"  # bypass mode refuses to start as root otherwise
    home = Path(env["HOME"])
    answered = {"hasCompletedOnboarding": True, "theme": "dark", "bypassPermissionsModeAccepted": True,
                "customApiKeyResponses": {"approved": [env["ANTHROPIC_API_KEY"][-20:]], "rejected": []},
                "projects": {str(workspace): {"hasTrustDialogAccepted": True, "allowedTools": []}}}
    for place in {home / ".claude.json", Path(env.get("CLAUDE_CONFIG_DIR", home / ".claude")) / ".claude.json"}:
        place.parent.mkdir(parents=True, exist_ok=True)
        place.write_text(json.dumps(answered))
    return env


def _terminal_screen(command: list[str], cwd: Path, env: dict[str, str], until: tuple[str, ...]) -> str:
    """Run `command` in a pseudo-terminal until its screen (escapes and spaces taken out) holds every one of
    `until`, or PROMPT_S passes; then kill its process group.  The screen text."""
    pid, fd = pty.fork()
    if pid == 0:  # pragma: no cover - the child
        os.chdir(cwd)
        os.execve(command[0], command, env)
    seen = b""
    try:
        deadline = time.monotonic() + PROMPT_S
        while time.monotonic() < deadline:
            ready, _, _ = select.select([fd], [], [], 0.5)
            if ready:
                try:
                    seen += os.read(fd, 65536)
                except OSError:
                    break
            text = "".join(_ESCAPES.sub(b"", seen).decode(errors="replace").split())
            if all(word in text for word in until):
                return text
        return "".join(_ESCAPES.sub(b"", seen).decode(errors="replace").split())
    finally:
        try:
            os.killpg(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        os.waitpid(pid, 0)
        os.close(fd)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("mode", list(MODES))
def test_in_a_terminal_claude_code_asks_its_person_in_every_mode(tmp_path: Path, mode: str) -> None:
    workspace, settings, turns = _session(tmp_path)
    with ScriptedModel(turns) as model:
        env = _environment(model, workspace, mode)
        screen = _terminal_screen([str(bundled_cli()), "--settings", str(settings), *MODES[mode], "write x"],
                                  workspace, env, until=("Doyouwanttocreatex.txt?", "Belayisnotrunning"))
    assert "Doyouwanttocreatex.txt?" in screen, screen[-2000:]  # Claude Code's own prompt, for the person
    assert "ClaudeCodeasksyouinstead" in screen, screen[-2000:]  # with Belay's reason above it
    assert not (workspace / "x.txt").exists()  # nothing happens until the person answers


@pytest.mark.timeout(120)
@pytest.mark.parametrize("mode", ["default", "bypass"])
def test_headless_claude_code_is_refused_with_belays_reason(tmp_path: Path, mode: str) -> None:
    workspace, settings, turns = _session(tmp_path)
    with ScriptedModel(turns) as model:
        env = _environment(model, workspace, mode)
        done = subprocess.run([str(bundled_cli()), "-p", "write x", "--output-format", "stream-json", "--verbose",
                               "--settings", str(settings), *MODES[mode]], cwd=workspace, env=env,
                              stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=90,
                              start_new_session=True)
        told = next((r.tool_result("w") for r in model.message_requests() if r.tool_result("w")), None)
    assert told is not None, done.stderr[-2000:]
    assert "no Belay console is running" in result_text(told), told
    assert not (workspace / "x.txt").exists()
