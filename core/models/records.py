"""Records shared by the pipeline, the journal and the front ends.

These are immutable facts (what a call is, how it ended, what it changed);
live things such as futures and tasks stay inside core objects keyed by id.
"""

from __future__ import annotations

from datetime import datetime
from enum import Enum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from core.errors import ErrorInfo
from core.ids import RollbackId
from core.models.batches import PlanInfo


class RunStatus(str, Enum):
    """Where a call is in its lifecycle; the last five are final."""

    QUEUED = "queued"
    BLOCKED_ON_USER = "blocked_on_user"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"
    DENIED = "denied"
    CANCELLED = "cancelled"
    TIMED_OUT = "timed_out"
    INTERRUPTED = "interrupted"
    SKIPPED = "skipped"
    """Never run: a call of its batch it depends on failed, or its arguments' references could not be resolved."""

    @property
    def final(self) -> bool:
        return self._value_ not in _UNDER_WAY  # by value: an enum member hashes in Python, a str in C


_UNDER_WAY = frozenset({RunStatus.QUEUED.value, RunStatus.BLOCKED_ON_USER.value, RunStatus.RUNNING.value})
"""The values of the statuses a call is still in; asked of every call a flood shows."""


class AgentStatus(str, Enum):
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"
    CANCELLED = "cancelled"


class Decision(str, Enum):
    """How a person (or a rule standing in for one) answered an approval request."""

    APPROVED = "approved"
    APPROVED_EDITED = "approved_edited"
    ALWAYS_ALLOWED = "always_allowed"
    DENIED = "denied"
    TIMED_OUT = "timed_out"


VerdictBy = Literal["rule", "mode", "policy"]
"""Who made a policy verdict (`core.policy.verdicts.Verdict.by`): "rule" an allow, ask or deny rule (named in
the verdict); "mode" the mode in force (accept_edits, bypass, plan); "policy" Belay's built-in policy."""
DecidedBy = Literal["person", VerdictBy, "auto-approver", "timeout", "headless", "console"]
"""Who decided whether a call runs: "person" a human answering in the window or at the terminal prompt;
"rule" an allow, ask or deny rule (named beside it); "mode" the mode in force (accept_edits, bypass, plan);
"policy" Belay's built-in policy (read-only calls allowed, secrets and protected places refused);
"auto-approver" an unattended answerer (`--auto approve`, `--auto-approve`, a script's review);
"timeout" nobody answered in time and the rule's `on_timeout` applied; "headless" no front end could
answer, so asking meant denying; "console" the console closed while the call waited."""


DecidedVia = Literal["window", "notification", "terminal"]
"""How a person answered: in the window (its approval panel or edit dialog), from the desktop notification's
buttons, or at the terminal prompt (`belay run`); None for an answer that was not a person's, or journaled before
this was kept."""


def decided_by(value: str) -> DecidedBy:
    """A journaled `decided_by` as it reads now: journals written before the deciders were told apart
    say "user" for every answer a front end gave (a person's or an auto-approver's): read as "person"."""
    return "person" if value == "user" else value  # type: ignore[return-value]  # as journaled; CallDecision validates it


class CallDecision(BaseModel):
    """The last decision journaled about a call: what, why, and who made it."""

    model_config = ConfigDict(frozen=True)

    decision: Decision
    reason: str = ""
    by: DecidedBy
    rule: str | None = None
    """With `by` "rule": the rule that decided and its layer, e.g. "Bash(ls:*) [workspace]"."""
    via: DecidedVia | None = None
    """With `by` "person": where the person answered."""


class ChangeKind(str, Enum):
    """How one path changed.  A rename may also change the content; a mode change keeps it."""

    CREATE = "create"
    MODIFY = "modify"
    DELETE = "delete"
    RENAME = "rename"
    MODE = "mode"


class FileChange(BaseModel):
    """One file a call changed, with the content hashes needed to undo it."""

    model_config = ConfigDict(frozen=True)

    path: str
    """Path relative to the workspace root."""
    kind: ChangeKind
    before_hash: str | None
    """Blob hash of the content before the call; None when the call created the file."""
    after_hash: str | None
    """Blob hash of the content the call left; None when the call deleted the file."""
    before_mode: int | None = None
    """Permission bits before (None: unknown or absent)."""
    after_mode: int | None = None
    """Permission bits after (None: unknown or absent)."""
    old_path: str | None = None
    """For a rename: where the file was before, relative to the workspace root."""
    before_link: bool = False
    """The path held a symbolic link before; `before_hash` is then the blob of its target text."""
    after_link: bool = False
    """The path holds a symbolic link after; `after_hash` is then the blob of its target text."""
    stored: bool = True
    """False for a path the ignore rules exclude: reported, but its contents were not kept and cannot be restored."""

    @property
    def restorable(self) -> bool:
        """Whether an undo can put back what was there before."""
        return self.stored and (self.before_hash is not None or self.kind is ChangeKind.CREATE)
        # An ignored path is never touched by an undo, not even to delete it: its content was not
        # kept, so a later edit to it could not be told apart and would be lost.


