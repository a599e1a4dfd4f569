"""An MCP tool as a Belay tool: annotations with MCP's defaults, the server's schema shown and enforced."""

from __future__ import annotations

from typing import Any

import mcp.types as mt
import pytest

from core.errors import BelayError, ErrorKind
from core.mcp.tool import McpTool, annotations_of
from core.run import arguments

SCHEMA = {"type": "object", "properties": {"owner": {"type": "string"}, "limit": {"type": "integer", "minimum": 1}},
          "required": ["owner"], "additionalProperties": False}


async def _never(tool: str, args: dict[str, Any]) -> mt.CallToolResult:
    raise AssertionError("not called")


def _tool(schema: dict[str, Any] = SCHEMA, hints: mt.ToolAnnotations | None = None) -> McpTool:
    spec = mt.Tool(name="list", description="List things.", input_schema=schema, annotations=hints)
    return McpTool("mcp__gh__list", "gh", spec, 45.0, _never)


@pytest.mark.parametrize(("hints", "expected"), [
    (None, (False, True, False, True)),
    (mt.ToolAnnotations(read_only_hint=True), (True, False, False, True)),
    (mt.ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False), (True, False, True, False)),
    (mt.ToolAnnotations(destructive_hint=False, idempotent_hint=True), (False, False, True, True)),
    (mt.ToolAnnotations(destructive_hint=True, open_world_hint=False), (False, True, False, False)),
])
def test_annotations_follow_mcps_defaults(hints: mt.ToolAnnotations | None,
                                          expected: tuple[bool, bool, bool, bool]) -> None:
    a = annotations_of(hints)
    assert (a.read_only, a.destructive, a.idempotent, a.open_world) == expected


def test_only_read_only_idempotent_tools_are_retried_and_none_cached() -> None:
    reader = _tool(hints=mt.ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False))
    assert reader.retry is not None and not reader.cacheable
    for hints in (None, mt.ToolAnnotations(read_only_hint=True), mt.ToolAnnotations(idempotent_hint=True)):
        assert _tool(hints=hints).retry is None


def test_the_schema_agents_see_is_the_servers() -> None:
    tool = _tool()
    assert tool.Args.model_json_schema() == SCHEMA
    assert (tool.name, tool.description, tool.timeout_s) == ("mcp__gh__list", "List things.", 45.0)
    args = arguments.validate(tool, {"owner": "octo", "limit": 3})
    assert args.model_dump() == {"owner": "octo", "limit": 3}  # passed on unchanged


def test_invalid_arguments_name_every_problem_and_what_the_tool_takes() -> None:
    with pytest.raises(BelayError) as caught:
        arguments.validate(_tool(), {"limit": 0, "extra": True})
    info = caught.value.info
    assert info.kind == ErrorKind.INVALID_ARGS
    assert info.message == ("invalid arguments for mcp__gh__list: arguments: 'owner' is a required property; "
                            "arguments: Additional properties are not allowed ('extra' was unexpected); "
                            "limit: 0 is less than the minimum of 1")
    assert info.suggestion == "mcp__gh__list takes: owner (string), limit (integer, optional)."


def test_a_broken_schema_fails_calls_with_a_system_error() -> None:
    with pytest.raises(BelayError) as caught:
        arguments.validate(_tool({"type": "object", "properties": {"x": {"type": 12}}}), {"x": 1})
    assert caught.value.kind == ErrorKind.SYSTEM and "not valid JSON Schema" in caught.value.info.message
