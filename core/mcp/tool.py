"""One MCP server tool as a Belay `RunTool`: its JSON schema, its annotations, and a call through its server.

Built-in tools declare their name, schema and annotations on the class; an
MCP tool is only known once its server lists it, so each `McpTool` carries
its own (and its own `Args` class, whose `model_json_schema()` is the
server's input schema: what agents see).  The arguments are checked against
that schema in `check_args`; `Args` itself accepts any object, so what the
agent sent reaches the server unchanged.

MCP's annotation defaults differ from Belay's: an unannotated MCP tool is
not read-only, is destructive, is not idempotent and is open-world.
Results depend on the server, not on workspace files, so no MCP tool is
cacheable; read-only idempotent ones are retried on network errors and
timeouts.
"""

from __future__ import annotations

import copy
from collections.abc import Awaitable, Callable
from typing import Any, ClassVar

import jsonschema
import mcp.types as mt
import referencing.exceptions
from pydantic import ConfigDict

from core.errors import ErrorKind, ToolError
from core.mcp.results import output_of
from core.paths import Workspace
from core.tools.base import Annotations, RetryPolicy, RunTool, ToolArgs, ToolContext, ToolOutput

ServerCall = Callable[[str, dict[str, Any]], Awaitable[mt.CallToolResult]]
"""Calls one tool of one server, by its original name, with JSON arguments."""
MAX_PROBLEMS = 5


class McpArgs(ToolArgs):
    """Any JSON object: an MCP tool's arguments are checked against its server's schema, not a model."""

    model_config = ConfigDict(extra="allow", strict=False, frozen=True)
    input_schema: ClassVar[dict[str, Any]] = {"type": "object"}

    @classmethod
    def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:
        """The server's input schema, as agents are shown it."""
        return copy.deepcopy(cls.input_schema)


def annotations_of(hints: mt.ToolAnnotations | None) -> Annotations:
    """MCP's hints with MCP's defaults: readOnly false, destructive true, idempotent false, openWorld true."""
    hints = hints or mt.ToolAnnotations()
    read_only = hints.read_only_hint is True
    return Annotations(read_only=read_only,
                       destructive=not read_only and hints.destructive_hint is not False,
                       idempotent=hints.idempotent_hint is True,
                       open_world=hints.open_world_hint is not False)


class McpTool(RunTool[McpArgs]):
    """A tool of a configured MCP server, named `mcp__<server>__<tool>`."""

    cacheable = False  # the result depends on the server, which no file watcher sees

    def __init__(self, name: str, server: str, spec: mt.Tool, timeout_s: float, call: ServerCall) -> None:
        # The base class declares these on the class; each MCP tool has its own.
        self.name = name  # type: ignore[misc]  # a ClassVar, set per tool
        title = spec.annotations.title if spec.annotations else None
        self.description = spec.description or title or spec.name  # type: ignore[misc]  # a ClassVar, set per tool
        self.annotations = annotations_of(spec.annotations)  # type: ignore[misc]  # a ClassVar, set per tool
        self.timeout_s = timeout_s  # type: ignore[misc]  # a ClassVar, set per tool
        # A server's tool may change files (mcp-server-git's git_checkout rewrites them): unless it says it
        # only reads, what it changes in the workspace is captured and attributed to the call, as for Bash.
        self.captures_workspace = not self.annotations.read_only  # type: ignore[misc]  # a ClassVar, set per tool
        idempotent_reader = self.annotations.read_only and self.annotations.idempotent
        self.retry = RetryPolicy() if idempotent_reader else None  # type: ignore[misc]  # a ClassVar, set per tool
        self.input_schema = dict(spec.input_schema)
        self.Args = type(f"{name}_args", (McpArgs,), {"input_schema": self.input_schema})
        self.server, self.remote, self.spec = server, spec.name, spec
        self._call = call
        self._validator, self._schema_problem = _validator(spec.input_schema)

    def check_args(self, raw: dict[str, Any]) -> None:
        """The arguments against the server's JSON schema; every problem named (up to five)."""
        if self._validator is None:
            raise ToolError(ErrorKind.SYSTEM, f"MCP server {self.server!r} gave {self.name} an input schema that is "
                            f"not valid JSON Schema ({self._schema_problem}); its arguments cannot be checked",
                            "The server needs fixing; use another tool meanwhile.")
        try:
            errors = sorted(self._validator.iter_errors(raw), key=lambda e: [str(p) for p in e.absolute_path])
        except referencing.exceptions.Unresolvable as e:
            raise ToolError(ErrorKind.SYSTEM, f"{self.name}'s input schema refers to {e} which cannot be resolved",
                            "The server needs fixing; use another tool meanwhile.") from None
        if errors:
            problems = "; ".join(_describe(e) for e in errors[:MAX_PROBLEMS])
            more = f" (and {len(errors) - MAX_PROBLEMS} more)" if len(errors) > MAX_PROBLEMS else ""
            raise ToolError(ErrorKind.INVALID_ARGS, f"invalid arguments for {self.name}: {problems}{more}",
                            f"{self.name} takes: {takes(self.input_schema)}.")

    def summary(self, args: McpArgs, workspace: Workspace) -> str:
        shown = ", ".join(f"{key}={value!r}" for key, value in args.model_dump().items())
        return shown if len(shown) <= 80 else shown[:79] + "…"

    async def run(self, args: McpArgs, ctx: ToolContext) -> ToolOutput:
        result = await self._call(self.remote, args.model_dump())
        output = output_of(result, self.name)
        return ToolOutput(output.text, {**output.data, "server": self.server, "tool": self.remote})

    def __repr__(self) -> str:
        return f"<McpTool {self.name} ({self.server}: {self.remote!r})>"


def takes(schema: dict[str, Any]) -> str:
    """The properties of an object schema, e.g. "a (integer), b (string, optional)"."""
    properties = schema.get("properties")
    if not isinstance(properties, dict) or not properties:
        return "no arguments" if schema.get("additionalProperties") is False else "a JSON object"
    required = schema.get("required")
    required = required if isinstance(required, list) else []
    parts = []
    for key, prop in properties.items():
        kind = prop.get("type") if isinstance(prop, dict) else None
        notes = [kind if isinstance(kind, str) else "any"] + ([] if key in required else ["optional"])
        parts.append(f"{key} ({', '.join(notes)})")
    return ", ".join(parts)


def _validator(schema: dict[str, Any]) -> tuple[jsonschema.protocols.Validator | None, str]:
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    try:
        cls.check_schema(schema)
    except jsonschema.SchemaError as e:
        return None, e.message
    return cls(schema), ""


def _describe(error: jsonschema.ValidationError) -> str:
    where = ".".join(str(part) for part in error.absolute_path) or "arguments"
    return f"{where}: {error.message}"
