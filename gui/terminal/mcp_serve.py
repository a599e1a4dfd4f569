"""`belay mcp-serve`: Belay's supervised tools offered to any MCP client, each call run by the running console.

An MCP client starts this over stdio, or reaches it over Streamable HTTP on the loopback interface
with the install's token as a bearer token.  Nothing runs here: every tools/list and tools/call is
handed to the console that owns the workspace (or its nearest ancestor that has one) over its
private socket (core/outside/endpoint.py), so each call goes through Belay's policy, the person's approval
in the window, change capture and the journal, under an agent named after the MCP client.

One socket connection per request: closing it (the client cancelled the call or went away) cancels
the call in the console.  While a call waits (for a person's approval, most often), a client that
sent a progress token hears `notifications/progress` every few seconds, so its per-request timeout
does not give up on a slow approval.  An HTTP client's agent is ended ("bye") when its MCP session
ends (DELETE, or the session's idle timeout); on exit, every client that made a call has its agent
ended.

Over HTTP (gui.terminal.mcp_http), a request without the token is refused, saying how to authorize.
Without a console, tools/list still answers from Belay's own description of its tools (so a client
that lists tools once at start-up can use them as soon as a console opens) and every tools/call
fails with how to start one.
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import json
import logging
import os
import secrets
import signal
import socket
import sys
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import mcp.types as mt
from mcp.server.connection import Connection
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError

from core import (
    SERVED_TOOLS,
    Console,
    config_dir,
    describe_tool,
    find_endpoint,
    hub_socket,
    install_token,
    spawn,
    state_root,
)
from gui.terminal.mcp_http import listening_socket, loopback, serve_http, url_host

log = logging.getLogger(__name__)

MAX_ANSWER_BYTES = 64 * 1024 * 1024
"""A Read's answer carries a whole file: as generous as the console's own request limit."""
BYE_TIMEOUT_S = 5.0
"""How long exiting waits for the console to end the clients' agents."""
PROGRESS_EVERY_S = 3.0
"""How often a waiting call tells a client that sent a progress token that it is still alive."""
WAITING = "waiting for approval in Belay (or running)"
"""The progress message: most long waits are a person deciding in the window."""
CALL_ID_META = "belay/call_id"
"""The journal id of the call, in a result's `_meta`, for a client that wants to show or undo it."""
DATA_META = "belay/data"
"""The run's facts (a Read's path and line counts, a command's exit code), in a result's `_meta`.

Not `structuredContent`: that is meant to be the result itself (the spec has its text be the same JSON),
and Claude Code gives the model only the structured one when both come, so a Read was answered with
its line counts instead of its lines (issue 13)."""


@dataclass(frozen=True)
class ServeOptions:
    """What `belay mcp-serve` was asked for."""

    workspace: str | None
    state_dir: str | None
    http: bool = False
    host: str = "127.0.0.1"
    port: int = 0


def belay_version() -> str:
    """This install's version (serverInfo.version)."""
    try:
        return importlib.metadata.version("belay-console")
    except importlib.metadata.PackageNotFoundError:  # run from a source tree that was never installed
        return "0.0.0+unknown"


class BridgeError(Exception):
    """The console could not be asked, or refused the request; the message says what to do."""


