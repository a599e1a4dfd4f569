"""How Belay reaches one MCP server: a stdio process or a Streamable HTTP endpoint, watched for its end.

The SDK's client notices that a stdio server died only when the next
request fails; Belay wants to say so at once (the window shows the
server as failed, and calls in flight fail with the reason).  So the
transport's read stream is passed through a small forwarder that reports
the end of the stream.  A stdio server's stderr goes to a temporary file,
whose last line explains most failures ("ModuleNotFoundError: ...").

Failure reasons never contain env values, headers or the URL: they are
shown in the window and sent to agents.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any, TextIO, cast

import anyio
import httpx2
import mcp.types as mt
from mcp.client import Transport
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage

from core.mcp.settings import ServerSettings

HTTP_TIMEOUT = httpx2.Timeout(30.0, read=300.0)
"""Connect/write/pool 30 s; reads may wait long (a response stream stays open while a tool works)."""
TAIL_BYTES = 4096
MAX_REASON = 300


def stderr_file() -> TextIO:
    """A temporary file for a stdio server's stderr (blocking: call it off the loop)."""
    return cast(TextIO, tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace"))  # text mode: a TextIO


def last_words(errlog: TextIO | None) -> str:
    """The last non-empty line a stdio server wrote to stderr, shortened (blocking: call it off the loop)."""
    if errlog is None:
        return ""
    try:
        errlog.flush()
        size = os.fstat(errlog.fileno()).st_size
        errlog.seek(max(0, size - TAIL_BYTES))
        lines = [line.strip() for line in errlog.read().splitlines() if line.strip()]
    except (OSError, ValueError):
        return ""
    return _short(lines[-1]) if lines else ""


async def open_transport(settings: ServerSettings, errlog: TextIO | None, cwd: str | None,
                         stack: AsyncExitStack, auth: httpx2.Auth | None = None) -> Transport:
    """The SDK transport for `settings`; an HTTP client it needs is closed by `stack`; `auth` signs its
    requests (OAuth, see core.mcp.oauth)."""
    if settings.command is not None:
        params = StdioServerParameters(command=settings.command, args=list(settings.args), env=dict(settings.env),
                                       cwd=settings.cwd or cwd)
        return stdio_client(params, errlog=errlog) if errlog is not None else stdio_client(params)
    assert settings.url is not None
    http = await stack.enter_async_context(httpx2.AsyncClient(headers=settings.headers, timeout=HTTP_TIMEOUT,
                                                              auth=auth))
    return streamable_http_client(settings.url, http_client=http)


@asynccontextmanager
async def watched(inner: Transport, on_end: Callable[[], Awaitable[None]]) -> AsyncIterator[tuple[Any, Any]]:
    """`inner`'s streams, with `on_end` awaited when the server ends the read stream (not when we close it)."""
    async with inner as (read, write):
        send, receive = anyio.create_memory_object_stream[SessionMessage | Exception](0)

        async def forward() -> None:
            try:
                async for item in read:
                    await send.send(item)
                await on_end()  # before the session sees the end, so calls in flight fail with the reason
            except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                pass  # the session is closing: not the server's doing
            finally:
                send.close()

        async with anyio.create_task_group() as group:
            group.start_soon(forward)
            try:
                yield receive, write
            finally:
                group.cancel_scope.cancel()
                receive.close()


def failure_reason(error: BaseException, settings: ServerSettings, said: str) -> str:
    """Why a server could not be started or was lost, from what was raised (`said`: its last stderr line)."""
    leaf = _leaf(error)
    heard = f"; it said: {said}" if said else ""
    if isinstance(leaf, OSError) and settings.command is not None and not isinstance(leaf, ConnectionError):
        where = f": {leaf.filename}" if leaf.filename is not None and str(leaf.filename) != settings.command else ""
        return f"could not start {settings.command!r}: {leaf.strerror or leaf}{where}"  # a bad cwd names itself
    if isinstance(leaf, MCPError) and leaf.code == mt.CONNECTION_CLOSED:
        return f"the server closed the connection{heard}"
    if isinstance(leaf, MCPError):
        return _short(f"the server answered with an error: {leaf.message}{heard}")
    if isinstance(leaf, httpx2.HTTPStatusError):
        return f"the server answered HTTP {leaf.response.status_code}"
    if isinstance(leaf, (httpx2.ConnectError, ConnectionError)):
        return f"could not connect to the server: {_short(str(leaf)) or type(leaf).__name__}"
    if isinstance(leaf, httpx2.HTTPError):
        return f"the connection to the server failed: {_short(str(leaf)) or type(leaf).__name__}"
    return _short(f"{type(leaf).__name__}: {leaf}{heard}")


def _leaf(error: BaseException) -> BaseException:
    """The first real error inside (nested) exception groups."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    return error


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_REASON else text[:MAX_REASON - 1] + "…"
