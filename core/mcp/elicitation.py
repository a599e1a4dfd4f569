"""An MCP server asking the person for input (elicitation), raised like an approval and answered in the window.

A configured server may send `elicitation/create` while it works (most often in the middle of a tool
call): a message and a flat JSON schema of what it needs.  `Elicitations` is the table of those
requests: each is published as an `ElicitationRequested` and waits until a front end answers through
`answer` (accept with the form's content, decline, cancel) or the server stops waiting; its end is
an `ElicitationResolved`.  A front end that can show the form says so with `register` (the window
does; `belay run`'s terminal prompts and auto-approvers answer approvals, not forms): with none, a
request is declined at once, since nobody is there to fill in the form.  A schema Belay cannot show
as a simple form (nested objects, unknown types) is declined too, saying so in the log.

URL mode (a page the server needs the person to visit: a sign-in elsewhere, a payment) is asked the
same way: the window shows the message and the whole address and opens it only if the person says
so (accept); an address that is not http(s) is declined.

`form_fields` reads the schema the way the window draws it (string, number, integer, boolean, a
choice among an enum, several choices among an enum's items), `defaults` is what the form starts
with (the schema's defaults, SEP-1034), and `checked` is what "accept" is allowed to send back.
"""

from __future__ import annotations

import asyncio
import logging
import math
import re
import secrets
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import urlsplit

from core.events import ElicitationRequested, ElicitationResolved, Event

if TYPE_CHECKING:  # the MCP package is imported where it is used: it takes a second (issue 15)
    import mcp.types as mt

log = logging.getLogger(__name__)

FieldKind = Literal["string", "number", "integer", "boolean", "choice", "choices"]
Value = str | int | float | bool | list[str] | None
EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")


class UnsupportedSchema(ValueError):
    """The requested schema is not a flat form of the types elicitation allows."""


@dataclass(frozen=True)
class FormField:
    """One property of the requested schema, as the form shows it."""

    name: str
    kind: FieldKind
    title: str
    description: str = ""
    required: bool = False
    default: Value = None
    options: tuple[tuple[str, str], ...] = ()
    """For choice and choices: (value, label) pairs, in the schema's order."""
    minimum: float | None = None
    maximum: float | None = None
    min_length: int | None = None
    max_length: int | None = None
    format: str | None = None
    """For strings: email, uri, date or date-time (a hint; only email and the lengths are checked)."""


def form_fields(schema: Mapping[str, Any]) -> list[FormField]:
    """The form for `schema`; raises UnsupportedSchema when it is not one elicitation allows."""
    if schema.get("type", "object") != "object":
        raise UnsupportedSchema(f"the requested schema is of type {schema.get('type')!r}, not an object")
    properties = schema.get("properties") or {}
    if not isinstance(properties, Mapping):
        raise UnsupportedSchema("the requested schema's properties are not an object")
    required = set(schema.get("required") or ())
    return [_field(name, spec, name in required) for name, spec in properties.items()]


def _field(name: str, spec: Any, required: bool) -> FormField:
    if not isinstance(spec, Mapping):
        raise UnsupportedSchema(f"the property {name!r} is not described by a schema")
    title, description = str(spec.get("title") or name), str(spec.get("description") or "")
    kind, options = _kind(name, spec)
    default = spec.get("default")
    return FormField(name=name, kind=kind, title=title, description=description, required=required,
                     default=default if _fits(kind, options, default) else None, options=options,
                     minimum=_number(spec.get("minimum")), maximum=_number(spec.get("maximum")),
                     min_length=_count(spec.get("minLength", spec.get("minItems"))),
                     max_length=_count(spec.get("maxLength", spec.get("maxItems"))),
                     format=str(spec["format"]) if spec.get("format") else None)