class ConsoleLink:
    """Requests to the console that owns the workspace: found afresh each time, one connection each.

    Found afresh so a console opened (or reopened) after the MCP client started is used at once.
    """

    def __init__(self, workspace: Path, state_root: Path, token: str) -> None:
        self.workspace, self.state_root = workspace, state_root
        self._token = token

    async def ask(self, kind: str, **fields: Any) -> dict[str, Any]:
        """The console's answer; cancelling this closes the connection, which cancels the request there."""
        endpoint = await asyncio.to_thread(find_endpoint, str(self.state_root), str(self.workspace))
        socket_path = str(endpoint["socket"]) if endpoint is not None else await self._from_hub()
        return await self._request(socket_path, kind, **fields)

    async def _from_hub(self) -> str:
        """No console of its own: the console for every workspace (`belay watch`) opens one, asking the person
        once whether to supervise this project."""
        hub = await asyncio.to_thread(hub_socket, str(self.state_root))
        if hub is None:
            raise BridgeError(f"no Belay console is running for {self.workspace}. Start one with "
                              f"`belay watch --workspace {self.workspace}`, then try again.")
        answer = await self._request(hub, "supervise", where=str(self.workspace), client="An MCP client (mcp-serve)")
        if not answer.get("socket"):
            raise BridgeError(str(answer.get("refused") or f"Belay does not supervise {self.workspace}"))
        return str(answer["socket"])

    async def _request(self, socket_path: str, kind: str, **fields: Any) -> dict[str, Any]:
        try:
            reader, writer = await asyncio.open_unix_connection(socket_path, limit=MAX_ANSWER_BYTES)
        except OSError as e:
            raise BridgeError(f"the Belay console for {self.workspace} cannot be reached ({e.strerror or e}). "
                              f"Restart it with `belay watch --workspace {self.workspace}`.") from None
        try:
            writer.write(json.dumps({"token": self._token, "kind": kind, **fields}).encode() + b"\n")
            await writer.drain()
            line = await reader.readline()
        except (OSError, ValueError) as e:  # ValueError: an answer over the size limit
            raise BridgeError(f"the Belay console's answer was lost ({e})") from None
        finally:
            writer.close()  # not awaited: a cancelled caller must not wait here
        return _parsed(line)

    def __repr__(self) -> str:
        return f"<ConsoleLink {self.workspace} under {self.state_root}>"


def _parsed(line: bytes) -> dict[str, Any]:
    if not line:
        raise BridgeError("the Belay console closed the connection without answering (was it closed?)")
    try:
        answer = json.loads(line)
    except ValueError:
        raise BridgeError("the Belay console's answer is not JSON") from None
    if not isinstance(answer, dict):
        raise BridgeError("the Belay console's answer is not a JSON object")
    if not answer.get("ok"):
        raise BridgeError(f"the Belay console refused the request: {answer.get('error')}")
    return answer


class McpBridge:
    """MCP requests as the console's "tools", "call" and "bye" requests.

    `prefix` is unique to this process: the console keeps one agent per client session key, and two
    `belay mcp-serve` processes must not share one.
    """

    def __init__(self, link: ConsoleLink, prefix: str) -> None:
        self.link, self._prefix = link, prefix
        self._offline = offline_tools(link.workspace)
        self._schemas = {d["name"]: d["input_schema"] for d in self._offline}
        self._names = set(self._schemas)
        """The tools offered: Belay's own, and whatever the console last listed."""
        self._sessions: set[str] = set()
        """Client session keys that made a call: their agents are ended when their session ends, or on exit."""
        self.progress_every_s = PROGRESS_EVERY_S

    def server(self) -> Server[Any]:
        return Server("belay", version=belay_version(), instructions=instructions(self.link.workspace),
                      on_list_tools=self.list_tools, on_call_tool=self.call_tool,
                      get_tool_input_schema=self._schemas.get)

    async def list_tools(self, ctx: ServerRequestContext[Any], params: mt.PaginatedRequestParams | None,
                         ) -> mt.ListToolsResult:
        if params is not None and params.cursor is not None:
            # The list is one page, so no cursor was ever handed out: any cursor is not one of ours.
            raise MCPError(mt.INVALID_PARAMS, f"Invalid cursor {params.cursor!r}: Belay's tool list has one page")
        try:
            described = (await self.link.ask("tools")).get("tools") or []
        except BridgeError as e:
            log.info("tools/list answered from Belay's own description: %s", e)
            described = self._offline
        self._names |= {d["name"] for d in described}
        return mt.ListToolsResult(tools=[as_mcp_tool(d) for d in described])

    async def call_tool(self, ctx: ServerRequestContext[Any], params: mt.CallToolRequestParams) -> mt.CallToolResult:
        if params.name not in self._names:
            offered = ", ".join(sorted(self._names))
            raise MCPError(mt.INVALID_PARAMS, f"Unknown tool: {params.name!r}; Belay offers {offered}")
        client = client_name(ctx)
        http_session = _session_of(ctx)
        session = f"{self._prefix}:{http_session or 'client:' + client}"
        if session not in self._sessions:
            self._sessions.add(session)  # before asking: a call cancelled mid-way has started the agent too
            if http_session is not None:
                _on_close(ctx, lambda: self._end_session(session))
        try:
            answer = await self._waiting(ctx, self.link.ask("call", client=client, client_session=session,
                                                            tool=params.name, args=params.arguments or {}))
        except BridgeError as e:
            return mt.CallToolResult(content=[mt.TextContent(text=f"Belay did not run {params.name}: {e}")],
                                     is_error=True)
        return as_call_result(answer)

    async def _waiting(self, ctx: ServerRequestContext[Any], asking: Coroutine[Any, Any, dict[str, Any]],
                       ) -> dict[str, Any]:
        """The console's answer; meanwhile, progress every few seconds when the client sent a progress token."""
        task = spawn(asking, "mcp-serve call")
        waited = 0.0
        try:
            while True:
                done, _ = await asyncio.wait([task], timeout=self.progress_every_s)
                if done:
                    return task.result()
                waited += self.progress_every_s
                try:  # a no-op without a progress token
                    await ctx.session.report_progress(waited, None, f"{WAITING}: {waited:g} s")
                except Exception as e:  # noqa: BLE001 - a lost stream must not lose the call: its answer may still go
                    log.debug("progress not sent: %r", e)
        finally:
            if not task.done():
                task.cancel()  # the client cancelled: closing the connection cancels the call in the console
                await asyncio.wait([task])

    async def _end_session(self, session: str) -> None:
        """The client's MCP session ended (DELETE, idle timeout): end its agent now, not on exit."""
        if session in self._sessions:
            self._sessions.discard(session)
            await self._bye(session)

    async def _bye(self, session: str) -> None:
        try:
            async with asyncio.timeout(BYE_TIMEOUT_S):
                await self.link.ask("bye", client_session=session)
        except (BridgeError, TimeoutError) as e:
            log.info("could not end the agent of %s in the console: %s", session, e)

    async def close(self) -> None:
        """End the agents of the clients that made calls (bounded: exiting must not hang on a dead console)."""
        sessions, self._sessions = self._sessions, set()
        for session in sorted(sessions):
            await self._bye(session)

    def __repr__(self) -> str:
        return f"<McpBridge {self._prefix} sessions={len(self._sessions)} {self.link!r}>"


