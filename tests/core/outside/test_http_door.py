"""The console's http door for Claude Code's http hooks: the same checks and answers as its socket, over HTTP."""

from __future__ import annotations

import asyncio
import http.client
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from core import BashSettings, Console, install_token
from core.outside.endpoint import Endpoint
from core.outside.http_door import PORT_FILE, door_port, door_token
from core.outside.requests import HookRequest
from core.policy.settings import config_dir
from core.settings import workspace_state_dir
from tests.conftest import run, wait_until

READ = {"hook_event_name": "PreToolUse", "session_id": "s1", "tool_name": "Read", "tool_use_id": "t1",
        "tool_input": {"file_path": "/x"}}


def _post(port: int, token: str, events: list[dict[str, Any]], path: str = "/hook/claude"
          ) -> list[tuple[int, dict[str, Any]]]:
    """Each event POSTed in turn on one keep-alive connection, as Claude Code does: (status, JSON body) each."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    answers = []
    try:
        for event in events:
            connection.request("POST", path, json.dumps(event), {"Authorization": f"Bearer {token}",
                                                                  "Content-Type": "application/json"})
            response = connection.getresponse()
            answers.append((response.status, json.loads(response.read())))
    finally:
        connection.close()
    return answers


def _deny_reason(answer: dict[str, Any]) -> str:
    output = answer["hookSpecificOutput"]
    assert output["permissionDecision"] == "deny", answer
    return str(output["permissionDecisionReason"])


def test_the_port_is_chosen_once_per_workspace_and_kept(tmp_path: Path) -> None:
    port = door_port(tmp_path)
    assert door_port(tmp_path) == port and (tmp_path / PORT_FILE).stat().st_mode & 0o777 == 0o600
    assert door_token("secret", tmp_path) != door_token("secret", tmp_path / "other")  # bound to the workspace
    assert door_token("secret", tmp_path) != "secret"


@pytest.mark.allow_warning_logs  # a wrong token is logged
def test_a_hook_event_is_answered_over_one_kept_connection_and_a_wrong_token_is_refused(tmp_path: Path) -> None:
    seen: list[HookRequest] = []

    async def handler(request: HookRequest) -> dict[str, Any]:
        seen.append(request)
        out = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow",
                                      "permissionDecisionReason": "fine"}}
        return {"exit": 0, "stdout": out if request.event.hook_event_name == "PreToolUse" else None}

    async def scenario() -> tuple[list[tuple[int, dict[str, Any]]], list[tuple[int, dict[str, Any]]]]:
        endpoint = Endpoint(tmp_path, "secret", tmp_path, http_port=door_port(tmp_path))
        endpoint.handle(HookRequest, handler)
        await endpoint.start()
        assert endpoint.door is not None
        token = door_token("secret", tmp_path)
        try:
            good = await asyncio.to_thread(_post, endpoint.door.port, token,
                                           [READ, {**READ, "hook_event_name": "PostToolUse"}])
            wrong = await asyncio.to_thread(_post, endpoint.door.port, "secret", [READ])
        finally:
            await endpoint.close()
        return good, wrong

    good, wrong = run(scenario())
    assert good[0] == (200, {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow",
                                                    "permissionDecisionReason": "fine"}})
    assert good[1] == (200, {})
    assert [r.direct and r.peer_pid == os.getpid() for r in seen] == [True, True]  # the kernel's word, not the body's
    assert wrong[0][0] == 200 and "wrong token" in _deny_reason(wrong[0][1])  # the install's own secret does not do
    assert len(seen) == 2


@pytest.mark.allow_warning_logs  # the refusal is logged
def test_a_refused_peer_is_told_why_and_its_handler_never_runs(tmp_path: Path) -> None:
    seen: list[HookRequest] = []
    asked: list[int] = []

    async def handler(request: HookRequest) -> dict[str, Any]:
        seen.append(request)
        return {"exit": 0, "stdout": None}

    def refuse_peer(pid: int) -> bool:
        asked.append(pid)
        return True

    async def scenario() -> list[tuple[int, dict[str, Any]]]:
        endpoint = Endpoint(tmp_path, "secret", tmp_path, refuse_peer=refuse_peer, http_port=door_port(tmp_path))
        endpoint.handle(HookRequest, handler)
        await endpoint.start()
        assert endpoint.door is not None
        try:
            return await asyncio.to_thread(_post, endpoint.door.port, door_token("secret", tmp_path),
                                           [READ, {**READ, "hook_event_name": "PostToolUse"}][:1])
        finally:
            await endpoint.close()

    answers = run(scenario())
    assert asked == [os.getpid()] and seen == []
    assert "was started by a command Belay runs" in _deny_reason(answers[0][1])


@pytest.mark.allow_warning_logs  # the refusal is logged
def test_a_peer_of_another_user_is_refused(tmp_path: Path) -> None:
    async def handler(request: HookRequest) -> dict[str, Any]:
        raise AssertionError("a stranger's event reached the handler")

    async def scenario() -> list[tuple[int, dict[str, Any]]]:
        endpoint = Endpoint(tmp_path, "secret", tmp_path, http_port=door_port(tmp_path))
        endpoint.handle(HookRequest, handler)
        assert endpoint.door is not None
        endpoint.door.uid = os.getuid() + 1  # the console serves someone else: this test's process is the stranger
        await endpoint.start()
        try:
            return await asyncio.to_thread(_post, endpoint.door.port, door_token("secret", tmp_path), [READ])
        finally:
            await endpoint.close()

    answers = run(scenario())
    assert f"this door serves only uid {os.getuid() + 1}, not uid {os.getuid()}" in _deny_reason(answers[0][1])


def test_a_long_wait_is_answered_and_a_client_that_goes_away_cancels_the_handler(tmp_path: Path) -> None:
    cancelled: list[str] = []
    release = asyncio.Event()

    async def handler(request: HookRequest) -> dict[str, Any]:
        try:
            if request.event.tool_use_id == "gone":
                await asyncio.sleep(60)
            await release.wait()
        except asyncio.CancelledError:
            cancelled.append(request.event.tool_use_id)
            raise
        return {"exit": 0, "stdout": None}

    async def scenario() -> list[tuple[int, dict[str, Any]]]:
        endpoint = Endpoint(tmp_path, "secret", tmp_path, http_port=door_port(tmp_path))
        endpoint.handle(HookRequest, handler)
        await endpoint.start()
        assert endpoint.door is not None
        token = door_token("secret", tmp_path)
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", endpoint.door.port)
            body = json.dumps({**READ, "tool_use_id": "gone"}).encode()
            writer.write(b"POST /hook/claude HTTP/1.1\r\nAuthorization: Bearer %s\r\nContent-Length: %d\r\n\r\n%s"
                         % (token.encode(), len(body), body))
            await writer.drain()
            await wait_until(lambda: endpoint.door is not None and endpoint.door._clients, timeout=10)
            await asyncio.sleep(0.3)
            writer.close()  # Claude Code killed while a person decides
            await wait_until(lambda: cancelled, timeout=10, what="the abandoned handler to be cancelled")
            waiting = asyncio.ensure_future(asyncio.to_thread(_post, endpoint.door.port, token, [READ]))
            await asyncio.sleep(1.5)  # longer than any keepalive period: nothing times the person out here
            assert not waiting.done()
            release.set()
            return await waiting
        finally:
            await endpoint.close()

    answers = run(scenario())
    assert cancelled == ["gone"] and answers == [(200, {})]


_PROBE = """
import http.client, json, sys
connection = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]), timeout=30)
event = {"hook_event_name": "PreToolUse", "session_id": "x", "tool_name": "Write", "tool_use_id": "t",
         "tool_input": {"file_path": "/tmp/x", "content": "x"}}
