"""Events: frozen facts the core publishes, one discriminated union.

Data flows from the core to front ends only as these events.  Each has a
`kind` tag, a sequence number stamped by the bus, and an aware timestamp;
one `TypeAdapter` decodes any of them (the journal and the tests use it).
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from core.models.diffs import FileDiff
from core.errors import ErrorInfo
from core.models.records import AgentStatus, Decision, FileChange, GitChange, RunStatus
from core.models.mcp import ServerStatus
from core.models.batches import PlanInfo
from core.models.policy import RuleEntry
from core.models.bash import BashAnalysis, Impact


DecidedBy = Literal["user", "timeout", "headless", "console"]
"""Who answered an approval request: "user" a front end for a person (the window, the terminal, a
reviewer standing in for one); "timeout" nobody answered in time (the rule's default applied);
"headless" no front end could answer, so Belay denied at once; "console" the console closed while
the call waited."""


def _now() -> datetime:
    return datetime.now(timezone.utc)


class _Event(BaseModel):
    model_config = ConfigDict(frozen=True)

    seq: int = 0
    """Position in the bus's stream; stamped when published."""
    at: datetime = Field(default_factory=_now)
    """When the fact happened (UTC)."""


class SessionStarted(_Event):
    kind: Literal["session_started"] = "session_started"
    session_id: str
    workspace: str
    """Absolute path of the workspace the session supervises."""


class AgentStarted(_Event):
    kind: Literal["agent_started"] = "agent_started"
    agent_id: str
    session_id: str
    name: str
    agent_kind: str
    """scripted, subagent, or the name of an external client."""
    parent_id: str | None = None
    """The agent that spawned this one, if any."""
    spawned_by: str | None = None
    """The call (a Task call) that spawned this agent."""
    tools: tuple[str, ...] | None = None
    """The tools it may call; None means every registered tool."""


class AgentLinked(_Event):
    """A sub-agent's spawning call became known after it started (an outside agent's evidence came later)."""

    kind: Literal["agent_linked"] = "agent_linked"
    agent_id: str
    spawned_by: str


class AgentFinished(_Event):
    kind: Literal["agent_finished"] = "agent_finished"
    agent_id: str
    status: AgentStatus
    message: str = ""


class CallQueued(_Event):
    kind: Literal["call_queued"] = "call_queued"
    call_id: str
    agent_id: str
    tool: str
    args: dict[str, Any]
    """The arguments as the agent sent them (or the raw text, under `_raw`)."""
    summary: str
    batch_id: str | None = None
    """The batch the call belongs to, when it was submitted as part of one."""
    batch_key: str | None = None
    """Its id within the batch (what `depends_on` and references name)."""


class ProposedFile(BaseModel):
    """The content a pending write would leave in one file (text files only)."""

    model_config = ConfigDict(frozen=True)

    path: str
    """Relative to the workspace."""
    content: str | None
    """The whole new content; None when the file would be deleted or is binary."""


class ApprovalRequested(_Event):
    kind: Literal["approval_requested"] = "approval_requested"
    call_id: str
    agent_id: str
    tool: str
    summary: str
    reason: str
    """Why the policy asks (which rule, which effect)."""
    args: dict[str, Any]
    diffs: tuple[FileDiff, ...] = ()
    """What the call would change, one diff per file."""
    proposed: tuple[ProposedFile, ...] = ()
    """The content after the call, for approving with edits."""
    timeout_s: float | None = None
    """Seconds the request waits before its rule's default applies (None: for ever)."""
    on_timeout: Literal["deny", "allow"] = "deny"
    """What happens when `timeout_s` runs out."""
    rule: str | None = None
    """The rule that asked, with its layer, when a rule (not the defaults) decided."""
    impact: Impact = Impact()
    """How much the call could hurt, with the reasons."""
    analysis: BashAnalysis | None = None
    """For Bash: the parsed command, the parts that caused the question flagged."""
    suggested_rule: str | None = None
    """The rule "Always allow" would add; None when no rule can allow calls like this one."""
    cwd: str = ""
    """Where the command would run (Bash)."""
    sandbox: str = ""
    """What a Bash command would run in, in words ("bubblewrap: ..." or why there is no sandbox)."""


class ApprovalResolved(_Event):
    kind: Literal["approval_resolved"] = "approval_resolved"
    call_id: str
    decision: Decision
    reason: str = ""
    by: DecidedBy = "user"


class CallStarted(_Event):
    kind: Literal["call_started"] = "call_started"
    call_id: str


class CallProgress(_Event):
    """A long call is still working (a heartbeat), or says how far it got."""

    kind: Literal["call_progress"] = "call_progress"
    call_id: str
    elapsed_s: float
    note: str = ""


class CallRetrying(_Event):
    """A read-only call failed in a way that may pass and will be tried again."""

    kind: Literal["call_retrying"] = "call_retrying"
    call_id: str
    attempt: int
    """The try that failed (1 for the first)."""
    delay_s: float
    error: ErrorInfo


class CallOutput(_Event):
    """A chunk of a running call's live output (sanitised; coalesced at the source)."""

    kind: Literal["call_output"] = "call_output"
    call_id: str
    text: str


class ShellStarted(_Event):
    """A background shell started by a Bash call with run_in_background."""

    kind: Literal["shell_started"] = "shell_started"
    shell_id: str
    call_id: str
    command: str


class ShellOutput(_Event):
    kind: Literal["shell_output"] = "shell_output"
    shell_id: str
    text: str


class ShellFinished(_Event):
    kind: Literal["shell_finished"] = "shell_finished"
    shell_id: str
    exit_code: int | None
    """None when it was killed."""
    killed: bool = False


class CallFinished(_Event):
    kind: Literal["call_finished"] = "call_finished"
    call_id: str
    status: RunStatus
    output: str = ""
    """What the agent was told (capped)."""
    error: ErrorInfo | None = None
    changes: tuple[FileChange, ...] = ()
    git_changes: tuple[GitChange, ...] = ()
    """Git references the call moved (commits, resets, checkouts)."""
    duration_s: float = 0.0
    cached: bool = False
    """The result was served from the cache (the tool did not run again)."""
    attempts: int = 1


class RollbackFinished(_Event):
    """An undo (or the undo of an undo: a redo) was written and recorded."""

    kind: Literal["rollback_finished"] = "rollback_finished"
    rollback_id: str
    call_id: str
    """The call concerned: the one undone, or whose undo was undone."""
    paths: tuple[str, ...]
    """Files the rollback wrote."""
    forced: bool = False
    target: str = ""
    """The operation undone: `call_id`, or a rollback id for a redo."""
    redo: bool = False
    undone_paths: tuple[str, ...] = ()
    """The call's changed paths that are undone now, after this rollback."""
    undone_by: str | None = None
    """A rollback undoing the whole call now, or None when some of it stands."""
    git_undone: bool = False
    """The call's git reference moves are undone now."""


class ExternalChangesRecorded(_Event):
    """Files changed by someone other than Belay's calls (an editor, a build), found and journaled."""

    kind: Literal["external_changes_recorded"] = "external_changes_recorded"
    op_id: str
    note: str
    """When they were found, e.g. "before call call_1a2b" or "while Belay was not running"."""
    changes: tuple[FileChange, ...]


class RollbackRefused(_Event):
    kind: Literal["rollback_refused"] = "rollback_refused"
    call_id: str
    message: str
    conflicts: tuple[str, ...] = ()
    """Paths that changed after the call; undoing would overwrite them."""


class PolicyChanged(_Event):
    """The rules or the mode changed (from the window, "Always allow", or settings reloaded)."""

    kind: Literal["policy_changed"] = "policy_changed"
    what: str
    """What changed, in words, e.g. "added allow rule Bash(ls:*) to session"."""
    mode: str
    """The mode now in force: default, accept_edits, plan or bypass."""
    rules: tuple[RuleEntry, ...] = ()
    """Every rule in force now, user layer first."""
    problems: tuple[str, ...] = ()
    """Settings that could not be used (file, line, why)."""


class McpServerChanged(_Event):
    """An MCP server started, became ready (n tools), failed (why) or stopped."""

    kind: Literal["mcp_server_changed"] = "mcp_server_changed"
    status: ServerStatus


class BatchStarted(_Event):
    """A batch of calls was accepted: its plan is known, its calls are about to be queued."""

    kind: Literal["batch_started"] = "batch_started"
    batch_id: str
    agent_id: str
    name: str
    plan: PlanInfo
    size: int


class BatchFinished(_Event):
    kind: Literal["batch_finished"] = "batch_finished"
    batch_id: str
    succeeded: int
    failed: int
    skipped: int
    cache_hits: int
    duration_s: float
    max_running: int


class Lagged(_Event):
    """Sent to a subscriber that fell behind: it must resynchronise from a snapshot."""

    kind: Literal["lagged"] = "lagged"
    missed: int


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
        Lagged,
    ],
    Field(discriminator="kind"),
]

EVENT_ADAPTER: TypeAdapter[Event] = TypeAdapter(Event)
