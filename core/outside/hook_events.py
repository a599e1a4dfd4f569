"""The agent CLIs' hook events, one model per event an adapter acts on, told apart by the event's name.

The socket's door (core.outside.requests.HookEvent) takes any event, typing only the fields Belay reads;
`typed` turns it into the model of its event, so a hook adapter (core.outside.adapter) dispatches on a
type and each handler sees the fields its event carries.  Claude Code and Codex CLI name their events
alike (PreToolUse, PostToolUse, ...); Gemini CLI has its own (BeforeTool, AfterTool, AfterAgent).  An
event none of them acts on has no model: it is let be.  Fields Belay does not type (`cwd`, Codex's
`turn_id`, Gemini's `timestamp`) are kept, as at the door.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, field_validator

from core.outside.requests import HookEvent


class AgentEvent(BaseModel):
    """What every hook event carries: which event it is and the agent's session."""

    model_config = ConfigDict(frozen=True, extra="allow")

    hook_event_name: str
    """The event, as the CLI names it (each model narrows it to its own name)."""
    session_id: str = "unknown"
    """The agent's session; one Belay agent per session."""
    transcript_path: str | None = None
    """Where the CLI writes the session's conversation (core.outside.transcripts follows it)."""

    @field_validator("session_id", mode="before")
    @classmethod
    def _unknown_session(cls, value: object) -> object:
        return value or "unknown"


class SubagentEvent(AgentEvent):
    """An event that may come from a sub-agent (Claude Code and Codex say which)."""

    agent_id: str | None = None
    """Set on a sub-agent's events: the CLI's id for the sub-agent."""
    agent_type: str | None = None
    """The sub-agent's type, e.g. "general-purpose"."""


class ToolEvent(SubagentEvent):
    """An event about one tool call."""

    tool_name: str = ""
    """The tool the agent calls, by its own name for it ("Edit", "Bash", "write_file", "mcp__x__y")."""
    tool_input: dict[str, Any] = Field(default_factory=dict)
    """The call's arguments as the model wrote them."""
    tool_use_id: str = ""
    """The agent's own id for the call (Claude Code, Codex): its events before and after share it."""

    @field_validator("tool_name", "tool_use_id", mode="before")
    @classmethod
    def _absent_is_empty(cls, value: object) -> object:
        return "" if value is None else value


class ToolAsked(ToolEvent):
    """A call is about to run and waits for Belay's answer."""


class ToolReported(ToolEvent):
    """A call ran and says what it returned."""

    tool_response: Any = None
    """What the tool returned (Claude Code's Edit and Write: with `originalFile`; Gemini CLI: `llmContent`)."""


class PreToolUseEvent(ToolAsked):
    """Claude Code's and Codex's: a call is about to run."""

    hook_event_name: Literal["PreToolUse"]


class BeforeToolEvent(ToolAsked):
    """Gemini CLI's: a call is about to run."""

    hook_event_name: Literal["BeforeTool"]


class PermissionRequestEvent(ToolEvent):
    """Claude Code's and Codex's: the CLI would ask its own user about a call."""

    hook_event_name: Literal["PermissionRequest"]


class PostToolUseEvent(ToolReported):
    """Claude Code's and Codex's: a call ran."""

    hook_event_name: Literal["PostToolUse"]


class AfterToolEvent(ToolReported):
    """Gemini CLI's: a call ran (its events name no call: paired by tool and arguments)."""

    hook_event_name: Literal["AfterTool"]


class PostToolUseFailureEvent(ToolEvent):
    """Claude Code's: a call failed."""

    hook_event_name: Literal["PostToolUseFailure"]
    tool_response: Any = None
    error: Any = None
    """What went wrong."""


class SubagentStartEvent(SubagentEvent):
    """Claude Code's and Codex's: a sub-agent started."""

    hook_event_name: Literal["SubagentStart"]


class SubagentStopEvent(SubagentEvent):
    """Claude Code's and Codex's: a sub-agent finished (for Codex, its turn is over too)."""

    hook_event_name: Literal["SubagentStop"]


class SessionStartEvent(AgentEvent):
    """Every CLI's: a session started."""

    hook_event_name: Literal["SessionStart"]


class SessionEndEvent(AgentEvent):
    """Every CLI's: a session ended."""

    hook_event_name: Literal["SessionEnd"]
    reason: str | None = None
    """Why the session ended."""


class StopEvent(AgentEvent):
    """Codex's: the agent's turn is over."""

    hook_event_name: Literal["Stop"]


class AfterAgentEvent(AgentEvent):
    """Gemini CLI's: the agent's turn is over."""

    hook_event_name: Literal["AfterAgent"]


TypedEvent = Annotated[
    PreToolUseEvent | BeforeToolEvent | PermissionRequestEvent | PostToolUseEvent | AfterToolEvent
    | PostToolUseFailureEvent | SubagentStartEvent | SubagentStopEvent | SessionStartEvent | SessionEndEvent
    | StopEvent | AfterAgentEvent,
    Field(discriminator="hook_event_name")]
"""One event an adapter acts on, its model chosen by its name."""
_TYPED: TypeAdapter[TypedEvent] = TypeAdapter(TypedEvent)
NAMES = frozenset(get_args(model.model_fields["hook_event_name"].annotation)[0]
                  for model in get_args(get_args(TypedEvent)[0]))
"""The names of the events that have a model."""


def typed(event: HookEvent) -> TypedEvent | None:
    """The event as the model of its name; None for an event no adapter acts on (let be)."""
    if event.hook_event_name not in NAMES:
        return None
    return _TYPED.validate_python(event.model_dump(exclude_unset=True))
