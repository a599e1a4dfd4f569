"""The console's socket: a request is checked (token, then its model) before any handler sees it."""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import socket
import stat
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from core import BashSettings, Console, install_token
from core.outside import install
from core.outside.endpoint import Endpoint
from core.outside.requests import CallRequest, HookRequest, PingRequest
from core.policy.settings import config_dir
from core.settings import state_root, workspace_state_dir
from tests.conftest import run, wait_until


async def _ask(path: Path, request: dict[str, Any]) -> dict[str, Any]:
    reader, writer = await asyncio.open_unix_connection(str(path))
    writer.write(json.dumps(request).encode() + b"\n")
    await writer.drain()
    line = await reader.readline()
    writer.close()
    return json.loads(line)


@pytest.mark.allow_warning_logs  # a wrong token is logged as a warning: someone tried the socket
def test_a_call_whose_fields_have_the_wrong_types_is_refused_at_the_door_saying_which(tmp_path: Path) -> None:
    seen: list[CallRequest] = []

    async def handler(request: CallRequest) -> dict[str, Any]:
        seen.append(request)
        return {"text": "ran"}

    async def scenario() -> None:
        endpoint = Endpoint(tmp_path, "secret", tmp_path)
        endpoint.handle(CallRequest, handler)
        await endpoint.start()
        try:
            bad = await _ask(endpoint.path, {"token": "secret", "kind": "call", "tool": "Read", "args": "all of it"})
            good = await _ask(endpoint.path, {"token": "secret", "kind": "call", "tool": "Read",
                                              "args": {"file_path": "/x"}})
            stranger = await _ask(endpoint.path, {"token": "guess", "kind": "call", "tool": "Read"})
        finally:
            await endpoint.close()
        assert bad == {"ok": False, "error": "malformed call request: args: Input should be a valid dictionary"}
        assert good == {"ok": True, "text": "ran"}
        assert stranger["ok"] is False and "wrong token" in stranger["error"]
        assert [r.args for r in seen] == [{"file_path": "/x"}]  # only the well-formed request reached it

    run(scenario())


def test_the_socket_is_private_and_its_address_file_goes_with_it(tmp_path: Path) -> None:
    async def scenario() -> None:
        endpoint = Endpoint(tmp_path, "secret", tmp_path)
        await endpoint.start()
        mode = stat.S_IMODE(os.stat(endpoint.path).st_mode)
        assert mode == 0o600 and (tmp_path / "endpoint.sock").read_text() == str(endpoint.path)
        await endpoint.close()
        assert not endpoint.path.exists() and not (tmp_path / "endpoint.sock").exists()

    run(scenario())


def test_a_hook_event_that_is_not_an_object_blocks_the_call_with_a_reason(workspace: Path) -> None:
    command = install.hook_command(state_root(), config_dir())

    async def scenario() -> subprocess.CompletedProcess[str]:
        async with Console(workspace):
            return await asyncio.to_thread(subprocess.run, command, shell=True, input='["PreToolUse"]',
                                           capture_output=True, text=True, cwd=workspace, timeout=30)

    done = run(scenario())
    assert done.returncode == 2 and "malformed hook request: event" in done.stderr


def test_a_hook_event_with_a_tool_input_that_is_not_an_object_is_refused_not_guessed(workspace: Path) -> None:
    command = install.hook_command(state_root(), config_dir())
    event = {"hook_event_name": "PreToolUse", "session_id": "s1", "tool_name": "Write", "tool_use_id": "t1",
             "tool_input": "write everything"}

    async def scenario() -> tuple[subprocess.CompletedProcess[str], int]:
        async with Console(workspace) as console:
            done = await asyncio.to_thread(subprocess.run, command, shell=True, input=json.dumps(event),
                                           capture_output=True, text=True, cwd=workspace, timeout=30)
            return done, len(await console.history())

    done, calls = run(scenario())
    assert done.returncode == 2 and "event.tool_input" in done.stderr and calls == 0


_CLIENT = """
import json, socket, sys
sys.stdin.readline()  # connect only once the test knows this process's pid
with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
    s.connect(sys.argv[1])
    s.sendall(json.dumps({"token": "secret", "kind": "ping"}).encode() + b"\\n")
    print(s.makefile().readline(), end="")
"""


def _ping_from_a_process(path: Path, started: set[int]) -> tuple[int, dict[str, Any]]:
    """A real process that holds the token pings the socket; its pid goes in `started` before it connects."""
    process = subprocess.Popen([sys.executable, "-c", _CLIENT, str(path)], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, text=True)
    started.add(process.pid)
    out, _ = process.communicate("go\n", timeout=30)
    return process.pid, json.loads(out)


