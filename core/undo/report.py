"""Undo as the front ends see it: the preview before, the person's resolutions, the report after."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict


class Resolution(BaseModel):
    """How the person settled one conflicting file of an undo."""

    model_config = ConfigDict(frozen=True)

    action: Literal["overwrite", "skip", "merge"]
    """overwrite: restore the earlier content over the later edits; skip: leave the file as it is now;
    merge: write `content`."""
    content: str | None = None
    """The text to write, for merge (usually the merged text, edited)."""
    seen_digest: str | None = None
    """The content hash of the file as the person saw it; if it changed since, the undo is refused."""


class FilePreview(BaseModel):
    """One file of an undo before it happens."""

    model_config = ConfigDict(frozen=True)

    path: str
    old_path: str | None = None
    """For a rename: where the undo moves it back to."""
    action: Literal["restore", "already", "merged", "conflict", "unrestorable"]
    reason: str = ""
    now: str | None = None
    """The file now (text only; None when absent or binary)."""
    after_call: str | None = None
    """What the call left (the merge's base)."""
    before_call: str | None = None
    """What the undo restores."""
    merged: str | None = None
    """The merge result: clean for merged, with conflict markers for a text conflict."""
    now_digest: str | None = None
    """Hash of the file now, to pass back in a Resolution."""
    binary: bool = False
    """Some version is not text: a conflict can only be overwritten or skipped."""


class UndoPreview(BaseModel):
    """What undoing an operation would do to each file, newest change first."""

    model_config = ConfigDict(frozen=True)

    op_id: str
    call_id: str
    redo: bool = False
    """The operation is an undo: undoing it puts the call's changes back."""
    files: tuple[FilePreview, ...] = ()

    @property
    def conflicts(self) -> tuple[FilePreview, ...]:
        return tuple(f for f in self.files if f.action == "conflict")


class UndoReport(BaseModel):
    """What an undo did, or why it did nothing."""

    model_config = ConfigDict(frozen=True)

    call_id: str
    ok: bool
    message: str
    rollback_id: str | None = None
    redo: bool = False
    """The undo undid an earlier undo."""
    paths: tuple[str, ...] = ()
    """Files restored (when ok)."""
    merged: tuple[str, ...] = ()
    """Files restored by merging: later edits to them were kept."""
    skipped: tuple[str, ...] = ()
    """Conflicting files the person chose to leave as they are."""
    unrestorable: tuple[str, ...] = ()
    """Files whose earlier content was never kept (ignored paths): left as they are."""
    conflicts: tuple[str, ...] = ()
    """Files changed after the call; forcing the undo would overwrite them."""
