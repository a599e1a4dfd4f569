"""A console on a "remote" host reached through a real OpenSSH server on 127.0.0.1: `belay serve` started
over ssh, its socket forwarded by the user's own ssh (a config file with a host alias, a throwaway key and
host key), the real Claude Code CLI on that host supervised by it, a Write approved and undone from the
attached front end, and the ssh link killed while a call waits: attaching again finds the call and nothing
is lost.  Skips where Debian's openssh-server is not installed (`make system-deps` installs it)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from core import ApprovalRequested, CallFinished, RunStatus
from core.outside import install
from core.policy.settings import config_dir
from core.remote.client import Attached, Detached
from core.remote.ssh import SshLink, SshTarget
from core.settings import state_root
from tests.conftest import ROOT, run
from tests.integration import private_sshd
from tests.integration.fake_anthropic import ScriptedModel, ToolCall, Turn, answers, bundled_cli

pytestmark = pytest.mark.skipif(not private_sshd.available(),
                                reason="needs OpenSSH's server and client (Debian: openssh-server)")


@pytest.fixture
def ssh_config(tmp_path: Path) -> Iterator[Path]:
    with private_sshd.private_sshd(tmp_path / "sshd") as config:
        yield config


def _remote_belay() -> str:
    """Belay as the "remote" host runs it: this checkout, with this test's state and config directories (what
    an install there would have of its own)."""
    return (f"env BELAY_STATE_DIR={state_root()} BELAY_CONFIG_DIR={config_dir()} PYTHONPATH={ROOT} "
            f"{sys.executable} -m gui.terminal.cli")


def _stop_remote_console(workspace: Path) -> None:
    """Stop every `belay serve` of this test's workspace (found by its command line: it may have failed before
    writing where it listens), and wait for each to end."""
    serving = []
    for proc in Path("/proc").iterdir():
        with contextlib.suppress(OSError):
            words = (proc / "cmdline").read_bytes().split(b"\0")
            if proc.name.isdigit() and b"serve" in words and os.fsencode(str(workspace)) in words:
                serving.append(int(proc.name))
    for pid in serving:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 15
    while serving and time.monotonic() < deadline:
        serving = [pid for pid in serving if _alive(pid)]
        time.sleep(0.1)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"  # a zombie has ended; its parent (not this test) reaps it


async def _claude(model: ScriptedModel, workspace: Path, settings: Path) -> asyncio.subprocess.Process:
    command = [str(bundled_cli()), "-p", "do the scripted work", "--output-format", "stream-json", "--verbose",
               "--settings", str(settings)]
    return await asyncio.create_subprocess_exec(*command, cwd=workspace, env=model.env(),
                                                stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
                                                stderr=asyncio.subprocess.PIPE, start_new_session=True)


async def _asked(attached: Attached) -> ApprovalRequested:
    async def first() -> ApprovalRequested:
        async for event in attached.events():
            if isinstance(event, ApprovalRequested):
                return event
        raise AssertionError("unreachable")
    return await asyncio.wait_for(first(), 60)


async def _finished(attached: Attached, call_id: str) -> CallFinished:
    async def first() -> CallFinished:
        async for event in attached.events():
            if isinstance(event, CallFinished) and event.call_id == call_id:
                return event
        raise AssertionError("unreachable")
    return await asyncio.wait_for(first(), 60)


def two_writes(tmp_path: Path) -> tuple[Path, Path, list[Turn]]:
    """The "remote" host's workspace, its Claude Code's settings (hooked to its Belay) and a model's turns that
    write notes.md, then later.md: (workspace, settings, turns)."""
    ws = tmp_path / "remote-ws"
    ws.mkdir()
    (ws / "README.md").write_text("# shop\n")
    settings = tmp_path / "claude-settings.json"
    install.install(settings, install.hook_command(state_root(), config_dir()), config_dir())
    turns = [
        Turn(tools=[ToolCall("Write", {"file_path": str(ws / "notes.md"), "content": "notes\n"}, id="t1")]),
        Turn(tools=[ToolCall("Write", {"file_path": str(ws / "later.md"), "content": "later\n"}, id="t2")],
             when=answers("t1")),
        Turn(text="Done.", when=answers("t2")),
    ]
    return ws, settings, turns


@pytest.mark.timeout(240)
def test_claude_code_on_the_remote_host_is_approved_undone_and_survives_a_dropped_link(
        ssh_config: Path, tmp_path: Path) -> None:
    ws, settings, turns = two_writes(tmp_path)
    link = SshLink(SshTarget.parse(f"ssh://{private_sshd.HOST}{ws}"), ssh=["ssh", "-F", str(ssh_config)],
                   remote_belay=_remote_belay())

    async def scenario() -> None:
        try:
            await attach_and_work()
        finally:
            await link.close()

    async def attach_and_work() -> None:
        local, token = await link.open()
        attached = await Attached.connect(local, token, client="window")
        assert attached.welcome.workspace == str(ws)
        with ScriptedModel(turns) as model:
            claude = await _claude(model, ws, settings)
            try:
                first = await _asked(attached)
                assert first.tool == "Write" and first.args["file_path"] == str(ws / "notes.md")
                assert await attached.approve(first.call_id, via="window")
                assert (await _finished(attached, first.call_id)).status == RunStatus.DONE

                second = await _asked(attached)  # the next Write waits for a person ...
                os.kill(link._forward.pid, signal.SIGKILL)  # ... and the link drops
                with pytest.raises(Detached):
                    await asyncio.wait_for(_finished(attached, second.call_id), 30)
                await attached.close()
                assert not (ws / "later.md").exists()

                await link.forward()  # the same ssh, again: the console on the host ran on
                again = await Attached.connect(local, token, client="window")
                assert [p.call_id for p in again.welcome.pending] == [second.call_id]
                assert await again.approve(second.call_id, via="window")
                out, err = await asyncio.wait_for(claude.communicate(), 90)
                assert claude.returncode == 0 and model.unscripted == [], err.decode() + out.decode()[-2000:]
            finally:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(claude.pid, signal.SIGKILL)
                await claude.wait()
        assert (ws / "notes.md").read_text() == "notes\n" and (ws / "later.md").read_text() == "later\n"
        third = await Attached.connect(local, token)
        timeline = third.timeline()
        await third.close()
        writes = {run.args.get("file_path"): run for run in timeline.runs.values() if run.tool == "Write"}
        assert {path: run.status for path, run in writes.items()} == {
            str(ws / "notes.md"): RunStatus.DONE, str(ws / "later.md"): RunStatus.DONE}  # no call lost
        report = await again.undo(first.call_id)  # undone where the files are
        assert report["ok"], report
        assert not (ws / "notes.md").exists() and (ws / "later.md").exists()
        await again.close()

    try:
        run(scenario())
    finally:
        _stop_remote_console(ws)


def _ctrl_c_as_at_a_terminal() -> None:
    """In `belay attach`'s process, before it starts: Ctrl-C as a terminal's foreground command has it.  A shell
    that runs `make test &` without job control ignores SIGINT for all it starts, and a program inherits an
    ignored signal: Python then never turns Ctrl-C into KeyboardInterrupt, and attach would not hear it."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.timeout(120)