@pytest.mark.allow_warning_logs  # a refused peer is logged as a warning
def test_a_process_started_by_a_command_belay_runs_is_refused_though_it_holds_the_token(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    commands: set[int] = set()  # what the shell manager would say Belay's commands started
    asked: list[int] = []

    def refuse_peer(pid: int) -> bool:
        asked.append(pid)
        return pid in commands

    async def scenario() -> None:
        endpoint = Endpoint(tmp_path, "secret", tmp_path, refuse_peer=refuse_peer)
        await endpoint.start()
        try:
            inside, refused = await asyncio.to_thread(_ping_from_a_process, endpoint.path, commands)
            outside, answered = await asyncio.to_thread(_ping_from_a_process, endpoint.path, set())
        finally:
            await endpoint.close()
        assert refused == {"ok": False, "error": f"refused: process {inside} was started by a command Belay runs; "
                                                 f"such commands may not talk to Belay's console (they could "
                                                 f"approve their own calls)"}
        assert answered == {"ok": True, "workspace": str(tmp_path), "pid": os.getpid()}
        assert asked == [inside, outside]  # the kernel's pid of each peer, not anything the peer claimed
        assert f"refused a connection to {endpoint.path} from pid {inside}" in caplog.text

    run(scenario())


@pytest.mark.allow_warning_logs
def test_a_peer_of_another_user_is_refused(tmp_path: Path) -> None:
    """The socket's 0600 mode already keeps other users out; the uid check holds if that is ever loosened."""
    async def scenario() -> dict[str, Any]:
        endpoint = Endpoint(tmp_path, "secret", tmp_path)
        endpoint.uid = os.getuid() + 1  # the console serves someone else: this test's process is the stranger
        await endpoint.start()
        try:
            return await _ask(endpoint.path, {"token": "secret", "kind": "ping"})
        finally:
            await endpoint.close()

    answer = run(scenario())
    assert answer == {"ok": False, "error": f"refused: this socket serves only uid {os.getuid() + 1}, "
                                            f"not uid {os.getuid()}"}


@pytest.mark.allow_warning_logs
def test_a_refused_hook_client_blocks_its_call_saying_why(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    seen: list[HookRequest] = []
    pids: list[int] = []

    async def handler(request: HookRequest) -> dict[str, Any]:
        seen.append(request)
        return {"exit": 0, "stdout": None}

    def refuse_peer(pid: int) -> bool:
        pids.append(pid)
        return True

    event = {"hook_event_name": "PreToolUse", "session_id": "s1", "tool_name": "Write", "tool_use_id": "t1",
             "tool_input": {"file_path": str(workspace / "x"), "content": "x"}}
    argv = shlex.split(install.hook_command(state_root(), config_dir()))

    def hook() -> tuple[subprocess.Popen[str], str]:
        process = subprocess.Popen(argv, stdin=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=workspace)
        return process, process.communicate(json.dumps(event), 30)[1]

    async def scenario() -> tuple[subprocess.Popen[str], str]:
        endpoint = Endpoint(workspace_state_dir(workspace), install_token(config_dir()), workspace,
                            refuse_peer=refuse_peer)
        endpoint.handle(HookRequest, handler)
        await endpoint.start()
        try:
            return await asyncio.to_thread(hook)
        finally:
            await endpoint.close()

    process, err = run(scenario())
    assert process.returncode == 2 and seen == [] and pids == [process.pid]
    assert f"the console refused the event: refused: process {process.pid} was started by a command Belay runs" in err


def test_the_hook_client_hears_keepalives_while_the_handler_works_and_json_clients_do_not(tmp_path: Path) -> None:
    async def slow(request: PingRequest) -> dict[str, Any]:
        await asyncio.sleep(1)
        return {"exit": 0, "stdout": None}

    async def lines(path: Path, request: bytes) -> list[bytes]:
        reader, writer = await asyncio.open_unix_connection(str(path))
        writer.write(request)
        await writer.drain()
        received = [line async for line in reader]
        writer.close()
        return received

    async def scenario() -> tuple[list[bytes], list[bytes]]:
        endpoint = Endpoint(tmp_path, "secret", tmp_path, keepalive_s=0.2)
        endpoint.handle(PingRequest, slow)
        await endpoint.start()
        try:
            framed = await lines(endpoint.path, b'{"token": "secret", "kind": "ping", "length": 2}\n{}')
            plain = await lines(endpoint.path, b'{"token": "secret", "kind": "ping"}\n')
        finally:
            await endpoint.close()
        return framed, plain

    framed, plain = run(scenario())
    assert 3 <= len(framed) - 1 <= 5 and set(framed[:-1]) == {b"WAIT\n"} and framed[-1] == b"HOOK 0 0 0\n"
    assert plain == [b'{"ok": true, "exit": 0, "stdout": null}\n']


def _waiting_forever(ended: list[str]) -> Callable[[PingRequest], Awaitable[dict[str, Any]]]:
    """A handler that never answers and notes in `ended` when it is cancelled."""
    async def forever(request: PingRequest) -> dict[str, Any]:
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            ended.append("cancelled")
            raise
        return {}
    return forever


def test_a_handler_is_cancelled_when_its_client_goes_and_when_the_console_closes(tmp_path: Path) -> None:
    ended: list[str] = []
    forever = _waiting_forever(ended)

    async def scenario() -> bool:
        endpoint = Endpoint(tmp_path, "secret", tmp_path, keepalive_s=0.2)
        endpoint.handle(PingRequest, forever)
        await endpoint.start()
        try:
            _, writer = await asyncio.open_unix_connection(str(endpoint.path))
            writer.write(b'{"token": "secret", "kind": "ping"}\n')
            await writer.drain()
            await asyncio.sleep(0.3)
            writer.close()  # the hook command gave up (its process ended)
            await wait_until(lambda: ended == ["cancelled"], timeout=5)
            _, writer = await asyncio.open_unix_connection(str(endpoint.path))
            writer.write(b'{"token": "secret", "kind": "ping"}\n')
            await writer.drain()
            await asyncio.sleep(0.1)
        finally:
            await asyncio.wait_for(endpoint.close(), 5)  # the second handler is still waiting
        writer.close()
        return ended == ["cancelled", "cancelled"]

    assert run(scenario())


def test_a_hook_client_that_stops_reading_is_gone_at_the_next_keepalive(tmp_path: Path) -> None:
    ended: list[str] = []
    forever = _waiting_forever(ended)

    async def scenario() -> None:
        endpoint = Endpoint(tmp_path, "secret", tmp_path, keepalive_s=0.2)
        endpoint.handle(PingRequest, forever)
        await endpoint.start()
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            try:
                sock.connect(str(endpoint.path))
                sock.sendall(b'{"token": "secret", "kind": "ping", "length": 2}\n{}')
                await asyncio.sleep(0.1)
                sock.shutdown(socket.SHUT_RD)  # still connected, no longer listening: the keepalive cannot land
                await wait_until(lambda: ended == ["cancelled"], timeout=5, what="the handler cancelled")
            finally:
                await asyncio.wait_for(endpoint.close(), 5)

    run(scenario())


@pytest.mark.allow_warning_logs  # the handler's failure is logged with its traceback
def test_a_handler_that_fails_is_answered_with_its_error_not_left_hanging(tmp_path: Path) -> None:
    async def broken(request: PingRequest) -> dict[str, Any]:
        raise RuntimeError("a bug")

    async def scenario() -> dict[str, Any]:
        endpoint = Endpoint(tmp_path, "secret", tmp_path)
        endpoint.handle(PingRequest, broken)
        await endpoint.start()
        try:
            return await _ask(endpoint.path, {"token": "secret", "kind": "ping"})
        finally:
            await endpoint.close()

    assert run(scenario()) == {"ok": False, "error": "Belay failed to handle it: RuntimeError: a bug"}


_PROBE = """
import json, socket, sys
token = open(sys.argv[2]).read().strip()
with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
    s.connect(sys.argv[1])
    s.sendall(json.dumps({"token": token, "kind": "ping"}).encode() + b"\\n")
    print("ANSWER", s.makefile().readline(), end="")
"""


@pytest.mark.allow_warning_logs  # the refusal is logged
def test_a_command_the_console_runs_cannot_use_its_socket_even_with_the_token(workspace: Path) -> None:
    """Unsandboxed, a command can read the token and reach the socket: the kernel's word on who connected
    is what turns it away (else it could answer its own approvals)."""
    (workspace / "probe.py").write_text(_PROBE)

    async def scenario() -> tuple[str, dict[str, Any]]:
        async with Console(workspace, bash=BashSettings(sandbox="off")) as console:
            assert console.endpoint is not None
            console.register_approver("test")
            agent = await console.start_agent("agent", "scripted")
            command = f"{sys.executable} probe.py {console.endpoint.path} {config_dir() / 'token'}"
            call = asyncio.ensure_future(console.call(agent, "Bash", {"command": command}))
            await wait_until(console.pending_approvals, timeout=30, what="the command to be asked")
            console.approve(console.pending_approvals()[0].call_id)
            outcome = await call
            outside = await _ask(console.endpoint.path, {"token": install_token(config_dir()), "kind": "ping"})
            return outcome.text, outside

    text, outside = run(scenario())
    answer = json.loads(text.split("ANSWER ", 1)[1].splitlines()[0])
    assert answer["ok"] is False and "was started by a command Belay runs" in answer["error"], text
    assert outside["ok"] is True  # the same token from a process of its own is served
