"""Applying a write tool's plan with its change set captured for undo.

Order matters for durability: the before- and after-contents go into the
blob store (fsynced) first, then the change set is journaled, and only then
are the files written.  A console killed at any point leaves every file
either as it was or as planned, with a journal entry able to undo it.
"""

from __future__ import annotations

import stat
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from core.errors import ErrorKind, ToolError
from core.models.records import ChangeKind, FileChange
from core.paths import Workspace
from core.store import fsio
from core.store.blobs import BlobStore, content_hash
from core.tools.base import FileWrite, WritePlan


@dataclass(frozen=True)
class AppliedPlan:
    changes: tuple[FileChange, ...]


def replace_contents(plan: WritePlan, edited: dict[str, bytes], workspace: Workspace) -> WritePlan:
    """The plan with the person's edited content in place of the agent's."""
    writes = []
    for w in plan.writes:
        rel = workspace.relative(w.path)
        writes.append(FileWrite(w.path, w.before, edited[rel], w.mode) if rel in edited else w)
    return WritePlan(writes=tuple(writes), message=plan.message)


def apply_plan(workspace: Workspace, blobs: BlobStore, plan: WritePlan,
               record: Callable[[Sequence[FileChange]], None]) -> AppliedPlan:
    """Check, capture, journal (through `record`), then write.  Blocking."""
    changes = [_capture(workspace, blobs, w) for w in plan.writes]
    record(changes)
    for write in plan.writes:
        if write.after is None:
            fsio.remove_file(workspace, write.path)
        else:
            fsio.atomic_write(workspace, write.path, write.after, write.mode)
    return AppliedPlan(changes=tuple(changes))


def _capture(workspace: Workspace, blobs: BlobStore, write: FileWrite) -> FileChange:
    rel = workspace.relative(write.path)
    st = fsio.stat_path(workspace, write.path)
    current = fsio.read_if_exists(workspace, write.path, fsio.MAX_CAPTURE_BYTES)
    if current != write.before:
        raise ToolError(
            ErrorKind.CONFLICT,
            f"{rel} changed on disk after this call was prepared; nothing was written.",
            "Read the file again and redo the change.",
        )
    before_mode = stat.S_IMODE(st.st_mode) if st is not None else None
    before_hash = blobs.put(write.before) if write.before is not None else None
    after_hash = blobs.put(write.after) if write.after is not None else None
    if write.before is None:
        kind = ChangeKind.CREATE
    elif write.after is None:
        kind = ChangeKind.DELETE
    else:
        kind = ChangeKind.MODIFY
    after_mode = write.mode if write.mode is not None else before_mode
    return FileChange(path=rel, kind=kind, before_hash=before_hash, after_hash=after_hash,
                      before_mode=before_mode, after_mode=after_mode)


def current_hash(workspace: Workspace, rel: str) -> str | None:
    """Hash of a workspace file as it is now; None when it does not exist."""
    data = fsio.read_if_exists(workspace, workspace.resolve(str(workspace.root / rel)), fsio.MAX_CAPTURE_BYTES)
    return content_hash(data) if data is not None else None