def test_belay_attach_answers_a_remote_hooks_approval_from_the_terminal(ssh_config: Path, tmp_path: Path) -> None:
    """The command a person types: `belay attach ssh://host/path` starts the console there, and the approval an
    agent's hook waits for on that host is answered by typing y."""
    from core import install_token
    from core.outside.hook_client import ask_console

    ws = tmp_path / "remote-ws"
    ws.mkdir()
    attach = subprocess.Popen(
        [sys.executable, "-m", "gui.terminal.cli", "attach", f"ssh://{private_sshd.HOST}{ws}", "--ssh",
         f"ssh -F {ssh_config}", "--remote-belay", _remote_belay()],
        cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        preexec_fn=_ctrl_c_as_at_a_terminal)
    try:
        deadline = time.monotonic() + 60
        while (socket_file := next(state_root().rglob("endpoint.json"), None)) is None:
            assert attach.poll() is None and time.monotonic() < deadline, attach.stdout.read().decode()  # type: ignore[union-attr]
            time.sleep(0.1)
        socket = json.loads(socket_file.read_text())["socket"]
        assert attach.stdin is not None
        attach.stdin.write(b"y\n")  # read when the question comes
        attach.stdin.flush()
        event = json.dumps({"hook_event_name": "PreToolUse", "session_id": "remote-agent", "tool_name": "Write",
                            "tool_use_id": "t1", "cwd": str(ws),
                            "tool_input": {"file_path": str(ws / "n.md"), "content": "n\n"}}).encode()
        code, out, err = ask_console(socket, install_token(config_dir()), event, max_wait_s=60)
        assert code == 0 and b'"allow"' in out, (out, err)
    finally:
        attach.send_signal(signal.SIGINT)  # the person's Ctrl-C
        try:
            printed = attach.communicate(timeout=30)[0].decode()
        finally:
            if attach.poll() is None:  # Ctrl-C went unheard: end it, so it is not left running
                attach.kill()
                attach.wait()
            _stop_remote_console(ws)
    assert attach.returncode == 130, printed
    assert "Attached to" in printed and "── approval needed" in printed and "tool:    Write" in printed, printed
