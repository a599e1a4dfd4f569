"""Turning what an agent sent into a tool's validated arguments, or a clear error.

Agents send JSON objects, or JSON text that may be malformed on purpose:
duplicate keys (which a naive decoder resolves silently to the last one),
truncated text, wrong types, text that is not Unicode at all (a lone
surrogate such as "\\ud800", which no UTF-8 file, journal or child process can
hold).  All of it becomes an `invalid-args` error that says which field is
wrong and what the tool expects.
"""

from __future__ import annotations

import json
import reprlib
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


def check_text(tool_name: object, raw: object) -> None:
    """Refuse a call whose tool name or arguments (keys included, at any depth) hold text UTF-8 cannot encode.

    Run before anything else looks at the call: such a string cannot be written to the journal, a file or a
    command line, and a tool that met one would fail halfway through instead of at the start.
    """
    if isinstance(tool_name, str) and not _encodable(tool_name):
        raise _not_unicode("the tool name")
    where = _first_unencodable(raw)
    if where is not None:
        raise _not_unicode(where)


Where = tuple[Any, str] | None
"""A place in the arguments: (the place holding it, its own key or index); None for the arguments themselves."""


def _first_unencodable(raw: object) -> str | None:
    """Where a string UTF-8 cannot encode sits in `raw` ("edits[2].old_string"), or None.

    Walks with its own stack rather than recursing (arguments sent as Python objects may nest deeper than the
    interpreter's stack), and keeps places as links to their parent so a deep walk stays linear."""
    stack: list[tuple[Where, object]] = [(None, raw)]
    while stack:
        where, value = stack.pop()
        if isinstance(value, str):
            if not _encodable(value):
                return _place(where)
        elif isinstance(value, dict):
            for key, item in value.items():
                if isinstance(key, str) and not _encodable(key):
                    return f"a key of {_place(where)}"
                stack.append(((where, f".{shown(key)[:60]}"), item))
        elif isinstance(value, (list, tuple)):
            stack.extend(((where, f"[{i}]"), item) for i, item in enumerate(value))
    return None


def _place(where: Where, shown_parts: int = 8) -> str:
    """'edits[2].old_string'; the last few steps of a deep place, after '...'."""
    parts: list[str] = []
    while where is not None:
        where, part = where
        parts.append(part)
    if not parts:
        return "the arguments"
    text = "".join(reversed(parts[:shown_parts])).lstrip(".")
    return text if len(parts) <= shown_parts else f"...{text}"


def _encodable(text: str) -> bool:
    if text.isascii():  # the common case, and cheap even for a megabyte
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def shown(value: object) -> str:
    """`value` as text that can always be written out: characters UTF-8 cannot encode appear as escapes."""
    text = value if isinstance(value, str) else str(value)
    return text if _encodable(text) else text.encode("utf-8", "backslashreplace").decode("utf-8")


def _not_unicode(where: str) -> ToolError:
    return ToolError(ErrorKind.INVALID_ARGS, f"text that is not valid Unicode in {where} (a lone surrogate such"
                     " as \\ud800, which cannot be encoded as UTF-8)",
                     "Send valid Unicode text; a character outside it cannot be written to a file or a command.")


def decode(raw: object) -> dict[str, Any]:
    """The argument object from a dict or JSON text (text checked again: JSON's \\ud800 escapes decode to lone
    surrogates)."""
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
    check_text(None, raw)
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


def shown_raw(raw: object) -> dict[str, Any]:
    """Refused arguments as the journal keeps them: top-level keys, plain values, anything else abridged, and
    characters UTF-8 cannot encode (a lone surrogate) written as escapes, so the refused call is still recorded."""
    if isinstance(raw, dict):
        return {shown(k)[:200]: _shown_value(v) for k, v in raw.items()}
    return {"_raw": shown(_abridged(raw, 2000))}


def _shown_value(value: object) -> object:
    if isinstance(value, str):
        return shown(value)
    if isinstance(value, (int, float, bool, type(None))):
        return value
    return shown(_abridged(value, 200))


def _abridged(value: object, limit: int) -> str:
    """The start of repr(value), without building the whole of a huge or very deep value's repr first."""
    if isinstance(value, str):
        return repr(value[:limit])[:limit]
    brief = reprlib.Repr()
    brief.maxlevel, brief.maxstring, brief.maxother = 4, limit, limit
    try:
        return brief.repr(value)[:limit]
    except RecursionError:
        return f"<{type(value).__name__} nested too deeply to show>"