def client_name(ctx: ServerRequestContext[Any]) -> str:
    """The client's clientInfo.name, from its initialize request (or, at 2026-07-28, its request envelope)."""
    params = ctx.session.client_params
    return params.client_info.name if params is not None and params.client_info.name else "mcp client"


def _session_of(ctx: ServerRequestContext[Any]) -> str | None:
    """The Streamable HTTP session id, when the client has one (the handshake era); stdio has none."""
    headers = getattr(ctx.request, "headers", None)
    return headers.get("mcp-session-id") if headers is not None else None


def _on_close(ctx: ServerRequestContext[Any], then: Callable[[], Coroutine[Any, Any, None]]) -> None:
    """Run `then` when the client's connection (an HTTP session: DELETE, idle timeout, server exit) ends.

    The connection's exit stack is the SDK's place for per-connection cleanup; the lowlevel context reaches
    it only through the session's connection (a private attribute, pinned with the SDK's version)."""
    connection = getattr(ctx.session, "_connection", None)
    if isinstance(connection, Connection):
        connection.exit_stack.push_async_callback(then)
    else:
        log.warning("the MCP SDK no longer exposes the connection: agents end only when mcp-serve exits")


def offline_tools(workspace: Path) -> list[dict[str, Any]]:
    """What the console would answer to "tools", from a console that is never opened (no I/O, no threads)."""
    console = Console(workspace, serve=False, track=False)
    return [describe_tool(t) for t in console.registry if t.name in SERVED_TOOLS]


def instructions(workspace: Path) -> str:
    return (f"Belay supervises these tools for the workspace {workspace}: paths must be absolute and inside it. "
            "A call may wait while a person approves it in the Belay window; a denied call says why. Every call "
            "is recorded and its changes can be undone from Belay.")


