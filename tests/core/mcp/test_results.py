"""MCP tool results as the agent reads them: text joined, the rest summarised, errors as failed calls."""

from __future__ import annotations

import base64

import mcp.types as mt
import pytest
from mcp.shared.exceptions import MCPError

from core.errors import ErrorKind, ToolError
from core.mcp.results import MCP_TOOL_ERROR, error_of, output_of

PNG = base64.b64encode(b"\x89PNG" + b"\0" * 96).decode()


def test_text_is_joined_and_other_content_summarised() -> None:
    result = mt.CallToolResult(content=[
        mt.TextContent(text="first"),
        mt.ImageContent(data=PNG, mime_type="image/png"),
        mt.AudioContent(data=base64.b64encode(b"abc").decode(), mime_type="audio/wav"),
        mt.ResourceLink(uri="file:///r/notes.md", name="notes"),
        mt.EmbeddedResource(resource=mt.TextResourceContents(uri="file:///r/a.txt", text="embedded text")),
        mt.EmbeddedResource(resource=mt.BlobResourceContents(uri="file:///r/b.bin", blob=PNG,
                                                             mime_type="application/octet-stream")),
        mt.TextContent(text="last"),
    ])
    assert output_of(result, "mcp__s__t").text.splitlines() == [
        "first", "[image: image/png, 100 bytes]", "[audio: audio/wav, 3 bytes]",
        "[resource link: file:///r/notes.md (notes)]", "embedded text",
        "[resource: file:///r/b.bin, application/octet-stream, 100 bytes]", "last"]


def test_structured_content_is_kept_and_shown_when_there_is_no_text() -> None:
    both = output_of(mt.CallToolResult(content=[mt.TextContent(text="2 issues")],
                                       structured_content={"count": 2}), "t")
    assert both.text == "2 issues" and both.data == {"structured": {"count": 2}}
    only = output_of(mt.CallToolResult(content=[], structured_content={"count": 2}), "t")
    assert only.text == '{\n "count": 2\n}'
    assert output_of(mt.CallToolResult(content=[]), "t").text == "(the tool returned nothing)"


def test_an_error_result_is_a_failed_call_with_the_servers_text() -> None:
    with pytest.raises(ToolError) as caught:
        output_of(mt.CallToolResult(content=[mt.TextContent(text="repository not found")], is_error=True),
                  "mcp__gh__get_repo")
    assert caught.value.kind == ErrorKind.SYSTEM and caught.value.info.code == MCP_TOOL_ERROR
    assert caught.value.info.message == "mcp__gh__get_repo failed: repository not found"


@pytest.mark.parametrize(("code", "kind"), [
    (mt.INVALID_PARAMS, ErrorKind.INVALID_ARGS), (mt.METHOD_NOT_FOUND, ErrorKind.UNKNOWN_TOOL),
    (mt.REQUEST_TIMEOUT, ErrorKind.TIMEOUT), (mt.CONNECTION_CLOSED, ErrorKind.NETWORK),
    (mt.INTERNAL_ERROR, ErrorKind.SYSTEM),
])
def test_protocol_errors_map_to_error_kinds(code: int, kind: ErrorKind) -> None:
    error = error_of(MCPError(code, "boom"), "gh", "get_repo")
    assert error.kind == kind and "'gh'" in error.info.message and error.info.suggestion
