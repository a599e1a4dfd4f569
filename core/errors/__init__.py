"""The few error types the core raises, and how they read as data.

A tool never lets an arbitrary exception escape: what goes wrong becomes a
`ToolError` with a kind from a small fixed set, a message a person (and a
model) can act on, and a suggestion.  The pipeline turns it into a failed run.

`ErrorInfo`, the failure as data (a pydantic model), is core.errors.info's, imported when first asked for:
raising and catching a `BelayError` needs no pydantic, so the commands that only read the journal
(`belay calls`, `belay gc`) start without it.
"""

from __future__ import annotations

from enum import Enum
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from core.errors.info import ErrorInfo


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


class BelayError(Exception):
    """Base of the core's own exceptions; carries an `ErrorInfo` (made when first read)."""

    def __init__(self, kind: ErrorKind, message: str, suggestion: str = "", *, code: str | None = None,
                 recoverable: bool | None = None) -> None:
        super().__init__(message)
        self._kind = kind
        self._fields: dict[str, Any] = {"kind": kind, "message": message, "suggestion": suggestion}
        if code is not None:
            self._fields["code"] = code
        if recoverable is not None:
            self._fields["recoverable"] = recoverable
        self._info: ErrorInfo | None = None

    @property
    def info(self) -> ErrorInfo:
        """The failure as data: the model (and pydantic) load at its first read, not at the raise."""
        if self._info is None:
            from core.errors.info import ErrorInfo

            self._info = ErrorInfo(**self._fields)
        return self._info

    @property
    def kind(self) -> ErrorKind:
        return self._kind

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._kind.value}: {self._fields['message']!r})"


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


def __getattr__(name: str) -> Any:
    """`from core.errors import ErrorInfo`, as before the model moved to core.errors.info (PEP 562)."""
    if name == "ErrorInfo":
        from core.errors.info import ErrorInfo

        return ErrorInfo
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
