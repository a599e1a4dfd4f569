"""Real MCP servers for the client tests: the toy server over stdio pipes and over HTTP on 127.0.0.1."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from core.errors import BelayError
from core.ids import AgentId, CallId
from core.mcp.connection import Elicit
from core.mcp.manager import McpManager
from core.mcp.settings import ServerSettings
from core.models.mcp import ServerState, ServerStatus
from core.paths import Workspace
from core.run import arguments
from core.run.limits import run_limited
from core.tools.base import ReadState, RunTool, ToolContext, ToolOutput
from core.tools.registry import ToolRegistry

TOY = Path(__file__).with_name("toy_server.py")
START_S = 20.0
"""Generous: a cold Python start with the MCP SDK takes about a second, a loaded CI machine longer."""


def stdio(name: str, *extra: str, **settings: Any) -> ServerSettings:
    """Settings for the toy server over stdio."""
    return ServerSettings(name=name, command=sys.executable, args=(str(TOY), "stdio", *extra), **settings)


@dataclass
class Harness:
    """A registry with a manager feeding it, and every status change the manager announced."""

    registry: ToolRegistry
    manager: McpManager
    workspace: Workspace
    announced: list[ServerStatus] = field(default_factory=list)

    async def call(self, name: str, args: dict[str, Any], timeout_s: float | None = None) -> ToolOutput:
        """What the pipeline does with a call: look it up, validate it, run it under its limit (and retries)."""
        tool = self.registry.get(name)
        if not isinstance(tool, RunTool):
            raise AssertionError(f"no tool {name}; registered: {self.registry.names()}")
        valid = arguments.validate(tool, arguments.decode(args))
        ctx = ToolContext(self.workspace, AgentId("agent"), CallId("call"), ReadState())
        limit = timeout_s if timeout_s is not None else tool.timeout_s
        return (await run_limited(tool, valid, ctx, limit, lambda *_: None)).output

    async def error(self, name: str, args: dict[str, Any], timeout_s: float | None = None) -> BelayError:
        try:
            output = await self.call(name, args, timeout_s)
        except BelayError as e:
            return e
        raise AssertionError(f"{name} succeeded: {output.text!r}")

    async def settled(self) -> dict[str, ServerStatus]:
        return {s.name: s for s in await self.manager.wait_started(START_S)}

    async def until(self, name: str, state: ServerState) -> ServerStatus:
        for _ in range(int(START_S / 0.02)):
            status = self.manager.status(name)
            if status.state == state:
                return status
            await asyncio.sleep(0.02)
        raise AssertionError(f"{name} is {self.manager.status(name).describe()}, not {state.value}")


@asynccontextmanager
async def harness(tmp_path: Path, *servers: ServerSettings, elicit: Elicit | None = None) -> AsyncIterator[Harness]:
    """The servers started (and settled) in a fresh registry; all stopped on the way out."""
    registry = ToolRegistry()
    announced: list[ServerStatus] = []
    manager = McpManager(registry, {s.name: s for s in servers}, on_status=announced.append, cwd=tmp_path,
                         elicit=elicit)
    h = Harness(registry, manager, Workspace(tmp_path), announced)
    await manager.start()
    try:
        await h.settled()
        yield h
    finally:
        await manager.close()


def alive(pid: int) -> bool:
    """Whether a process runs (a zombie, dead but not yet reaped, does not count)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class HttpServer:
    """The toy server over Streamable HTTP, in its own process."""

    url: str
    process: subprocess.Popen[bytes]

    def kill(self) -> None:
        self.process.kill()
        self.process.wait(10)


def start_http(port: int, log_path: Path) -> HttpServer:
    """The toy server listening on 127.0.0.1:`port` (blocking until it accepts connections)."""
    with open(log_path, "ab") as log:
        process = subprocess.Popen([sys.executable, str(TOY), "http", str(port)], stdout=log, stderr=log)
    deadline = time.monotonic() + START_S
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return HttpServer(f"http://127.0.0.1:{port}/mcp", process)
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                process.kill()
                process.wait(10)
                raise AssertionError(log_path.read_text()) from None
            time.sleep(0.05)


@pytest.fixture
def http_server(tmp_path: Path) -> Iterator[HttpServer]:
    server = start_http(free_port(), tmp_path / "http-server.log")
    try:
        yield server
    finally:
        server.kill()