def _kind(name: str, spec: Mapping[str, Any]) -> tuple[FieldKind, tuple[tuple[str, str], ...]]:
    kind = spec.get("type")
    if kind == "string" and (spec.get("enum") is not None or spec.get("oneOf") is not None):
        return "choice", _options(name, spec)
    if kind == "array":
        items = spec.get("items")
        if not isinstance(items, Mapping):
            raise UnsupportedSchema(f"the property {name!r} is a list without items Belay can offer")
        return "choices", _options(name, items)
    if kind in ("string", "number", "integer", "boolean"):
        return kind, ()
    raise UnsupportedSchema(f"the property {name!r} is of type {kind!r}, which a form cannot ask for")


def _options(name: str, spec: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    """enum (with the legacy enumNames as labels), or oneOf/anyOf of {const, title} (SEP-1330)."""
    if isinstance(spec.get("enum"), list):
        values = [str(v) for v in spec["enum"]]
        names = spec.get("enumNames")
        labels = [str(n) for n in names] if isinstance(names, list) and len(names) == len(values) else values
        return tuple(zip(values, labels, strict=True))
    for key in ("oneOf", "anyOf"):
        if isinstance(spec.get(key), list):
            pairs = [(str(o["const"]), str(o.get("title") or o["const"])) for o in spec[key]
                     if isinstance(o, Mapping) and "const" in o]
            if pairs:
                return tuple(pairs)
    raise UnsupportedSchema(f"the property {name!r} offers no choices")


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _fits(kind: FieldKind, options: tuple[tuple[str, str], ...], value: Any) -> bool:
    """Whether `value` has the field's type (a default that does not is ignored)."""
    allowed = {v for v, _ in options}
    match kind:
        case "string":
            return isinstance(value, str)
        case "number":
            return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
        case "integer":
            return isinstance(value, int) and not isinstance(value, bool)
        case "boolean":
            return isinstance(value, bool)
        case "choice":
            return isinstance(value, str) and value in allowed
        case "choices":
            return isinstance(value, list) and all(isinstance(v, str) and v in allowed for v in value)


def defaults(schema: Mapping[str, Any]) -> dict[str, Value]:
    """What the form starts with: each property's default, when it has one of the right type."""
    return {f.name: f.default for f in form_fields(schema) if f.default is not None}


def checked(schema: Mapping[str, Any], content: Mapping[str, Any]) -> dict[str, Value]:
    """`content` as "accept" sends it: only the schema's properties, each of its type and within its limits.

    Raises ValueError naming every problem (a missing required field, a wrong type, out of range)."""
    fields = {f.name: f for f in form_fields(schema)}
    problems = [f"{name!r} is not asked for" for name in content if name not in fields]
    answer: dict[str, Value] = {}
    for name, field in fields.items():
        value = content.get(name)
        if value is None or value == "" or value == []:
            if field.required:
                problems.append(f"{field.title} is required")
            continue
        if not _fits(field.kind, field.options, value):
            problems.append(f"{field.title} must be {_described(field)}")
            continue
        problems += _limits(field, value)
        answer[name] = value
    if problems:
        raise ValueError("; ".join(problems))
    return answer


def _described(field: FormField) -> str:
    if field.kind in ("choice", "choices"):
        return ("one of " if field.kind == "choice" else "some of ") + ", ".join(v for v, _ in field.options)
    return {"string": "text", "number": "a number", "integer": "a whole number", "boolean": "yes or no"}[field.kind]


def _limits(field: FormField, value: Value) -> list[str]:
    problems = []
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if field.minimum is not None and value < field.minimum:
            problems.append(f"{field.title} must be at least {field.minimum:g}")
        if field.maximum is not None and value > field.maximum:
            problems.append(f"{field.title} must be at most {field.maximum:g}")
    if isinstance(value, (str, list)):
        what = "characters" if isinstance(value, str) else "choices"
        if field.min_length is not None and len(value) < field.min_length:
            problems.append(f"{field.title} needs at least {field.min_length} {what}")
        if field.max_length is not None and len(value) > field.max_length:
            problems.append(f"{field.title} takes at most {field.max_length} {what}")
    if isinstance(value, str) and field.format == "email" and not EMAIL.match(value):
        problems.append(f"{field.title} must be an email address")
    return problems


def _new_id() -> str:
    return f"eli_{time.time_ns() // 1_000_000:x}{secrets.token_hex(3)}"


Action = Literal["accept", "decline", "cancel"]


class Elicitations:
    """The servers' requests for input that wait for the person."""

    def __init__(self, publish: Callable[[Event], object], can_ask: Callable[[], bool] | None = None) -> None:
        """`publish` puts an event on the console's bus; `can_ask` says whether someone can answer now (None:
        whether a front end is registered)."""
        self._publish = publish
        self._answerers: dict[int, str] = {}
        self._can_ask = can_ask if can_ask is not None else lambda: bool(self._answerers)
        self._pending: dict[str, tuple[ElicitationRequested, asyncio.Future[mt.ElicitResult]]] = {}

    def register(self, name: str) -> Callable[[], None]:
        """Say that `name` (the window) shows the forms and answers them; returns the way to unsay it."""
        token = max(self._answerers, default=0) + 1
        self._answerers[token] = name

        def unregister() -> None:
            self._answerers.pop(token, None)

        return unregister

    async def ask(self, server: str, params: mt.ElicitRequestParams) -> mt.ElicitResult:
        """Raise the request to the person and wait for the answer (cancelled when the server gives up)."""
        import mcp.types as mt
        if isinstance(params, mt.ElicitRequestURLParams):
            request = ElicitationRequested(elicitation_id=_new_id(), server=server, message=params.message,
                                           mode="url", url=params.url)
            if urlsplit(params.url).scheme not in ("http", "https") or not urlsplit(params.url).netloc:
                return self._declined(request, "belay", "the page to open is not an http(s) address")
        else:
            request = ElicitationRequested(elicitation_id=_new_id(), server=server, message=params.message,
                                           requested_schema=dict(params.requested_schema))
            try:
                form_fields(request.requested_schema)
            except UnsupportedSchema as e:
                return self._declined(request, "belay", str(e))
        if not self._can_ask():
            return self._declined(request, "headless", "nobody can answer (no window)")
        future: asyncio.Future[mt.ElicitResult] = asyncio.get_running_loop().create_future()
        self._pending[request.elicitation_id] = (request, future)
        self._publish(request)
        try:
            return await future
        finally:
            if self._pending.pop(request.elicitation_id, None) is not None:  # `answer` takes it out first
                # The server stopped waiting (it cancelled, or the connection ended): the form goes away.
                self._publish(ElicitationResolved(elicitation_id=request.elicitation_id, action="cancel",
                                                  by="server"))

    def _declined(self, request: ElicitationRequested, by: Literal["headless", "belay"], why: str) -> mt.ElicitResult:
        import mcp.types as mt
        log.info("MCP server %s asked for input (%s); declined: %s", request.server, request.message, why)
        self._publish(request)
        self._publish(ElicitationResolved(elicitation_id=request.elicitation_id, action="decline", by=by))
        return mt.ElicitResult(action="decline")

    def answer(self, elicitation_id: str, action: Action, content: Mapping[str, Any] | None = None) -> bool:
        """The person's answer; False when the request no longer waits.  Accepting checks `content` against the
        schema first (ValueError saying what is wrong; the request still waits)."""
        entry = self._pending.get(elicitation_id)
        if entry is None or entry[1].done():
            return False
        import mcp.types as mt
        request, future = entry
        result = mt.ElicitResult(action=action)
        if action == "accept" and request.mode == "form":
            result = mt.ElicitResult(action="accept", content=checked(request.requested_schema, content or {}))
        self._pending.pop(elicitation_id)
        future.set_result(result)
        self._publish(ElicitationResolved(elicitation_id=elicitation_id, action=action))
        return True

    def pending(self) -> list[ElicitationRequested]:
        return [request for request, future in self._pending.values() if not future.done()]

    def __repr__(self) -> str:
        return f"<Elicitations pending={list(self._pending)}>"
