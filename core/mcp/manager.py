"""The MCP servers of a console: started with it, restartable one by one, stopped with it.

The manager owns one `ServerConnection` per configured server and keeps the
tool registry in step with what each server offers: a listing registers
the new tools and unregisters the ones that went away (or changed).  A
server that fails keeps its tools registered, so an agent calling one
learns why it cannot run (and that a restart may help) rather than that
no such tool exists.  Each change of a server's state goes to `on_status`
(the console publishes it); the state itself comes from `core.mcp.state`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Mapping
from functools import partial
from pathlib import Path
from typing import Any, Literal

import mcp.types as mt

from core.errors import ErrorKind, ToolError
from core.mcp.connection import Elicit, Report, ServerConnection, ToolsListed
from core.mcp.names import PREFIX, tool_names
from core.mcp.oauth import SIGN_IN_S, OAuthPlace
from core.mcp.settings import ServerSettings
from core.mcp.state import Happening, Listed, Starting, Stopped, advance
from core.mcp.tool import McpTool
from core.models.mcp import ServerState, ServerStatus
from core.tools.registry import ToolRegistry

log = logging.getLogger(__name__)
START_GRACE_S = 5.0
"""Beyond the longest `startup_timeout_s`, how long `wait_started` waits: a server's own limit fails it first."""

McpStart = Literal["always", "configured", "never"]
"""When a console starts the user's MCP servers (`Console(mcp=...)`; the SDK alone takes a second or more to
import): "always" (a window) and "configured" (`belay run`) start the servers the settings name when it opens,
and import nothing when they name none (servers added to the settings later start with the next console);
"never" (a console that runs no calls: `belay undo`) starts none."""


