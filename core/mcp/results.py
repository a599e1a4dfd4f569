"""An MCP tool result as Belay's `ToolOutput`, and MCP's errors as `ToolError`s.

Text content is joined (one block per line); images, audio, resource links
and binary resources are summarised in one bracketed line each, since an
agent reading text cannot use their bytes; an embedded text resource is
shown as its text.  Structured content is kept as is in the output's data
(`data["structured"]`), for `${call.structured...}` references.  A result
with `isError` is a failed call carrying the server's own text.
"""

from __future__ import annotations

import base64
import binascii
import json

import mcp.types as mt
from mcp.shared.exceptions import MCPError

from core.errors import ErrorKind, ToolError
from core.tools.base import ToolOutput

MCP_TOOL_ERROR = "mcp-tool-error"
"""`ErrorInfo.code` of a call the server answered with an error result (isError)."""


def output_of(result: mt.CallToolResult, tool: str) -> ToolOutput:
    """What the agent sees of a successful result; raises ToolError for an isError one."""
    text = "\n".join(describe(block) for block in result.content)
    if result.is_error:
        raise ToolError(ErrorKind.SYSTEM, f"{tool} failed: {text or 'the server gave no reason'}",
                        "The MCP server reported this error; fix the arguments or try something else.",
                        code=MCP_TOOL_ERROR)
    data = {}
    if result.structured_content is not None:
        data["structured"] = result.structured_content
        if not text:
            text = json.dumps(result.structured_content, ensure_ascii=False, indent=1)
    return ToolOutput(text or "(the tool returned nothing)", data)


def describe(block: mt.ContentBlock) -> str:
    """One content block as text: itself when it is text, otherwise a one-line summary."""
    if isinstance(block, mt.TextContent):
        return block.text
    if isinstance(block, (mt.ImageContent, mt.AudioContent)):
        return f"[{block.type}: {block.mime_type}, {_size(block.data)}]"
    if isinstance(block, mt.ResourceLink):
        return f"[resource link: {block.uri}" + (f" ({block.name})" if block.name else "") + "]"
    if isinstance(block, mt.EmbeddedResource):
        contents = block.resource
        if isinstance(contents, mt.TextResourceContents):
            return contents.text
        mime = f"{contents.mime_type}, " if contents.mime_type else ""
        return f"[resource: {contents.uri}, {mime}{_size(contents.blob)}]"
    return f"[{getattr(block, 'type', type(block).__name__)} content]"


def _size(data: str) -> str:
    try:
        size = len(base64.b64decode(data, validate=True))
    except (binascii.Error, ValueError):
        return "undecodable data"
    return f"{size:,} bytes"


def error_of(e: MCPError, server: str, tool: str) -> ToolError:
    """A protocol-level error answer to tools/call, as a tool error."""
    said = f"MCP server {server!r} refused the call to {tool}: {e.message}"
    if e.code == mt.INVALID_PARAMS:
        return ToolError(ErrorKind.INVALID_ARGS, said, "Check the arguments against the tool's schema.")
    if e.code == mt.METHOD_NOT_FOUND:
        return ToolError(ErrorKind.UNKNOWN_TOOL, said, "The server does not offer this tool (any longer).")
    if e.code == mt.REQUEST_TIMEOUT:
        return ToolError(ErrorKind.TIMEOUT, f"MCP server {server!r} did not answer {tool} in time",
                         "Try again later, or with a smaller request.")
    if e.code == mt.CONNECTION_CLOSED:
        return ToolError(ErrorKind.NETWORK, f"the connection to MCP server {server!r} closed during {tool}",
                         "The server may have stopped; its state is shown in Belay's MCP panel.")
    return ToolError(ErrorKind.SYSTEM, said, "The MCP server reported an error; try again or use another tool.",
                     code=f"mcp-{e.code}")
