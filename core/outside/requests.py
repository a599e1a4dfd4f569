"""What other processes may ask of the console's socket, as models the endpoint validates before any handler runs.

Six kinds: `hook` (one Claude Code hook event, from the hook command or a
launched session's callbacks), `tools` and `call` and `bye` (from
`belay mcp-serve` for its MCP clients), `undo` (from `belay undo|redo` in a
terminal while a window has the workspace), and `ping`.  A request that does
not fit its model is refused at the door with what was wrong; a handler
only ever sees typed fields.

A hook event keeps the fields Belay does not read (Claude Code adds new
ones between releases; refusing them would block every call of a newer
CLI); the fields Belay reads are typed, and a wrong type is refused.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator


class HookEvent(BaseModel):
    """One Claude Code hook event (what the hook command reads on stdin), as far as Belay reads it."""

    model_config = ConfigDict(frozen=True, extra="allow")

    hook_event_name: str = ""
    """PreToolUse, PostToolUse, PostToolUseFailure, PermissionRequest, SubagentStart, SubagentStop,
    SessionStart, SessionEnd; others are let be."""
    session_id: str = "unknown"
    """Claude Code's session; one Belay agent per session."""
    tool_name: str = ""
    """The tool the agent calls (its own name for it: "Edit", "Bash", "mcp__x__y")."""
    tool_input: dict[str, Any] = Field(default_factory=dict)
    """The call's arguments as the model wrote them."""
    tool_use_id: str = ""
    """The agent's own id for the call: PreToolUse and PostToolUse of one call share it."""
    tool_response: Any = None
    """PostToolUse: what the tool returned (for Edit and Write, with `originalFile`)."""
    error: Any = None
    """PostToolUseFailure: what went wrong."""
    agent_id: str | None = None
    """Set on a sub-agent's events: Claude Code's id for the sub-agent."""
    agent_type: str | None = None
    """The sub-agent's type, e.g. "general-purpose"."""
    reason: str | None = None
    """SessionEnd: why the session ended."""

    @field_validator("session_id", mode="before")
    @classmethod
    def _unknown_session(cls, value: object) -> object:
        return value or "unknown"

    @field_validator("hook_event_name", "tool_name", "tool_use_id", mode="before")
    @classmethod
    def _absent_is_empty(cls, value: object) -> object:
        return "" if value is None else value


class _Request(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")  # the token and framing fields were read already


class HookRequest(_Request):
    """A hook event to judge or record."""

    kind: Literal["hook"]
    event: HookEvent
    agent: Literal["claude", "codex", "gemini"] = "claude"
    """Which agent CLI's hook command sent it (its `--agent`): each speaks its own hook protocol."""
    peer_pid: int | None = None
    """The hook command's process, as the kernel told the endpoint (its parent is the agent); with `direct`, the
    agent's own process."""
    direct: bool = False
    """Sent by the agent itself (an http hook, core.outside.http_door), not by a hook command it ran."""
    launched: str = ""
    """The nonce of a session this console launched, when the hook command runs inside one (else empty)."""
    where: str = ""
    """The project directory the agent works in, sent when the hook falls back to the console for every
    workspace (core.hub) because that project has no console of its own."""


class ToolsRequest(_Request):
    """Which tools `belay mcp-serve` may offer its clients."""

    kind: Literal["tools"]


class CallRequest(_Request):
    """One MCP client's call, to run through the console like any agent's."""

    kind: Literal["call"]
    tool: str
    """One of the served tools (core.outside.agents.SERVED_TOOLS)."""
    args: dict[str, Any] = Field(default_factory=dict)
    client: str = "mcp client"
    """The client's name, as its MCP handshake gave it: the agent's name in the window."""
    client_session: str = "default"
    """Which of the client's sessions: one agent each."""


class ByeRequest(_Request):
    """An MCP client's session ended: its agent is finished."""

    kind: Literal["bye"]
    client_session: str = "default"


class UndoRequest(_Request):
    """Undo (or redo) a journaled call through the console that owns the workspace (`belay undo` beside a window)."""

    kind: Literal["undo"]
    call_id: str
    files: list[str] = Field(default_factory=list)
    """Only these files' changes (relative to the workspace); empty: all of them."""
    force: bool = False
    redo: bool = False


class SuperviseRequest(_Request):
    """`belay mcp-serve` asks the console for every workspace (core.hub) for the console of a project that has
    none of its own: answered with that console's socket once the person agreed to supervise it."""

    kind: Literal["supervise"]
    where: str
    """The project directory."""
    client: str = ""
    """Who wants to work there, in words for the question ("Zed (MCP)")."""


class PingRequest(_Request):
    """Is a console there, and which workspace does it serve?"""

    kind: Literal["ping"]
