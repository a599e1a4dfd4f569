"""Turning what an agent sent into a tool's validated arguments, or a clear error.

Agents send JSON objects, or JSON text that may be malformed on purpose:
duplicate keys (which a naive decoder resolves silently to the last one),
truncated text, wrong types.  All of it becomes an `invalid-args` error that
says which field is wrong and what the tool expects.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import ValidationError

from core.errors import ErrorKind, ToolError
from core.tools.base import Tool, ToolArgs


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise ToolError(ErrorKind.INVALID_ARGS, f"the arguments name {key!r} twice",
                            "Send each argument once.")
        seen[key] = value
    return seen


def decode(raw: object) -> dict[str, Any]:
    """The argument object from a dict or JSON text."""
    if isinstance(raw, str):
        try:
            raw = json.loads(raw, object_pairs_hook=_no_duplicates)
        except json.JSONDecodeError as e:
            raise ToolError(ErrorKind.INVALID_ARGS, f"the arguments are not valid JSON: {e.msg} at"
                            f" line {e.lineno} column {e.colno}", "Send a JSON object.") from None
        except RecursionError:  # thousands of nested brackets: Python's decoder gives up on the stack
            raise ToolError(ErrorKind.INVALID_ARGS, "the arguments are nested too deeply to read",
                            "Send a JSON object of named arguments, nested a few levels at most.") from None
    if not isinstance(raw, dict):
        raise ToolError(ErrorKind.INVALID_ARGS, f"the arguments must be a JSON object, got {type(raw).__name__}",
                        "Send a JSON object of named arguments.")
    return raw


def validate(tool: Tool, raw: dict[str, Any]) -> ToolArgs:
    """The tool's Args model for `raw`, or an invalid-args error naming each problem."""
    tool.check_args(raw)
    try:
        return tool.Args.model_validate(raw)
    except ValidationError as e:
        problems = "; ".join(_describe(err) for err in e.errors()[:5])
        fields = ", ".join(_field_names(tool))
        raise ToolError(ErrorKind.INVALID_ARGS, f"invalid arguments for {tool.name}: {problems}",
                        f"{tool.name} takes: {fields}.") from None


def _describe(err: Any) -> str:
    where = ".".join(str(part) for part in err["loc"]) or "arguments"
    return f"{where}: {err['msg']}"


def _field_names(tool: Tool) -> list[str]:
    names = []
    for name, info in tool.Args.model_fields.items():
        shown = info.alias or name
        names.append(shown if info.is_required() else f"{shown} (optional)")
    return names