def as_mcp_tool(described: Mapping[str, Any]) -> mt.Tool:
    a = described.get("annotations") or {}
    return mt.Tool(name=described["name"], description=described.get("description"),
                   input_schema=described["input_schema"],
                   annotations=mt.ToolAnnotations(read_only_hint=a.get("read_only"),
                                                  destructive_hint=a.get("destructive"),
                                                  idempotent_hint=a.get("idempotent"),
                                                  open_world_hint=a.get("open_world")))


def as_call_result(answer: Mapping[str, Any]) -> mt.CallToolResult:
    """The console's outcome for the model: its text (with the reason, when it did not run) as the only content.

    No `structuredContent` and no `outputSchema`: the console's data only describes the text, and a client
    that prefers structured results would hand the model that description instead of the result.
    """
    status = str(answer.get("status") or "failed")
    text = str(answer.get("text") or "")
    if status != "done":
        error = answer.get("error") or {}
        missing = [str(error[k]) for k in ("message", "suggestion") if error.get(k) and str(error[k]) not in text]
        text = "\n".join([text or f"The call ended {status}.", *missing])
    data = answer.get("data")
    meta = {CALL_ID_META: answer.get("call_id"), DATA_META: data if isinstance(data, dict) else None}
    return mt.CallToolResult(content=[mt.TextContent(text=text)], is_error=status != "done",
                             meta={k: v for k, v in meta.items() if v} or None)


async def serve_until_signalled(bridge: McpBridge, serving: Callable[[], Coroutine[Any, Any, None]]) -> None:
    """Run `serving` until it ends or SIGINT/SIGTERM stops it; then end the clients' agents.

    `signal.signal`, not the loop's handlers: uvicorn swaps the handlers while it serves and re-raises
    the signal after its graceful shutdown; this one then only stops what has already stopped.
    """
    task = spawn(serving(), "mcp-serve")
    loop = asyncio.get_running_loop()
    stop = {sig: signal.signal(sig, lambda *_: loop.call_soon_threadsafe(task.cancel))
            for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        await asyncio.wait([task])
    finally:
        task.cancel()
        await asyncio.wait([task])
        try:
            await bridge.close()  # before the handlers go back: a second SIGTERM must not cut the byes short
        finally:
            for sig, previous in stop.items():
                signal.signal(sig, previous)
    if not task.cancelled():
        task.result()  # a crash of the server is reported, not swallowed


async def serve_stdio(bridge: McpBridge) -> None:
    """JSON-RPC over this process's stdin and stdout, until the client closes stdin."""
    server = bridge.server()
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


def run_mcp_serve(options: ServeOptions) -> int:
    """`belay mcp-serve`: serve until the client leaves (stdio) or a signal stops it; 2 for a bad request."""
    configure_logging()
    workspace = Path(options.workspace or ".").expanduser().resolve()
    if not workspace.is_dir():
        print(f"belay mcp-serve: {workspace} is not a directory", file=sys.stderr)
        return 2
    try:
        sock = _http_socket(options) if options.http else None
    except ValueError as e:
        print(f"belay mcp-serve: {e}", file=sys.stderr)
        return 2
    token = install_token(config_dir())
    bridge = McpBridge(ConsoleLink(workspace, state_root(options.state_dir), token),
                       prefix=f"mcp-serve-{os.getpid()}-{secrets.token_hex(4)}")
    if sock is None:
        asyncio.run(serve_until_signalled(bridge, lambda: serve_stdio(bridge)))
        return 0
    with sock:
        host, port = sock.getsockname()[:2]
        print(f"Belay's MCP server for {workspace}: http://{url_host(host)}:{port}/mcp\n"
              f"Clients must send `Authorization: Bearer <token>` with the token in {config_dir() / 'token'}.",
              flush=True)
        asyncio.run(serve_until_signalled(bridge, lambda: serve_http(bridge, sock, token)))
    return 0


def _http_socket(options: ServeOptions) -> socket.socket:
    host = loopback(options.host)
    try:
        return listening_socket(host, options.port)
    except OSError as e:
        raise ValueError(f"cannot listen on {url_host(host)}:{options.port}: {e.strerror or e}") from None


def configure_logging() -> None:
    """Everything to stderr (stdout is the protocol over stdio); the SDK's chatter only from warnings up."""
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr,
                        format="belay mcp-serve: %(levelname)s %(name)s: %(message)s")
    log.setLevel(logging.INFO)