connection.request("POST", "/hook/claude", json.dumps(event), {"Authorization": "Bearer " + sys.argv[2]})
print("ANSWER", connection.getresponse().read().decode())
"""


@pytest.mark.allow_warning_logs  # the refusal is logged
def test_a_command_the_console_runs_cannot_use_the_http_door_even_with_its_token(workspace: Path) -> None:
    """Unsandboxed, a command can read the project's settings (and so the door's token) and reach the loopback
    port: the kernel's record of the connection says which process it is, and that is what turns it away."""
    (workspace / "probe.py").write_text(_PROBE)

    async def scenario() -> tuple[str, list[tuple[int, dict[str, Any]]]]:
        async with Console(workspace, bash=BashSettings(sandbox="off")) as console:
            assert console.endpoint is not None and console.endpoint.door is not None
            port = console.endpoint.door.port
            token = door_token(install_token(config_dir()), workspace_state_dir(workspace))
            console.register_approver("test")
            agent = await console.start_agent("agent", "scripted")
            call = asyncio.ensure_future(console.call(agent, "Bash", {"command": f"{sys.executable} probe.py "
                                                                                 f"{port} {token}"}))
            await wait_until(console.pending_approvals, timeout=30, what="the command to be asked")
            console.approve(console.pending_approvals()[0].call_id)
            outcome = await call
            readme = str(workspace / "README.md")
            outside = await asyncio.to_thread(_post, port, token, [{**READ, "tool_input": {"file_path": readme}}])
            return outcome.text, outside

    text, outside = run(scenario())
    answer = json.loads(text.split("ANSWER ", 1)[1].splitlines()[0])
    assert "was started by a command Belay runs" in _deny_reason(answer), text
    assert outside[0][0] == 200 and outside[0][1]["hookSpecificOutput"]["permissionDecision"] == "allow"
