"""What an attached front end and a headless console (`belay serve`) say to each other: JSON lines, versioned.

The front end opens the console's socket (on the remote host, reached through an ssh-forwarded Unix socket)
and sends one line, an `AttachRequest` with the install's token, as every request to that socket does
(core.outside.endpoint).  The console answers with a `Welcome`: what its journal holds (agents, batches,
calls, changes found outside any call) and the approvals waiting, as of `last_seq`, its calls in `CallsLine`s
of WELCOME_CHUNK each; then every event after
that, one `EventLine` each, as its bus publishes them.  Meanwhile the front end may send `Command`s
(approve, deny, always allow, undo, redo, and what the window asks of its own console: a call's record, its
diffs, rules, the mode...), each answered by a `Reply` with the same `id`.  The welcome's `state` (the mode,
rules, MCP servers, sandbox) is kept current by the events that announce its changes (PolicyChanged,
McpServerChanged, ElicitationRequested/Resolved).

The journal is the truth: a front end whose connection drops attaches again and starts over from a new
`Welcome`, losing nothing (an approval still waiting is in it).  A front end that falls behind the event
stream is sent the bus's `Lagged` event and should do the same.  A console speaking another version
answers `{"ok": false, "error": ...}` and closes, saying which version it speaks.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from core.events import ApprovalRequested, ElicitationRequested, Event
from core.models.conversation import Message, TokenUse
from core.models.mcp import ServerStatus
from core.models.policy import AllowScope, RuleAction, RuleEntry
from core.models.records import AgentRecord, BatchRecord, CallRecord, DecidedVia, ExternalRecord
from core.process.sandbox import SandboxInfo
from core.tools.bash import BashSettings
from core.undo.report import Resolution

PROTOCOL_VERSION = 2
"""2: the welcome's `state`, and the window's commands beside approve, deny, always allow, undo and redo."""


class AttachRequest(BaseModel):
    """The first line a front end sends (checked by the endpoint: the token, who connected)."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["attach"]
    token: str
    version: int
    client: str = ""
    """What attaches ("window", "terminal"), for the console's log."""
    peer_pid: int | None = None
    """Set by the endpoint: the connected process (over ssh, the ssh server's)."""


class ConsoleState(BaseModel):
    """What a window shows of its console beside the timeline, as of the welcome."""

    mode: str = "default"
    rules: list[RuleEntry] = Field(default_factory=list)
    problems: list[str] = Field(default_factory=list)
    """Settings that could not be used."""
    held_back: list[str] = Field(default_factory=list)
    """What the workspace's settings would loosen, waiting for the person to trust it."""
    mcp_servers: list[ServerStatus] = Field(default_factory=list)
    sandbox: SandboxInfo | None = None
    bash: BashSettings = Field(default_factory=BashSettings)
    previews: bool = False
    previews_detail: str = "not checked yet"
    recovery_notes: list[str] = Field(default_factory=list)
    elicitations: list[ElicitationRequested] = Field(default_factory=list)
    """MCP servers' requests for the person's input, waiting now."""


class Welcome(BaseModel):
    type: Literal["welcome"] = "welcome"
    version: int = PROTOCOL_VERSION
    workspace: str
    session_id: str
    last_seq: int
    """Every event up to this one is reflected in what follows; the events after it come as `EventLine`s."""
    agents: list[AgentRecord]
    batches: list[BatchRecord]
    calls: list[CallRecord]
    """Their arguments and output cut as the timeline keeps them (core.timeline.excerpts).  Sent empty, with
    `calls_following` set: the calls follow in `CallsLine`s (a long journal's calls are megabytes of JSON, read
    in one call that holds Python's lock, which froze a window's loop for as long)."""
    calls_following: int = 0
    """How many calls the `CallsLine`s after the welcome bring, before any event."""
    externals: list[ExternalRecord]
    messages: list[Message] = Field(default_factory=list)
    """What the agents said, read from their transcripts (capped texts), oldest first."""
    tokens: list[TokenUse] = Field(default_factory=list)
    """Their model responses' token use, oldest first."""
    pending: list[ApprovalRequested]
    """The approvals waiting for a person now, whole (diffs and proposed contents)."""
    state: ConsoleState = Field(default_factory=ConsoleState)


class CallsLine(BaseModel):
    """Some of the welcome's calls, in the journal's order (WELCOME_CHUNK at most a line)."""

    type: Literal["calls"] = "calls"
    calls: list[CallRecord]


WELCOME_CHUNK = 500
"""Calls a `CallsLine` carries: some 25 ms to read, so a front end's loop keeps turning between lines."""


class EventLine(BaseModel):
    type: Literal["event"] = "event"
    event: Event


Op = Literal["approve", "deny", "always_allow", "undo", "redo", "cancel", "undo_preview", "rewind_plan", "rewind",
             "call_record", "full_output", "diffs_for", "set_mode", "add_rule", "remove_rule", "dry_run",
             "trust_workspace", "restart_mcp_server", "kill_shell", "answer_elicitation", "verify"]
"""approve, deny, always_allow: {"answered": bool}; undo, redo: the UndoReport; the others: {"value": ...}, what
the console's method of that name returns (answer_elicitation: Elicitations.answer; verify: the journal's
Verdict)."""


class Command(BaseModel):
    """Something the person does, carried out by the console as if given in its own window."""

    model_config = ConfigDict(extra="forbid")

    id: int
    op: Op
    call_id: str = ""
    reason: str = ""
    edited: dict[str, str] | None = None
    """approve: the person's content per file."""
    hunks: dict[str, list[int]] | None = None
    """approve: the hunks accepted per file (approved in part)."""
    preview: bool = False
    """approve: run the command in a private layer first."""
    scope: AllowScope = "session"
    """always_allow: how far the rule reaches."""
    rule: str | None = None
    paths: list[str] | None = None
    """undo, redo: only these files of the call."""
    force: bool = False
    resolutions: dict[str, Resolution] | None = None
    """undo: how the person settled each conflicting file."""
    via: DecidedVia = "window"
    action: RuleAction | Literal["accept", "decline", "cancel"] = "allow"
    """add_rule, remove_rule, dry_run: the rule's action; answer_elicitation: the person's answer."""
    name: str = ""
    """set_mode: the mode; restart_mcp_server: the server; kill_shell: the shell; answer_elicitation: the request."""
    content: dict[str, Any] | None = None
    """answer_elicitation: what the person filled in."""

    @model_validator(mode="after")
    def _named(self) -> Command:
        if not self.call_id and self.op not in WITHOUT_CALL:
            raise ValueError(f"{self.op} needs the call_id it is about")
        return self


WITHOUT_CALL = frozenset({"set_mode", "add_rule", "remove_rule", "dry_run", "trust_workspace", "restart_mcp_server",
                          "kill_shell", "answer_elicitation", "verify"})
"""The ops about no call."""


class Reply(BaseModel):
    type: Literal["reply"] = "reply"
    id: int
    ok: bool
    result: dict[str, Any] = Field(default_factory=dict)
    error: str = ""


ServerLine = Annotated[Welcome | CallsLine | EventLine | Reply, Field(discriminator="type")]
