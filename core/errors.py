"""The few error types the core raises, and how they read as data.

A tool never lets an arbitrary exception escape: what goes wrong becomes a
`ToolError` with a kind from a small fixed set, a message a person (and a
model) can act on, and a suggestion.  The pipeline turns it into a failed run.
"""

from __future__ import annotations

from enum import Enum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, model_validator


class ErrorKind(str, Enum):
    """What went wrong, in the vocabulary shared with the hostile-input corpus."""

    INVALID_ARGS = "invalid-args"
    OUTSIDE_WORKSPACE = "outside-workspace"
    NOT_FOUND = "not-found"
    NOT_REGULAR_FILE = "not-regular-file"
    IS_DIRECTORY = "is-directory"
    INVALID_NOTEBOOK = "invalid-notebook"
    NOT_UNIQUE = "not-unique"
    STALE_READ = "stale-read"
    TOO_LARGE = "too-large"
    RESOURCE_LIMIT = "resource-limit"
    CONFLICT = "conflict"
    PERMISSION = "permission"
    DENIED = "denied"
    TIMEOUT = "timeout"
    CANCELLED = "cancelled"
    UNKNOWN_TOOL = "unknown-tool"
    SYSTEM = "system"
    NETWORK = "network"
    BUSY = "busy"
    """A resource was momentarily unavailable (EAGAIN, EBUSY, too many open files): worth a retry."""
    SKIPPED = "skipped"
    """Not run: a call it depends on failed, or a reference in its arguments could not be resolved."""


Category = Literal["validation", "permission", "not_found", "timeout", "network", "system", "unknown"]
"""The broad class of a failure, as the orchestrator and its retries see it."""

_CATEGORY: dict[ErrorKind, tuple[Category, bool]] = {  # kind: (category, recoverable by retrying as is)
    ErrorKind.INVALID_ARGS: ("validation", False),
    ErrorKind.OUTSIDE_WORKSPACE: ("permission", False),
    ErrorKind.NOT_FOUND: ("not_found", False),
    ErrorKind.NOT_REGULAR_FILE: ("validation", False),
    ErrorKind.IS_DIRECTORY: ("validation", False),
    ErrorKind.INVALID_NOTEBOOK: ("validation", False),
    ErrorKind.NOT_UNIQUE: ("validation", False),
    ErrorKind.STALE_READ: ("validation", False),
    ErrorKind.TOO_LARGE: ("validation", False),
    ErrorKind.RESOURCE_LIMIT: ("system", False),
    ErrorKind.CONFLICT: ("validation", False),
    ErrorKind.PERMISSION: ("permission", False),
    ErrorKind.DENIED: ("permission", False),
    ErrorKind.TIMEOUT: ("timeout", True),
    ErrorKind.CANCELLED: ("unknown", False),
    ErrorKind.UNKNOWN_TOOL: ("validation", False),
    ErrorKind.SYSTEM: ("system", False),
    ErrorKind.NETWORK: ("network", True),
    ErrorKind.BUSY: ("system", True),
    ErrorKind.SKIPPED: ("validation", False),
}


class ErrorInfo(BaseModel):
    """A failure as data: shown in the window, journaled, and sent to the agent."""

    model_config = ConfigDict(frozen=True)

    kind: ErrorKind
    """Which of the fixed error kinds this is."""
    message: str
    """One or two sentences saying what happened, naming the path or value."""
    suggestion: str = ""
    """What the agent or the person can do about it, if anything."""
    category: Category = "unknown"
    """validation, permission, not_found, timeout, network, system or unknown (from `kind` unless given)."""
    code: str = ""
    """A short stable code for programs: the kind, or a more precise one (an errno name such as "ENOSPC")."""
    recoverable: bool = False
    """Trying the same call again may work (a timeout, a dropped connection, a busy resource)."""

    @model_validator(mode="before")
    @classmethod
    def _classify(cls, data: Any) -> Any:
        """Fill category, code and recoverable from the kind when the caller did not say."""
        if not isinstance(data, dict) or "kind" not in data:
            return data
        try:
            kind = ErrorKind(data["kind"])
        except ValueError:
            return data
        category, recoverable = _CATEGORY.get(kind, ("unknown", False))
        return {"category": category, "code": kind.value, "recoverable": recoverable, **data}


class BelayError(Exception):
    """Base of the core's own exceptions; carries an `ErrorInfo`."""

    def __init__(self, kind: ErrorKind, message: str, suggestion: str = "", *, code: str | None = None,
                 recoverable: bool | None = None) -> None:
        super().__init__(message)
        extra: dict[str, Any] = {}
        if code is not None:
            extra["code"] = code
        if recoverable is not None:
            extra["recoverable"] = recoverable
        self.info = ErrorInfo(kind=kind, message=message, suggestion=suggestion, **extra)

    @property
    def kind(self) -> ErrorKind:
        return self.info.kind

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.info.kind.value}: {self.info.message!r})"


class ToolError(BelayError):
    """A tool call that cannot be carried out as asked."""


class UndoConflict(BelayError):
    """An undo that would overwrite content changed after the call."""

    def __init__(self, message: str, paths: list[str]) -> None:
        super().__init__(
            ErrorKind.CONFLICT,
            message,
            "Review the current files, or force the undo to overwrite them.",
        )
        self.paths = paths
