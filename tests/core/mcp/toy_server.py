"""A small real MCP server for the MCP client tests, built on the SDK's `MCPServer`.

Run it as `python toy_server.py stdio` (JSON-RPC over its stdin/stdout) or
`python toy_server.py http PORT` (Streamable HTTP on 127.0.0.1:PORT/mcp);
with `--writer` it also has `write_note`, a tool that writes a file in its
working directory; with `--eliciting`, `book`, a tool that asks the person for input (elicitation); with `--legacy` (stdio only) it serves only the handshake era, as servers
built before 2026-07-28 do: clients fall back from their `server/discover`
probe to `initialize`.

Its tools cover what the client must handle: annotations, a strict input
schema, structured output, error results, non-text content, a crash, a hang,
and tools that appear and disappear while the session runs.
"""

from __future__ import annotations

import base64
import os
import sys
import time
from typing import Annotated, Literal

import anyio
from mcp.server.elicitation import ElicitationResult
from mcp.server.mcpserver import Context, Elicit, MCPServer, Resolve
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.utilities.types import Image
from mcp.server.runner import serve_loop
from mcp.server.stdio import stdio_server
from mcp.types import ToolAnnotations
from pydantic import BaseModel, Field

server = MCPServer("toy", log_level="WARNING")
PIXEL = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmM"
                         "IQAAAABJRU5ErkJggg==")  # 70 bytes: a 1x1 red PNG


@server.tool(annotations=ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False))
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


@server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True))
def add(a: int, b: int) -> int:
    """Add two integers (structured output)."""
    return a + b


def write_note(name: str, text: str) -> str:
    """Write `text` to the file `name` in the server's working directory (a tool that changes files)."""
    with open(name, "w", encoding="utf-8") as f:
        f.write(text)
    return f"wrote {name}"


if "--writer" in sys.argv:  # only when asked: the other tests count the tools
    server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False))(write_note)


class Booking(BaseModel):
    """What `book` asks the person for."""

    name: str = Field(description="Who the room is for")
    nights: int = Field(default=2, ge=1, le=14, description="How many nights")
    room: Literal["single", "double"] = "double"
    breakfast: bool = True


def _who() -> Elicit[Booking]:
    return Elicit("Who is the booking for?", Booking)


async def book(booking: Annotated[ElicitationResult[Booking], Resolve(_who)]) -> str:
    """Book a room, asking the person who it is for (elicitation: mid-call in the handshake era, an
    input-required round at 2026-07-28)."""
    if booking.action == "accept":
        return f"booked {booking.data.model_dump_json()}"
    return f"not booked: {booking.action}"


if "--eliciting" in sys.argv:
    server.tool()(book)


@server.tool()
def wipe(target: str) -> str:
    """Pretend to delete `target` (no annotations: MCP's defaults apply)."""
    return f"wiped {target}"


@server.tool(name="dotted.name-tool")
def dotted() -> str:
    """A tool whose name has a character Belay's names do not allow."""
    return "dotted"


@server.tool()
def fail(message: str) -> str:
    """Always fails with `message` (an isError result)."""
    raise ToolError(message)


@server.tool(structured_output=False)
def picture() -> list[object]:
    """Text and an image."""
    return ["a red pixel:", Image(data=PIXEL, format="png")]


@server.tool()
def pid() -> int:
    """This server's process id."""
    return os.getpid()


@server.tool()
def env(name: str) -> str:
    """The value of an environment variable in the server's process ("(unset)" when unset)."""
    return os.environ.get(name, "(unset)")


@server.tool()
def header(name: str, ctx: Context) -> str:
    """A request header's value, over HTTP ('' when absent)."""
    return (ctx.headers or {}).get(name.lower(), "")


@server.tool()
def crash() -> str:
    """Exit the whole process at once, mid-call."""
    sys.stdout.flush()
    print("toy server: crashing on purpose", file=sys.stderr, flush=True)
    os._exit(3)


@server.tool()
async def hang(seconds: float) -> str:
    """Wait `seconds` before answering."""
    await anyio.sleep(seconds)
    return "woke up"


@server.tool()
def block(seconds: float) -> str:
    """Block this server's only thread for `seconds` (it answers nothing meanwhile)."""
    time.sleep(seconds)
    return "unblocked"


async def _changed(ctx: Context) -> None:
    """Tell the client the tool list changed, in both protocol eras."""
    await ctx.notify_tools_changed()  # 2026-07-28: subscriptions/listen streams
    await ctx.session.send_tool_list_changed()  # handshake era: a plain notification (dropped by modern sessions)


@server.tool()
async def grow(name: str, ctx: Context) -> str:
    """Add a tool called `name` that returns its own name."""
    def made() -> str:
        return name
    server.add_tool(made, name=name, description=f"added at run time: {name}")
    await _changed(ctx)
    return f"added {name}"


@server.tool()
async def shrink(name: str, ctx: Context) -> str:
    """Remove the tool called `name`."""
    server.remove_tool(name)
    await _changed(ctx)
    return f"removed {name}"


async def serve_handshake_era_only() -> None:
    lowlevel = server._lowlevel_server  # MCPServer.run_stdio_async, but without the 2026-07-28 era
    async with stdio_server() as (read, write), lowlevel.lifespan(lowlevel) as state:
        await serve_loop(lowlevel, read, write, lifespan_state=state,
                         init_options=lowlevel.create_initialization_options())


def main() -> None:
    if sys.argv[1:2] == ["http"]:
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    elif "--legacy" in sys.argv:
        anyio.run(serve_handshake_era_only)
    else:
        server.run("stdio")


if __name__ == "__main__":
    main()
