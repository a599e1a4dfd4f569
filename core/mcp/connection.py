"""One MCP server's session, owned by one long-lived task; other tasks reach it through a stream of calls.

The MCP SDK is anyio-based: its client (process, HTTP client, task groups)
must be entered and exited in the same task.  So `start` creates one task
that connects, lists the tools, then serves calls sent to it on a memory
stream, each in a child task it owns, and finally closes the client.  A
caller waits on a future; cancelling the wait (a timeout, the user)
cancels the child, and the SDK tells the server the request was
cancelled.  The task follows the server's tool list (the handshake era's
`notifications/tools/list_changed`, or a 2026-07-28 `subscriptions/listen`
stream) and reports each listing; a call whose tool disappears from the
list fails at once.

A server that cannot start, stops answering the start-up within its
`startup_timeout_s`, or whose connection ends, fails: pending and later
calls get the reason, until the manager starts a new connection.

A server that asks the person for input (`elicitation/create`) is answered
by `elicit` (the console's `Elicitations`: the window's form, or a decline
when nobody can answer); without one, it is declined.
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import logging
import math
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from typing import Any, TextIO

import anyio
import mcp.types as mt
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp import Client
from mcp.client import ClientRequestContext, IncomingMessage
from mcp.client.subscriptions import ListenNotSupportedError, SubscriptionLost
from mcp.shared.exceptions import MCPError
from mcp.types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError

from core.errors import ErrorKind, ToolError
from core.mcp.oauth import SIGN_IN_S, OAuthPlace
from core.mcp.results import error_of
from core.mcp.settings import ServerSettings
from core.mcp.state import Failed, Starting, Stopped
from core.mcp.transport import failure_reason, last_words, open_transport, stderr_file, watched
from core.tasks import spawn

log = logging.getLogger(__name__)
STOP_GRACE_S = 10.0
"""How long `stop` waits for the session to close (a stdio server gets 2 s to exit, 2 s more after SIGTERM)."""
MAX_PAGES = 100
"""A server whose tool list never ends cannot hang the start-up."""


def _belay_version() -> str:
    try:
        return importlib.metadata.version("belay-console")
    except importlib.metadata.PackageNotFoundError:  # a source tree that was never installed
        return "0.0.0+unknown"


CLIENT_INFO = mt.Implementation(name="belay", version=_belay_version())
Elicit = Callable[[str, mt.ElicitRequestParams], Awaitable[mt.ElicitResult]]
"""Asks the person for what a server (named first) requests; the answer goes back to the server."""


@dataclass(frozen=True)
class ToolsListed:
    """The server's current tools (the first listing, or after it said the list changed)."""

    tools: tuple[mt.Tool, ...]


Report = Starting | ToolsListed | Failed | Stopped
"""What a connection tells its owner; `ToolsListed` becomes `Listed(n)` once the registry has the tools."""


def _new_future() -> asyncio.Future[mt.CallToolResult]:
    return asyncio.get_running_loop().create_future()


@dataclass(eq=False)
class _Call:
    """One call on its way to the server; `future` is what its caller waits on."""

    tool: str
    arguments: dict[str, Any]
    future: asyncio.Future[mt.CallToolResult] = field(default_factory=_new_future)


