"""Records shared by the pipeline, the journal and the front ends.

These are immutable facts (what a call is, how it ended, what it changed);
live things such as futures and tasks stay inside core objects keyed by id.
"""

from __future__ import annotations

from datetime import datetime
from enum import Enum
from typing import Any

from pydantic import BaseModel, ConfigDict

from core.errors import ErrorInfo


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

    @property
    def final(self) -> bool:
        return self not in (RunStatus.QUEUED, RunStatus.BLOCKED_ON_USER, RunStatus.RUNNING)


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


class ChangeKind(str, Enum):
    CREATE = "create"
    MODIFY = "modify"
    DELETE = "delete"


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
    after_mode: int | None = None


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
    undone_by: str | None = None
    """Id of the rollback that undid this call, if any."""


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
