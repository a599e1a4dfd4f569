"""Events: frozen facts the core publishes, one discriminated union.

Data flows from the core to front ends only as these events.  Each has a
`kind` tag, a sequence number stamped by the bus, and an aware timestamp;
one `TypeAdapter` decodes any of them (the journal's readers and the tests
use it).  Every event and every field says what it means and who sets it.
A fact that is also journaled is published by `core.recorder` after its
journal row is written; the others come from the part that owns them (the
background shells, the policy, the MCP servers).

This module is a leaf of the core: it imports only the records in
`core.models` (`Fact`, what every event is, among them), the ids, the error
record, and `core.questions`, the events of what a console asks a person,
which are part of the union and are imported from here like the others.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

from pydantic import Field, TypeAdapter

from core.errors import ErrorInfo
from core.ids import AgentId, BatchId, CallId, ExternalId, RollbackId, SessionId, ShellId
from core.models.batches import PlanInfo
from core.models.conversation import Message, TokenUse
from core.models.fact import Fact
from core.models.mcp import ServerStatus
from core.models.policy import Mode, RuleEntry
from core.models.records import (
    AgentStatus,
    FileChange,
    GitChange,
    RunStatus,
)
from core.models.records import DecidedBy as DecidedBy  # (re-exported: who decides is read with the events)
from core.models.records import DecidedVia as DecidedVia
from core.questions import (
    ApprovalRequested,
    ApprovalResolved,
    ElicitationRequested,
    ElicitationResolved,
)
from core.questions import ProposedFile as ProposedFile


class SessionStarted(Fact):
    """The console recorded its session: the first time anything happened in it (set by the recorder)."""

    kind: Literal["session_started"] = "session_started"
    """The tag that tells this event from the others."""
    session_id: SessionId
    """The session, one per console opened on the workspace."""
    workspace: str
    """Absolute path of the workspace the session supervises."""


class AgentStarted(Fact):
    """An agent began: Belay's scripted agent, a sub-agent, an outside session or an MCP client (the console)."""

    kind: Literal["agent_started"] = "agent_started"
    """The tag that tells this event from the others."""
    agent_id: AgentId
    """The agent; every call it makes carries this id."""
    session_id: SessionId
    """The console session it started in."""
    name: str
    """What the window calls it: the script's name, the sub-agent's type, "claude-code 1a2b3c4d", an MCP
    client's name."""
    agent_kind: str
    """Where it comes from: "scripted", "batch" (`belay run`), "subagent", "mcp" (a `belay mcp-serve` client),
    or the outside client's own name ("claude-code")."""
    parent_id: AgentId | None = None
    """The agent that spawned this one (None for a top-level agent)."""
    spawned_by: CallId | None = None
    """The call (a Task or Agent call) that spawned it, when known at its start (see AgentLinked)."""
    tools: tuple[str, ...] | None = None
    """The tools it may call; None means every registered tool."""


class AgentLinked(Fact):
    """A sub-agent's spawning call became known after it started (the recorder, for outside agents,
    whose evidence can come later than the sub-agent's first event)."""

    kind: Literal["agent_linked"] = "agent_linked"
    """The tag that tells this event from the others."""
    agent_id: AgentId
    """The sub-agent."""
    spawned_by: CallId
    """The Task or Agent call that spawned it."""


class AgentFinished(Fact):
    """An agent ended (the console when an agent's body returns or raises; the outside agents when a session
    or an MCP client goes away)."""

    kind: Literal["agent_finished"] = "agent_finished"
    """The tag that tells this event from the others."""
    agent_id: AgentId
    """The agent that ended."""
    status: AgentStatus
    """done, failed or cancelled."""
    message: str = ""
    """Its last words: a summary, the error, or why its session ended."""


