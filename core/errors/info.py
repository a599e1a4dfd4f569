"""A failure as data: the pydantic record of a `BelayError`, as the window shows it and the journal keeps it."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, model_validator

from core.errors import _CATEGORY, Category, ErrorKind


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
