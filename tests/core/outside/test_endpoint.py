"""The console's socket: a request is checked (token, then its model) before any handler sees it."""

from __future__ import annotations

import asyncio
import json
import os
import stat
import subprocess
from pathlib import Path
from typing import Any

import pytest

from core import Console
from core.outside import install
from core.outside.endpoint import Endpoint
from core.outside.requests import CallRequest
from core.policy.settings import config_dir
from core.settings import state_root
from tests.conftest import run


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