class CallQueued(Fact):
    """A call exists and is journaled; nothing is decided yet (the recorder, for Belay's own and outside calls,
    and for a batch's calls that were skipped)."""

    kind: Literal["call_queued"] = "call_queued"
    """The tag that tells this event from the others."""
    call_id: CallId
    """The call, from here to its CallFinished."""
    agent_id: AgentId
    """The agent that made it."""
    tool: str
    """The tool's name as the agent called it (e.g. "Edit", "Bash", "mcp__git__status")."""
    args: dict[str, Any]
    """The arguments as the agent sent them (or the raw text, under `_raw`)."""
    summary: str
    """One line for the timeline, e.g. the file's path relative to the workspace."""
    batch_id: BatchId | None = None
    """The batch the call belongs to, when it was submitted as part of one."""
    batch_key: str | None = None
    """Its id within the batch (what `depends_on` and references name)."""
    use_id: str | None = None
    """The agent's own id for the call (its hooks' `tool_use_id`), for an outside agent that gives one: what its
    transcript names the call by (the tokens of the response that made it)."""


class CallStarted(Fact):
    """The call is allowed and its tool runs now: Belay's own, or the outside agent's (the recorder).  A call
    answered from the cache also starts, though its tool does not run."""

    kind: Literal["call_started"] = "call_started"
    """The tag that tells this event from the others."""
    call_id: CallId
    """The call."""


class CallProgress(Fact):
    """A long call is still working (a heartbeat from the pipeline), or says how far it got."""

    kind: Literal["call_progress"] = "call_progress"
    """The tag that tells this event from the others."""
    call_id: CallId
    """The running call."""
    elapsed_s: float
    """Seconds since its tool started."""
    note: str = ""
    """What the tool says it is doing, when it says anything."""


class CallRetrying(Fact):
    """A read-only call failed in a way that may pass and will be tried again (the pipeline)."""

    kind: Literal["call_retrying"] = "call_retrying"
    """The tag that tells this event from the others."""
    call_id: CallId
    """The call being retried."""
    attempt: int
    """The try that failed (1 for the first)."""
    delay_s: float
    """Seconds until the next try."""
    error: ErrorInfo
    """Why the try failed."""


class CallOutput(Fact):
    """A chunk of a running call's live output (sanitised; coalesced at the source by the tool)."""

    kind: Literal["call_output"] = "call_output"
    """The tag that tells this event from the others."""
    call_id: CallId
    """The running call."""
    text: str
    """The next piece of its output."""


class ShellStarted(Fact):
    """A background shell started by a Bash call with run_in_background (the shell manager)."""

    kind: Literal["shell_started"] = "shell_started"
    """The tag that tells this event from the others."""
    shell_id: ShellId
    """The shell, as BashOutput and KillShell name it."""
    call_id: CallId
    """The Bash call that started it."""
    command: str
    """The command line it runs."""


class ShellOutput(Fact):
    """A chunk of a background shell's output (coalesced by the shell manager)."""

    kind: Literal["shell_output"] = "shell_output"
    """The tag that tells this event from the others."""
    shell_id: ShellId
    """The shell."""
    text: str
    """The next piece of its output."""


class ShellFinished(Fact):
    """A background shell's command exited or was killed (the shell manager)."""

    kind: Literal["shell_finished"] = "shell_finished"
    """The tag that tells this event from the others."""
    shell_id: ShellId
    """The shell."""
    exit_code: int | None
    """None when it was killed."""
    killed: bool = False
    """Stopped by KillShell, the window or the console closing, rather than exiting by itself."""


class CallFinished(Fact):
    """How a call ended, with everything it changed, after the journal holds it (the recorder)."""

    kind: Literal["call_finished"] = "call_finished"
    """The tag that tells this event from the others."""
    call_id: CallId
    """The call."""
    status: RunStatus
    """done, failed, denied, cancelled, timed_out, interrupted or skipped."""
    output: str = ""
    """What the agent was told (capped)."""
    error: ErrorInfo | None = None
    """For a call that did not succeed: what went wrong and what to do."""
    changes: tuple[FileChange, ...] = ()
    """Files the call changed (created, modified, deleted, renamed, mode changed)."""
    git_changes: tuple[GitChange, ...] = ()
    """Git references the call moved (commits, resets, checkouts)."""
    duration_s: float = 0.0
    """Seconds from the call's arrival to its end (waiting for a person included)."""
    cached: bool = False
    """The result was served from the cache (the tool did not run again)."""
    attempts: int = 1
    """How many times the tool was tried (retries of a read-only call)."""


