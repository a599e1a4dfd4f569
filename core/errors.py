"""The few error types the core raises, and how they read as data.

A tool never lets an arbitrary exception escape: what goes wrong becomes a
`ToolError` with a kind from a small fixed set, a message a person (and a
model) can act on, and a suggestion.  The pipeline turns it into a failed run.
"""

from __future__ import annotations

from enum import Enum

from pydantic import BaseModel, ConfigDict


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


class ErrorInfo(BaseModel):
    """A failure as data: shown in the window, journaled, and sent to the agent."""

    model_config = ConfigDict(frozen=True)

    kind: ErrorKind
    """Which of the fixed error kinds this is."""
    message: str
    """One or two sentences saying what happened, naming the path or value."""
    suggestion: str = ""
    """What the agent or the person can do about it, if anything."""


class BelayError(Exception):
    """Base of the core's own exceptions; carries an `ErrorInfo`."""

    def __init__(self, kind: ErrorKind, message: str, suggestion: str = "") -> None:
        super().__init__(message)
        self.info = ErrorInfo(kind=kind, message=message, suggestion=suggestion)

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
