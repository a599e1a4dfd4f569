"""One MCP server's session in one task: calls from other tasks, stop(), and a server dying mid-call."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

import mcp.types as mt
import pytest

from core.errors import BelayError, ErrorKind
from core.mcp.connection import Report, ServerConnection, ToolsListed
from core.mcp.settings import ServerSettings
from core.mcp.state import Failed, Starting, Stopped
from tests.conftest import run, wait_until
from tests.core.mcp.conftest import START_S, alive, stdio


class Owner:
    """What the manager is to a connection: it hears every report."""

    def __init__(self) -> None:
        self.reports: list[Report] = []

    def __call__(self, connection: ServerConnection, report: Report) -> None:
        self.reports.append(report)

    def kinds(self) -> list[str]:
        return [type(r).__name__ for r in self.reports]

    async def listed(self) -> ToolsListed:
        await wait_until(lambda: any(isinstance(r, ToolsListed) for r in self.reports), START_S, "the tool list")
        return next(r for r in self.reports if isinstance(r, ToolsListed))


def text(result: mt.CallToolResult) -> str:
    return "".join(part.text for part in result.content if isinstance(part, mt.TextContent))


async def refusal(connection: ServerConnection, tool: str, arguments: dict[str, object]) -> BelayError:
    try:
        result = await connection.call(tool, arguments)
    except BelayError as e:
        return e
    raise AssertionError(f"{tool} answered {text(result)!r}")


def test_calls_from_other_tasks_are_answered_until_stop_ends_the_server(tmp_path: Path) -> None:
    owner = Owner()

    async def scenario() -> int:
        connection = ServerConnection(stdio("toy"), owner, cwd=str(tmp_path))
        connection.start()
        try:
            with pytest.raises(RuntimeError, match="already started"):
                connection.start()
            early = asyncio.ensure_future(connection.call("echo", {"text": "before the tools were listed"}))
            listed = await owner.listed()
            assert {"echo", "hang", "crash"} <= {tool.name for tool in listed.tools}
            assert text(await early) == "before the tools were listed"
            answers = await asyncio.gather(*(connection.call("echo", {"text": f"caller {i}"}) for i in range(5)))
            assert [text(a) for a in answers] == [f"caller {i}" for i in range(5)]
            pid = int(text(await connection.call("pid", {})))

            unknown = await refusal(connection, "no_such_tool", {})
            assert unknown.kind == ErrorKind.UNKNOWN_TOOL
            assert unknown.info.message == "MCP server 'toy' no longer offers the tool 'no_such_tool'"

            waiting = asyncio.ensure_future(refusal(connection, "hang", {"seconds": 60}))
            await asyncio.sleep(0.2)
            await connection.stop()
            stopped = await asyncio.wait_for(waiting, 5)
            assert stopped.kind == ErrorKind.SYSTEM and not stopped.info.recoverable
            assert stopped.info.message == "MCP server 'toy' was stopped"
            later = await refusal(connection, "echo", {"text": "anyone?"})
            assert later.info.message == "MCP server 'toy' was stopped"
            return pid
        finally:
            await connection.stop()  # stopping again is harmless

    pid = run(scenario())
    assert not alive(pid)
    assert owner.kinds() == ["Starting", "ToolsListed", "Stopped"]


def test_a_server_that_dies_mid_call_fails_every_call_in_flight_with_its_last_words(tmp_path: Path) -> None:
    owner = Owner()

    async def scenario() -> None:
        connection = ServerConnection(stdio("toy"), owner, cwd=str(tmp_path))
        connection.start()
        try:
            await owner.listed()
            other = asyncio.ensure_future(refusal(connection, "hang", {"seconds": 60}))
            await asyncio.sleep(0.2)
            crashed = await refusal(connection, "crash", {})
            for error in (crashed, await asyncio.wait_for(other, 5)):
                assert error.kind == ErrorKind.NETWORK
                assert error.info.message == ("MCP server 'toy' stopped: its process ended; it said: toy server: "
                                              "crashing on purpose (during this call, so its result is unknown)")
            await wait_until(lambda: isinstance(owner.reports[-1], Failed), 5, "the failure report")
            later = await refusal(connection, "echo", {"text": "anyone?"})
            assert later.kind == ErrorKind.NETWORK and not later.info.recoverable
            assert later.info.message == ("MCP server 'toy' stopped: its process ended; it said: toy server: "
                                          "crashing on purpose")
            assert "restart" in later.info.suggestion
        finally:
            await connection.stop()

    run(scenario())
    assert owner.reports[0] == Starting() and isinstance(owner.reports[1], ToolsListed)
    assert owner.reports[2:] == [Failed("its process ended; it said: toy server: crashing on purpose")]


def test_stopping_a_server_that_is_still_starting_gives_up_on_it_and_closes_its_process(tmp_path: Path) -> None:
    owner = Owner()
    marker = str(tmp_path / "never-answers")
    settings = ServerSettings(name="mute", command=sys.executable, args=("-c", "import sys; sys.stdin.read()", marker))

    async def scenario() -> int:
        connection = ServerConnection(settings, owner)
        connection.start()
        try:
            pid = await asyncio.to_thread(_pid_with_argument, marker)
            waiting = asyncio.ensure_future(refusal(connection, "echo", {"text": "hello?"}))
            await asyncio.sleep(0.1)
            await connection.stop()
            stopped = await asyncio.wait_for(waiting, 1)
            assert stopped.info.message == "MCP server 'mute' was stopped"
            return pid
        finally:
            await connection.stop()

    pid = run(scenario())
    assert not alive(pid)
    assert owner.reports == [Starting(), Stopped()]


def _pid_with_argument(marker: str) -> int:
    """The process started with `marker` among its arguments (polling /proc until it appears)."""
    for _ in range(int(START_S / 0.02)):
        for entry in Path("/proc").iterdir():
            try:
                if entry.name.isdigit() and marker.encode() in (entry / "cmdline").read_bytes().split(b"\0"):
                    return int(entry.name)
            except OSError:
                continue
        time.sleep(0.02)
    raise AssertionError(f"no process with {marker}")