class RollbackFinished(Fact):
    """An undo (or the undo of an undo: a redo) was written and recorded (the undo service)."""

    kind: Literal["rollback_finished"] = "rollback_finished"
    """The tag that tells this event from the others."""
    rollback_id: RollbackId
    """The undo."""
    call_id: CallId
    """The call concerned: the one undone, or whose undo was undone."""
    paths: tuple[str, ...]
    """Files the rollback wrote."""
    forced: bool = False
    """Files changed since the call were overwritten (the person chose to)."""
    target: str = ""
    """The operation undone: `call_id`, or a rollback id for a redo."""
    redo: bool = False
    """This undid an undo."""
    undone_paths: tuple[str, ...] = ()
    """The call's changed paths that are undone now, after this rollback."""
    undone_by: RollbackId | None = None
    """A rollback undoing the whole call now, or None when some of it stands."""
    git_undone: bool = False
    """The call's git reference moves are undone now."""


class ExternalChangesRecorded(Fact):
    """Files changed by someone other than Belay's calls (an editor, a build), found and journaled
    (the recorder, for the change tracker and for crash recovery)."""

    kind: Literal["external_changes_recorded"] = "external_changes_recorded"
    """The tag that tells this event from the others."""
    op_id: ExternalId
    """The journal's id for these changes."""
    note: str
    """When they were found, e.g. "before call call_1a2b" or "while Belay was not running"."""
    changes: tuple[FileChange, ...]
    """What changed; shown, never undone by Belay."""


class RollbackRefused(Fact):
    """An undo wrote nothing: files changed since need a decision, or nothing is left to undo (the undo service)."""

    kind: Literal["rollback_refused"] = "rollback_refused"
    """The tag that tells this event from the others."""
    call_id: CallId
    """The call whose undo was refused."""
    message: str
    """Why, in words."""
    conflicts: tuple[str, ...] = ()
    """Paths that changed after the call; undoing would overwrite them."""


class PolicyChanged(Fact):
    """The rules or the mode changed: from the window, "Always allow", or settings (re)loaded (the console)."""

    kind: Literal["policy_changed"] = "policy_changed"
    """The tag that tells this event from the others."""
    what: str
    """What changed, in words, e.g. "added allow rule Bash(ls:*) to session"."""
    mode: Mode
    """The mode now in force: default, accept_edits, plan or bypass."""
    rules: tuple[RuleEntry, ...] = ()
    """Every rule in force now, user layer first."""
    problems: tuple[str, ...] = ()
    """Settings that could not be used (file, line, why)."""
    held_back: tuple[str, ...] = ()
    """What the workspace's settings file would loosen (allow rules, a looser mode...), waiting until the person
    trusts the workspace; empty once trusted."""


class McpServerChanged(Fact):
    """An MCP server started, became ready (n tools), failed (why) or stopped (the console, for its MCP manager)."""

    kind: Literal["mcp_server_changed"] = "mcp_server_changed"
    """The tag that tells this event from the others."""
    status: ServerStatus
    """The server's state now."""


class BatchStarted(Fact):
    """A batch of calls was accepted: its plan is known, its calls are about to be queued (the recorder)."""

    kind: Literal["batch_started"] = "batch_started"
    """The tag that tells this event from the others."""
    batch_id: BatchId
    """The batch; its calls' CallQueued carry it."""
    agent_id: AgentId
    """The agent that submitted it."""
    name: str
    """The batch's name, for the window."""
    plan: PlanInfo
    """Its dependency graph's shape: levels, critical path, widest level."""
    size: int
    """How many calls it names."""