GitMove = Literal["commit", "reset", "checkout", "created", "deleted", "moved"]
"""What a git reference's move looks like: new commits on top, a jump back, HEAD switched, a ref made or removed,
other."""


class GitChange(BaseModel):
    """A move of a git reference (a commit, a reset, a checkout, a branch made or removed) made by a call."""

    model_config = ConfigDict(frozen=True)

    ref: str
    """The reference that moved: "HEAD" or a full name such as "refs/heads/main"."""
    kind: GitMove
    """What the move looks like: new commits on top, a jump back, HEAD switched, a ref made or removed, other."""
    before: str | None
    """The commit id (or, for HEAD, "ref: <name>") before the call; None when the ref did not exist."""
    after: str | None
    """The same after the call; None when the ref was removed."""
    what: str
    """One line for a person, e.g. "commit 1a2b3c4 on main: Fix rounding" or "reset main back 2 commits"."""


class CallRecord(BaseModel):
    """A journaled call as the terminal and the window list it."""

    model_config = ConfigDict(frozen=True)

    call_id: str
    session_id: str
    agent_id: str
    agent_name: str
    tool: str
    summary: str
    args: dict[str, Any]
    status: RunStatus
    created_at: datetime
    duration_s: float | None
    output: str = ""
    error: ErrorInfo | None = None
    changes: tuple[FileChange, ...] = ()
    git_changes: tuple[GitChange, ...] = ()
    """References the call moved (commits, resets, checkouts)."""
    undone_by: RollbackId | None = None
    """Id of a rollback undoing this call, when every change it can undo is undone now."""
    undone_paths: tuple[str, ...] = ()
    """The changed paths that are undone now (all of them, or some after undoing single files)."""
    git_undone: bool = False
    """Its git reference moves are undone now."""
    cached: bool = False
    """Answered from the result cache: the tool did not run."""
    attempts: int = 1
    batch_id: str | None = None
    batch_key: str | None = None
    """The call's id within its batch."""
    use_id: str | None = None
    """The outside agent's own id for the call (see `CallQueued.use_id`)."""
    started_at: datetime | None = None
    """When it began running (None: it never ran)."""
    ended_at: datetime | None = None
    decision: CallDecision | None = None
    """Who let the call run or stopped it (None: nothing journaled, e.g. a call from before this was kept)."""


class AgentRecord(BaseModel):
    """A journaled agent: who issued calls, and who spawned it."""

    model_config = ConfigDict(frozen=True)

    agent_id: str
    session_id: str
    name: str
    kind: str
    parent_id: str | None
    spawned_by: str | None
    status: AgentStatus
    started_at: datetime


class RollbackRecord(BaseModel):
    """A journaled undo: what it targeted and what it wrote."""

    model_config = ConfigDict(frozen=True)

    rollback_id: str
    call_id: str
    """The call at the root: the one undone, or whose undo is undone (a redo)."""
    target: str
    """The operation undone: `call_id` for an undo, a rollback id for a redo."""
    forced: bool
    state: Literal["pending", "done", "failed"]
    """pending: recorded, files not all written yet (a crash leaves it so); done; failed: nothing of it stands."""
    message: str = ""
    created_at: datetime
    changes: tuple[FileChange, ...] = ()
    """What the undo itself changed, so that it can be undone in turn."""
    reverts: tuple[int | None, ...] = ()
    """Per own change, the position of the target's change it reverts (None: every change of the target)."""
    git_changes: tuple[GitChange, ...] = ()
    """The reference moves the undo made."""
    git_reverts: tuple[int, ...] = ()
    """Per own reference move, the (negative) position of the target's move it reverts."""


class ExternalRecord(BaseModel):
    """Changes found on disk that no call made (the person's editor, a tool running beside Belay)."""

    model_config = ConfigDict(frozen=True)

    op_id: str
    detected_at: datetime
    note: str
    """When and how they were found, e.g. "before call c-12" or "while Belay was not running"."""
    changes: tuple[FileChange, ...] = ()


class BatchRecord(BaseModel):
    """A journaled batch: the calls submitted together, as one group in the timeline."""

    model_config = ConfigDict(frozen=True)

    batch_id: str
    agent_id: str
    name: str
    plan: PlanInfo
    created_at: datetime
    finished_at: datetime | None = None
    summary: dict[str, Any] | None = None
