"""The outcome of an undo, as returned to the terminal and shown in the window."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class UndoReport(BaseModel):
    """What an undo did, or why it did nothing."""

    model_config = ConfigDict(frozen=True)

    call_id: str
    ok: bool
    message: str
    rollback_id: str | None = None
    paths: tuple[str, ...] = ()
    """Files restored (when ok)."""
    conflicts: tuple[str, ...] = ()
    """Files changed after the call; forcing the undo would overwrite them."""