class ServerConnection:
    """The live session with one MCP server: started once, stopped once."""

    def __init__(self, settings: ServerSettings, report: Callable[[ServerConnection, Report], None],
                 cwd: str | None = None, elicit: Elicit | None = None, oauth: OAuthPlace | None = None) -> None:
        """`report` hears what happens to this connection; `cwd` is where a stdio server runs when its settings
        name no directory (the workspace); `elicit` answers the server's requests for the person's input;
        `oauth` keeps the sign-ins of servers configured with `oauth = true`."""
        self.settings = settings
        self._tell = report
        self._cwd = cwd
        self._elicit = elicit
        self._oauth = oauth
        self._send, self._requests = anyio.create_memory_object_stream[_Call](math.inf)
        self._calls: set[_Call] = set()
        self._tools: dict[str, mt.Tool] | None = None
        self._changed: MemoryObjectSendStream[None] | None = None
        self._task: asyncio.Task[None] | None = None
        self._life: anyio.CancelScope | None = None
        self._serving: anyio.CancelScope | None = None
        self._errlog: TextIO | None = None
        self._stopping = False
        self._ended: tuple[ErrorKind, str, str] | None = None
        """Why calls are refused once the session failed or stopped: (kind, what happened, why)."""

    @property
    def name(self) -> str:
        return self.settings.name

    # -- what other tasks call ----------------------------------------------------------------------

    def start(self) -> None:
        """Start the task that owns the session (the caller's loop runs it)."""
        if self._task is not None:
            raise RuntimeError(f"the connection to {self.name} was already started")
        self._task = spawn(self._own(), f"belay-mcp-{self.name}")

    async def stop(self) -> None:
        """Close the session (a stdio server's process is ended); calls still waiting fail."""
        self._stopping = True
        self._send.close()
        if self._serving is None and self._life is not None:
            self._life.cancel()  # still starting: give up on it
        task = self._task
        if task is None or task.done():
            return
        done, _ = await asyncio.wait([task], timeout=STOP_GRACE_S)
        if not done:  # the SDK's own shutdown is bounded; this is the backstop
            log.warning("MCP server %s did not close within %g s; cancelling it", self.name, STOP_GRACE_S)
            task.cancel()
            await asyncio.wait([task])

    async def call(self, tool: str, arguments: dict[str, Any]) -> mt.CallToolResult:
        """Call `tool` (its name on the server); raises ToolError when the server cannot answer."""
        if self._tools is not None and tool not in self._tools:
            raise _vanished(self.name, tool, "")
        call = _Call(tool, arguments)
        try:
            self._send.send_nowait(call)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            raise self._refusal(during=False) from None
        self._calls.add(call)
        try:
            return await call.future
        finally:
            self._calls.discard(call)

    # -- the owning task ------------------------------------------------------------------------------

    async def _own(self) -> None:
        self._tell(self, Starting())
        reason = "its task was cancelled"
        try:
            reason = await self._session()
        finally:
            self._send.close()
            self._requests.close()
            self._end(ErrorKind.SYSTEM, f"MCP server {self.name!r} was stopped", "")  # if cancelled from outside
            for call in list(self._calls):
                _settle(call.future, self._refusal(during=True))
            self._tell(self, Stopped() if self._stopping else Failed(reason))

    async def _session(self) -> str:
        """Run the session to its end; the reason it failed ("" when it was stopped)."""
        started = False
        try:
            if self.settings.command is not None:
                self._errlog = await asyncio.to_thread(stderr_file)
            limit = self.settings.startup_timeout_s + (SIGN_IN_S if self.settings.oauth else 0.0)  # a person signs in
            with anyio.CancelScope(deadline=anyio.current_time() + limit) as life:
                self._life = life
                if self._stopping:
                    life.cancel()
                async with AsyncExitStack() as stack:
                    client = await self._connect(stack)
                    self._listed(await _all_tools(client))
                    started, life.deadline = True, math.inf
                    await self._serve(client)
            if self._stopping:
                return self._end(ErrorKind.SYSTEM, f"MCP server {self.name!r} was stopped", "")
            if life.cancelled_caught:
                why = f"it did not answer within {self.settings.startup_timeout_s:g} s (startup_timeout_s)"
                if self.settings.oauth:
                    why += f", and {SIGN_IN_S:g} s more for signing in"
                return self._end(ErrorKind.SYSTEM, f"MCP server {self.name!r} did not start", why)
            assert self._ended is not None  # the server ended the connection
            return self._ended[2]
        except Exception as e:  # noqa: BLE001 - the SDK raises OSError, MCPError, httpx2 errors, in groups: each ends it
            said = await asyncio.to_thread(last_words, self._errlog)
            kind = ErrorKind.NETWORK if started else ErrorKind.SYSTEM
            what = "lost its connection" if started else "could not be started"
            return self._end(kind, f"MCP server {self.name!r} {what}", failure_reason(e, self.settings, said))
        finally:
            if self._errlog is not None:
                self._errlog.close()

    async def _connect(self, stack: AsyncExitStack) -> Client:
        auth = None
        if self.settings.oauth:
            if self._oauth is None:
                raise RuntimeError("oauth = true, but this console keeps no sign-ins")
            auth = await self._oauth.provider(self.settings)
        transport = await open_transport(self.settings, self._errlog, self._cwd, stack, auth)
        client = Client(watched(transport, self._on_end), message_handler=self._on_message, cache=None,
                        client_info=CLIENT_INFO, elicitation_callback=self._on_elicit)
        return await stack.enter_async_context(client)

    async def _on_elicit(self, context: ClientRequestContext, params: mt.ElicitRequestParams,
                         ) -> mt.ElicitResult | mt.ErrorData:
        """The server asks the person for input: raised like an approval (see core.mcp.elicitation)."""
        if self._elicit is None or self._stopping:
            return mt.ElicitResult(action="decline")
        return await self._elicit(self.name, params)

    async def _serve(self, client: Client) -> None:
        """Answer calls until stopped (the stream closes) or the connection ends (the scope is cancelled)."""
        changed, changes = anyio.create_memory_object_stream[None](1)
        async with changed, changes, anyio.create_task_group() as group:  # the group ends before the streams close
            self._serving, self._changed = group.cancel_scope, changed
            group.start_soon(self._follow, client, changes)
            if client.protocol_version in MODERN_PROTOCOL_VERSIONS and _announces_changes(client):
                group.start_soon(self._listen, client)
            async for call in self._requests:
                group.start_soon(self._answer, client, call)
            group.cancel_scope.cancel()

    async def _answer(self, client: Client, call: _Call) -> None:
        if call.future.done():
            return  # the caller gave up before its turn
        with anyio.CancelScope() as scope:
            call.future.add_done_callback(lambda _: scope.cancel())
            try:
                result = await client.call_tool(call.tool, call.arguments)
            except MCPError as e:
                _settle(call.future, self._refusal(during=True) if self._ended else error_of(e, self.name, call.tool))
            except (RuntimeError, ValidationError) as e:  # a result that breaks its own output schema or the protocol
                _settle(call.future, ToolError(ErrorKind.SYSTEM, f"MCP server {self.name!r} gave an unusable answer "
                                               f"to {call.tool}: {e}", "The server needs fixing; try another tool."))
            else:
                _settle(call.future, result)

    async def _on_end(self) -> None:
        """The server ended the stream (its process exited): fail what waits, end the session."""
        if self._stopping or self._ended is not None or self._serving is None:
            return  # closing, or still starting (the start-up's own error says what happened)
        said = await asyncio.to_thread(last_words, self._errlog)
        ended = "its process ended" if self.settings.command is not None else "it closed the connection"
        why = ended + (f"; it said: {said}" if said else "")
        self._end(ErrorKind.NETWORK, f"MCP server {self.name!r} stopped", why)
        if self._serving is not None:
            self._serving.cancel()

    def _end(self, kind: ErrorKind, what: str, why: str) -> str:
        """Note how the session ended (the first reason stays); returns `why`."""
        if self._ended is None:
            self._ended = (kind, what, why)
        return self._ended[2]

    def _refusal(self, during: bool) -> ToolError:
        kind, what, why = self._ended or (ErrorKind.SYSTEM, f"MCP server {self.name!r} was stopped", "")
        message = f"{what}: {why}" if why else what
        if during and kind == ErrorKind.NETWORK:
            return ToolError(kind, f"{message} (during this call, so its result is unknown)",
                             "Ask the person to restart the server (Belay's MCP panel), then try again.")
        return ToolError(kind, message, "Ask the person to restart the server (Belay's MCP panel), or use other "
                         "tools.", recoverable=False)

    # -- following the tool list ------------------------------------------------------------------------

    async def _on_message(self, message: IncomingMessage) -> None:
        if isinstance(message, mt.ToolListChangedNotification):
            self._mark_changed()
        elif isinstance(message, Exception):
            log.debug("MCP server %s: transport error: %r", self.name, message)

    def _mark_changed(self) -> None:
        if self._changed is not None:
            try:
                self._changed.send_nowait(None)
            except (anyio.WouldBlock, anyio.ClosedResourceError, anyio.BrokenResourceError):
                pass  # a listing is already due, or the session is closing

    async def _follow(self, client: Client, changes: MemoryObjectReceiveStream[None]) -> None:
        async for _ in changes:
            try:
                with anyio.fail_after(self.settings.timeout_s):
                    tools = await _all_tools(client)
            except (MCPError, TimeoutError, ValidationError) as e:
                log.info("MCP server %s said its tools changed, but listing them failed: %s", self.name, e)
                continue
            self._listed(tools)

    async def _listen(self, client: Client) -> None:
        """On a 2026-07-28 connection, change notifications come only on a stream asked for."""
        try:
            with anyio.CancelScope(deadline=anyio.current_time() + self.settings.timeout_s) as waiting:
                async with client.listen(tools_list_changed=True) as subscription:
                    waiting.deadline = math.inf
                    async for _ in subscription:
                        self._mark_changed()
        except (MCPError, SubscriptionLost, ListenNotSupportedError) as e:
            log.info("MCP server %s: not following its tool list: %s", self.name, e)
            return
        if waiting.cancelled_caught:
            log.info("MCP server %s: not following its tool list: it did not acknowledge the subscription",
                     self.name)

    def _listed(self, tools: list[mt.Tool]) -> None:
        listed = {tool.name: tool for tool in tools}
        gone = set(self._tools or ()) - set(listed)
        self._tools = listed
        for call in list(self._calls):
            if call.tool in gone:
                # Settling it also cancels its request (see `_answer`): the server is told to stop.
                _settle(call.future, _vanished(self.name, call.tool, " while this call was running"))
        self._tell(self, ToolsListed(tuple(tools)))

    def __repr__(self) -> str:
        state = "stopping" if self._stopping else ("ended" if self._ended else "live")
        tools = "?" if self._tools is None else len(self._tools)
        return (f"<ServerConnection {self.name} ({self.settings.transport}) {state} tools={tools} "
                f"calls={len(self._calls)}>")


async def _all_tools(client: Client) -> list[mt.Tool]:
    tools: list[mt.Tool] = []
    cursor = None
    for _ in range(MAX_PAGES):
        page = await client.list_tools(cursor=cursor)
        tools += page.tools
        cursor = page.next_cursor
        if cursor is None:
            break
    return tools


def _announces_changes(client: Client) -> bool:
    tools = client.server_capabilities.tools
    return tools is not None and tools.list_changed is True


def _vanished(server: str, tool: str, when: str) -> ToolError:
    return ToolError(ErrorKind.UNKNOWN_TOOL, f"MCP server {server!r} no longer offers the tool {tool!r}{when}",
                     "Look at the tools available now and choose another.")


def _settle(future: asyncio.Future[mt.CallToolResult], outcome: mt.CallToolResult | ToolError) -> None:
    if future.done():
        return
    if isinstance(outcome, ToolError):
        future.set_exception(outcome)
    else:
        future.set_result(outcome)
