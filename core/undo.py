"""Undo of one call: restore its before-contents, refusing to overwrite later work.

Planning is pure bookkeeping over hashes: for each file the call changed
(in reverse order) the file must still hold what the call left; if it
holds what was there before, it is already restored; anything else is a
conflict, reported unless the person forces the undo.  Applying writes
atomically and returns the undo's own change set, so an undo can itself be
recorded (and later undone).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from core import fsio
from core.blobs import BlobStore
from core.changes import MAX_CAPTURE_BYTES, current_hash
from core.errors import UndoConflict
from core.models import ChangeKind, FileChange
from core.paths import Workspace


@dataclass(frozen=True)
class UndoStep:
    change: FileChange
    now_hash: str | None
    """What the file holds now (None: absent)."""

    @property
    def already_restored(self) -> bool:
        return self.now_hash == self.change.before_hash

    @property
    def conflicting(self) -> bool:
        return not self.already_restored and self.now_hash != self.change.after_hash


def plan_undo(workspace: Workspace, changes: Sequence[FileChange], force: bool) -> list[UndoStep]:
    """The steps to undo `changes`, newest first.  Raises UndoConflict unless forced."""
    steps = [UndoStep(c, current_hash(workspace, c.path)) for c in reversed(changes)]
    conflicts = [s.change.path for s in steps if s.conflicting]
    if conflicts and not force:
        names = ", ".join(conflicts)
        raise UndoConflict(
            f"{names} changed after this call; undoing it would overwrite those changes.", conflicts)
    return steps


def apply_undo(workspace: Workspace, blobs: BlobStore, steps: Sequence[UndoStep],
               record: Callable[[Sequence[FileChange]], None]) -> list[FileChange]:
    """Write the before-contents back; `record` journals the undo's own change set first."""
    todo = [s for s in steps if not s.already_restored]
    for step in todo:
        if step.conflicting and step.now_hash is not None:
            # Forced over someone's later edit: keep that content so this undo can be undone.
            blobs.put(_read(workspace, step.change.path))
    undone = [_inverse(s) for s in todo]
    record(undone)
    for step in todo:
        c = step.change
        path = workspace.resolve(str(workspace.root / c.path))
        if c.before_hash is None:
            fsio.remove_file(workspace, path)
        else:
            fsio.atomic_write(workspace, path, blobs.get(c.before_hash), c.before_mode)
    return undone


def _inverse(step: UndoStep) -> FileChange:
    c = step.change
    if c.before_hash is None:
        kind = ChangeKind.DELETE
    elif step.now_hash is None:
        kind = ChangeKind.CREATE
    else:
        kind = ChangeKind.MODIFY
    return FileChange(path=c.path, kind=kind, before_hash=step.now_hash, after_hash=c.before_hash,
                      before_mode=c.after_mode, after_mode=c.before_mode)


def _read(workspace: Workspace, rel: str) -> bytes:
    data = fsio.read_if_exists(workspace, workspace.resolve(str(workspace.root / rel)), MAX_CAPTURE_BYTES)
    return data if data is not None else b""
