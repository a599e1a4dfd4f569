"""What an attached front end and a headless console (`belay serve`) say to each other: JSON lines, versioned.

The front end opens the console's socket (on the remote host, reached through an ssh-forwarded Unix socket)
and sends one line, an `AttachRequest` with the install's token, as every request to that socket does
(core.outside.endpoint).  The console answers with a `Welcome`: what its journal holds (agents, batches,
calls, changes found outside any call) and the approvals waiting, as of `last_seq`; then every event after
that, one `EventLine` each, as its bus publishes them.  Meanwhile the front end may send `Command`s
(approve, deny, always allow, undo, redo), each answered by a `Reply` with the same `id`.

The journal is the truth: a front end whose connection drops attaches again and starts over from a new
`Welcome`, losing nothing (an approval still waiting is in it).  A front end that falls behind the event
stream is sent the bus's `Lagged` event and should do the same.  A console speaking another version
answers `{"ok": false, "error": ...}` and closes, saying which version it speaks.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from core.events import ApprovalRequested, Event
from core.models.records import AgentRecord, BatchRecord, CallRecord, DecidedVia, ExternalRecord

PROTOCOL_VERSION = 1


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
    """Their arguments and output cut as the timeline keeps them (core.timeline.excerpts)."""
    externals: list[ExternalRecord]
    pending: list[ApprovalRequested]
    """The approvals waiting for a person now, whole (diffs and proposed contents)."""


class EventLine(BaseModel):
    type: Literal["event"] = "event"
    event: Event


Op = Literal["approve", "deny", "always_allow", "undo", "redo"]


class Command(BaseModel):
    """Something the person does, carried out by the console as if given in its own window."""

    model_config = ConfigDict(extra="forbid")

    id: int
    op: Op
    call_id: str
    reason: str = ""
    edited: dict[str, str] | None = None
    """approve: the person's content per file."""
    scope: Literal["once", "session", "workspace", "user"] = "session"
    """always_allow: how far the rule reaches."""
    rule: str | None = None
    paths: list[str] | None = None
    """undo, redo: only these files of the call."""
    force: bool = False
    via: DecidedVia = "window"


class Reply(BaseModel):
    type: Literal["reply"] = "reply"
    id: int
    ok: bool
    result: dict[str, Any] = Field(default_factory=dict)
    error: str = ""


ServerLine = Annotated[Welcome | EventLine | Reply, Field(discriminator="type")]