class BatchFinished(Fact):
    """Every call of a batch ended (done, failed or skipped); the totals (the recorder)."""

    kind: Literal["batch_finished"] = "batch_finished"
    """The tag that tells this event from the others."""
    batch_id: BatchId
    """The batch."""
    succeeded: int
    """Calls that ended done."""
    failed: int
    """Calls that failed, were denied, cancelled or timed out."""
    skipped: int
    """Calls never run (a dependency failed, a reference could not be resolved)."""
    cache_hits: int
    """Calls answered from the result cache."""
    duration_s: float
    """Seconds from the batch's start to its end."""
    max_running: int
    """The most of its calls that ran at the same time."""


class Lagged(Fact):
    """Sent to a subscriber that fell behind (by the bus, in place of what it missed): it must resynchronise
    from a snapshot."""

    kind: Literal["lagged"] = "lagged"
    """The tag that tells this event from the others."""
    missed: int
    """How many events it lost."""


class LinkChanged(Fact):
    """A window's link to a console on another host (core.remote.console) dropped, came back (its timeline and
    state were read again from that console's journal), or was given up on."""

    kind: Literal["link_changed"] = "link_changed"
    """The tag that tells this event from the others."""
    state: Literal["attached", "reattaching", "lost"]
    """attached: (again) following the console; reattaching: the link dropped, trying again; lost: given up."""
    detail: str = ""
    """Why, in words (the link's error), for the window."""


class ConversationRecorded(Fact):
    """What an agent said and what its responses cost, read from its transcript and journaled (the recorder).

    One event per read of a transcript that found something: its new messages in the order the agent wrote
    them, the tokens of its new responses, and what could not be read."""

    kind: Literal["conversation_recorded"] = "conversation_recorded"
    """The tag that tells this event from the others."""
    agent_id: AgentId
    """The agent whose transcript was read (its sub-agents' messages name their own agent)."""
    messages: tuple[Message, ...] = ()
    """Prompts, texts and reasoning summaries, oldest first."""
    tokens: tuple[TokenUse, ...] = ()
    """One per model response, oldest first."""
    skipped: int = 0
    """Records of this read that could not be read (unknown kinds, versions, damaged or overlong lines)."""
    note: str = ""
    """What was skipped, in words, for the person ("" when nothing was)."""


class BudgetReached(Fact):
    """The tokens or money spent reached a limit of the settings' `[budget]` (core.outside.budget): told once
    per limit (per day for a day's)."""

    kind: Literal["budget_reached"] = "budget_reached"
    """The tag that tells this event from the others."""
    limit: Literal["session_usd", "day_usd", "session_tokens", "day_tokens"]
    """Which limit: this session's or the workspace's day's, in money or in tokens."""
    message: str
    """What was spent of what was allowed, in words."""
    held: bool
    """Whether the next call is held for a person to decide (the budget's `hold`)."""


Event = Annotated[
    Union[
        SessionStarted,
        AgentStarted,
        AgentFinished,
        AgentLinked,
        CallQueued,
        ApprovalRequested,
        ApprovalResolved,
        CallStarted,
        CallProgress,
        CallRetrying,
        CallOutput,
        CallFinished,
        ShellStarted,
        ShellOutput,
        ShellFinished,
        RollbackFinished,
        RollbackRefused,
        ExternalChangesRecorded,
        PolicyChanged,
        BatchStarted,
        BatchFinished,
        McpServerChanged,
        ElicitationRequested,
        ElicitationResolved,
        Lagged,
        LinkChanged,
        ConversationRecorded,
        BudgetReached,
    ],
    Field(discriminator="kind"),
]
"""Any event, told apart by its `kind` (pydantic's discriminated union: one check, no trial and error)."""

EVENT_ADAPTER: TypeAdapter[Event] = TypeAdapter(Event)
"""Decodes and encodes any event (JSON lines of `belay run --json`, tests)."""
