"""How Belay reaches an MCP server: a stdio process watched for its end, HTTP, and failure reasons safe to show."""

from __future__ import annotations

import sys
from contextlib import AsyncExitStack
from pathlib import Path

import httpx2
import mcp.types as mt
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from core.mcp.settings import ServerSettings
from core.mcp.transport import failure_reason, last_words, open_transport, stderr_file, watched
from tests.conftest import run
from tests.core.mcp.conftest import alive, free_port, stdio


class EndHeard:
    """The `on_end` a connection gives `watched`: counts how often the server was heard to end."""

    def __init__(self) -> None:
        self.times = 0

    async def __call__(self) -> None:
        self.times += 1


def python(code: str, cwd: str | None = None) -> ServerSettings:
    return ServerSettings(name="script", command=sys.executable, args=("-c", code), cwd=cwd)


async def drain(settings: ServerSettings, cwd: str | None, on_end: EndHeard) -> str:
    """Run a stdio server until it ends by itself; its last words."""
    with stderr_file() as errlog:
        async with AsyncExitStack() as stack:
            transport = await open_transport(settings, errlog, cwd, stack)
            async with watched(transport, on_end) as (read, _):
                assert [item async for item in read] == []
        return last_words(errlog)


def test_a_stdio_server_that_exits_is_heard_at_once_with_the_last_line_it_wrote_to_stderr() -> None:
    ended = EndHeard()
    code = "import sys; sys.stderr.write('starting\\nfatal:   GITHUB_TOKEN\\tis not set\\n\\n  \\n'); sys.exit(2)"
    assert run(drain(python(code), None, ended)) == "fatal: GITHUB_TOKEN is not set"
    assert ended.times == 1


def test_closing_a_stdio_server_ourselves_ends_its_process_and_is_not_taken_for_its_end(tmp_path: Path) -> None:
    ended = EndHeard()

    async def scenario() -> int:
        with stderr_file() as errlog:
            async with AsyncExitStack() as stack:
                transport = await open_transport(stdio("toy"), errlog, str(tmp_path), stack)
                async with Client(watched(transport, ended)) as client:
                    echoed = await client.call_tool("echo", {"text": "through the watch"})
                    assert echoed.content == [mt.TextContent(type="text", text="through the watch")]
                    pid = await client.call_tool("pid", {})
            return int(pid.structured_content["result"]) if pid.structured_content else -1

    pid = run(scenario())
    assert pid > 0 and not alive(pid)
    assert ended.times == 0


@pytest.mark.parametrize(("own", "expected"), [(None, "workspace"), ("elsewhere", "elsewhere")])
def test_a_stdio_server_runs_in_its_own_directory_else_in_the_workspace(tmp_path: Path, own: str | None,
                                                                      expected: str) -> None:
    for name in ("workspace", "elsewhere"):
        (tmp_path / name).mkdir()
    settings = python("import os, sys; print(os.getcwd(), file=sys.stderr)",
                      cwd=str(tmp_path / own) if own else None)
    said = run(drain(settings, str(tmp_path / "workspace"), EndHeard()))
    assert said == str(tmp_path / expected)


def test_failure_reasons_say_what_went_wrong_but_never_the_url_headers_or_env(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}/mcp?token=url-secret"  # nothing listens there
    web = ServerSettings(name="web", url=url, headers={"Authorization": "Bearer header-secret"})

    async def connect(settings: ServerSettings) -> str:
        try:
            async with AsyncExitStack() as stack:
                transport = await open_transport(settings, None, None, stack)
                async with Client(watched(transport, EndHeard())):
                    pass
        except Exception as e:  # noqa: BLE001 - whatever the SDK raised, as the connection sees it
            return failure_reason(e, settings, "")
        raise AssertionError("connected")

    refused = run(connect(web))
    assert refused == "could not connect to the server: All connection attempts failed"
    script = tmp_path / "server.sh"
    script.write_text("#!/bin/sh\n")  # not executable
    not_executable = ServerSettings(name="sh", command=str(script), env={"API_TOKEN": "env-secret"})
    cannot_run = run(connect(not_executable))
    assert cannot_run == f"could not start {str(script)!r}: Permission denied"

    response = httpx2.Response(401, request=httpx2.Request("POST", url))
    unauthorized = httpx2.HTTPStatusError("401 Unauthorized for url " + url, request=response.request,
                                          response=response)
    assert failure_reason(ExceptionGroup("x", [ExceptionGroup("y", [unauthorized])]), web, "") == \
        "the server answered HTTP 401"
    closed = MCPError(mt.CONNECTION_CLOSED, "Connection closed")
    assert failure_reason(closed, stdio("toy"), "Traceback: ImportError") == \
        "the server closed the connection; it said: Traceback: ImportError"
    for reason in (refused, cannot_run, failure_reason(unauthorized, web, "")):
        assert "secret" not in reason and "127.0.0.1" not in reason


def test_the_last_words_are_one_line_cut_short_and_nothing_without_a_log() -> None:
    with stderr_file() as errlog:
        errlog.write("noise\n" * 2000 + "Error: " + "x " * 400 + "\n")
        said = last_words(errlog)
    assert said.startswith("Error: x x") and said.endswith("…") and len(said) == 300
    assert last_words(None) == ""