class McpManager:
    """Starts the configured MCP servers and adapts their tools into a `ToolRegistry`."""

    def __init__(self, registry: ToolRegistry, servers: Mapping[str, ServerSettings], *,
                 on_status: Callable[[ServerStatus], None] = lambda status: None, cwd: Path | None = None,
                 elicit: Elicit | None = None, oauth: OAuthPlace | None = None) -> None:
        """`cwd`: where stdio servers run when their settings name no directory (the workspace, as Claude Code);
        `elicit`: who answers a server's request for the person's input (None: it is declined); `oauth`: where
        sign-ins to servers with `oauth = true` are kept, and how the person is shown a sign-in page."""
        self.registry = registry
        self._elicit = elicit
        self._oauth = oauth
        self._servers = dict(servers)
        self._on_status = on_status
        self._cwd = str(cwd) if cwd is not None else None
        self._status = {name: ServerStatus(name=name) for name in self._servers}
        self._connections: dict[str, ServerConnection] = {}
        self._tools: dict[str, dict[str, McpTool]] = {name: {} for name in self._servers}
        self._locks = {name: asyncio.Lock() for name in self._servers}
        self._settled = asyncio.Event()
        """Set while no server is starting."""
        self._settled.set()
        self._advanced = asyncio.Event()
        """Set (and replaced) each time a server's state changes."""
        self._closed = False

    # -- commands -----------------------------------------------------------------------------------

    async def start(self) -> None:
        """Start every configured server; returns at once (see `wait_started`): a slow server never holds up
        the console."""
        for name in self._servers:
            async with self._locks[name]:
                if name not in self._connections and not self._closed:
                    self._connect(name)

    async def wait_started(self, timeout_s: float | None = None) -> list[ServerStatus]:
        """Wait until no server is starting any more (or `timeout_s` passed); every server's status.

        None: as long as the slowest server's `startup_timeout_s` (and a grace), after which its connection has
        failed it, so every server has then either listed its tools or failed."""
        if timeout_s is None:
            timeout_s = max((s.startup_timeout_s for s in self._servers.values()), default=0.0) + START_GRACE_S
        with contextlib.suppress(TimeoutError):  # not an error: the caller sees who is still starting
            async with asyncio.timeout(timeout_s):
                await self._settled.wait()
        return self.statuses()

    async def wait_for_tool(self, tool_name: str) -> None:
        """Wait while the server that would offer `tool_name` (`mcp__<server>__...`) is still starting: at most its
        `startup_timeout_s` and a grace, after which its connection has failed it.  At once for any other name.

        A call made while the window opens (a demo's first call) would otherwise fail "no tool named ..."."""
        server = self._server_of(tool_name)
        if server is None:
            return
        settings = self._servers[server]
        limit = settings.startup_timeout_s + (SIGN_IN_S if settings.oauth else 0.0) + START_GRACE_S
        with contextlib.suppress(TimeoutError):  # the caller then finds the tool missing, and says so
            async with asyncio.timeout(limit):
                while self._status[server].state == ServerState.STARTING and tool_name not in self.registry:
                    await self._advanced.wait()

    def _server_of(self, tool_name: str) -> str | None:
        if not tool_name.startswith(PREFIX):
            return None
        server = tool_name[len(PREFIX):].split("__", 1)[0]
        return server if server in self._servers else None

    async def restart(self, name: str) -> None:
        """Stop the server (if it runs) and start it afresh: what the window's restart button does."""
        if name not in self._servers:
            raise ValueError(f"no MCP server named {name!r}; configured: {', '.join(self._servers) or 'none'}")
        async with self._locks[name]:
            if self._closed:
                return
            await self._disconnect(name)
            self._connect(name)

    async def close(self) -> None:
        """Stop every server (processes ended, tasks finished) and take their tools out of the registry."""
        self._closed = True
        await asyncio.gather(*(self._stop_one(name) for name in self._servers))

    # -- what the window reads ----------------------------------------------------------------------

    def statuses(self) -> list[ServerStatus]:
        return [self._status[name] for name in self._servers]

    def status(self, name: str) -> ServerStatus:
        return self._status[name]

    def tools(self, name: str) -> list[McpTool]:
        """The tools of server `name` now in the registry."""
        return list(self._tools[name].values())

    # -- inside ---------------------------------------------------------------------------------------

    def _connect(self, name: str) -> None:
        connection = ServerConnection(self._servers[name], self._on_report, cwd=self._cwd, elicit=self._elicit,
                                      oauth=self._oauth)
        self._connections[name] = connection
        self._advance(name, Starting())  # at once, not when its task first runs: `wait_started` relies on it
        connection.start()

    async def _disconnect(self, name: str) -> None:
        connection = self._connections.pop(name, None)
        if connection is not None:
            await connection.stop()

    async def _stop_one(self, name: str) -> None:
        async with self._locks[name]:
            await self._disconnect(name)
            for local in list(self._tools[name]):
                self._unregister(name, local)
            self._advance(name, Stopped())

    async def _call(self, name: str, tool: str, arguments: dict[str, Any]) -> mt.CallToolResult:
        connection = self._connections.get(name)
        if connection is None:
            raise ToolError(ErrorKind.SYSTEM, f"MCP server {name!r} is not running (being restarted or stopped)",
                            "Try again in a moment, or ask the person to restart it.", recoverable=False)
        return await connection.call(tool, arguments)

    def _on_report(self, connection: ServerConnection, report: Report) -> None:
        name = connection.name
        if self._connections.get(name) is not connection and not isinstance(report, Stopped):
            return  # news from a connection already replaced
        if isinstance(report, ToolsListed):
            self._sync_tools(name, report.tools)
            self._advance(name, Listed(len(self._tools[name])))
        else:
            self._advance(name, report)

    def _sync_tools(self, name: str, specs: tuple[mt.Tool, ...]) -> None:
        names = tool_names(name, [spec.name for spec in specs])
        wanted = {names[spec.name]: spec for spec in specs}
        current = self._tools[name]
        for local, tool in list(current.items()):
            if wanted.get(local) != tool.spec:
                self._unregister(name, local)
        for local, spec in wanted.items():
            if local in current:
                continue
            tool = McpTool(local, name, spec, self._servers[name].timeout_s, partial(self._call, name))
            if local in self.registry:
                log.warning("MCP server %s: a tool named %s is already registered; %r is left out",
                            name, local, spec.name)
                continue
            self.registry.register(tool)
            current[local] = tool

    def _unregister(self, name: str, local: str) -> None:
        tool = self._tools[name].pop(local)
        if self.registry.get(local) is tool:
            self.registry.unregister(local)

    def _advance(self, name: str, what: Happening) -> None:
        before = self._status[name]
        after = advance(before, what)
        if after is not before:
            self._status[name] = after
            self._advanced.set()
            self._advanced = asyncio.Event()
            if any(s.state == ServerState.STARTING for s in self._status.values()):
                self._settled.clear()
            else:
                self._settled.set()
            log.info("MCP server %s: %s", name, after.describe())
            self._on_status(after)

    def __repr__(self) -> str:
        states = ", ".join(f"{s.name}: {s.describe()}" for s in self._status.values()) or "no servers"
        return f"<McpManager {states}>"
