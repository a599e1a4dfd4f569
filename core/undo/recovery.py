"""Opening after a crash: finish what was cut short, and say what was found.

Three things can be left behind by a console killed with -9 (or a power cut):
- an undo recorded as pending whose files were not all written: it is
  finished (each file still holding what the undo replaced gets what the
  undo meant to write); a file that holds neither was changed by someone
  since and is left alone, and the undo no longer claims it;
- a shell command whose changes were never recorded: what differs on disk
  from the journal's last word is given to the last interrupted command;
- edits made while Belay was not running: recorded as external changes;
- a write killed between staging the new content and renaming it over the
  file: the staging file (`.<name>.belay-<pid>-<hex>.tmp`) is removed once
  its writer is gone; the file itself was never touched.
Each repair is a sentence in the returned notes, shown by the window.
"""

from __future__ import annotations

import asyncio
import logging
import posixpath
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

from core.changes.tracker import ChangeTracker
from core.errors import BelayError
from core.ids import CallId
from core.models.records import FileChange, RollbackRecord
from core.paths import Workspace
from core.recorder import Recorder
from core.store import fsio
from core.store.atomic_file import left_by_a_gone_writer
from core.store.blobs import BlobStore
from core.store.journal import Journal
from core.store.journal_reads import JournalReads
from core.store.restore import FileOp, Put, Remove, apply_all
from core.undo.plan import Seen, look

log = logging.getLogger(__name__)
T = TypeVar("T")


@dataclass(frozen=True)
class Opening:
    """What recovery works with, from the console being opened."""

    workspace: Workspace
    recorder: Recorder
    blobs: BlobStore
    tracker: ChangeTracker
    captures: Callable[[CallId], Awaitable[bool]]
    """Whether a call's tool finds its changes by comparing the workspace (Bash)."""


async def recover(opening: Opening, interrupted: list[CallId]) -> list[str]:
    notes = []
    staged = await asyncio.to_thread(_remove_staging, opening)
    if staged:
        notes.append(f"{len(staged)} write(s) were cut short; the files were left as they were, and the new "
                     f"content Belay had staged beside them was removed: {', '.join(staged)}.")
    index = opening.tracker.index
    recorder = opening.recorder
    for rollback in await recorder.read(JournalReads.rollbacks, "pending"):
        notes.append(await asyncio.to_thread(_finish_rollback, opening, rollback))
        touched = [p for c in rollback.changes for p in (c.path, c.old_path) if p is not None]
        await asyncio.to_thread(index.changes_since, touched)  # what it wrote is Belay's doing, not news
    changes = index.differences_from(await recorder.read(JournalReads.latest_contents))
    if not changes:
        return notes
    capturing = [c for c in interrupted if await opening.captures(c)]
    if capturing:
        await recorder.changes_recovered(capturing[-1], changes)
        notes.append(f"Call {capturing[-1]} was interrupted; the {len(changes)} file change(s) it made were "
                     "recovered and can be undone.")
    else:
        await recorder.external_changes(changes, "while Belay was not running")
        notes.append(f"{len(changes)} file(s) changed while Belay was not running; they are recorded as "
                     "changes made outside Belay.")
    for note in notes:
        log.warning("%s", note)
    return notes


def _remove_staging(opening: Opening) -> list[str]:
    """Blocking: remove the staging files of writers that are gone; the paths removed."""
    ws, index = opening.workspace, opening.tracker.index
    removed = []
    for rel in [r for r, e in index.entries.items() if not e.link and left_by_a_gone_writer(posixpath.basename(r))]:
        try:
            fsio.remove_file(ws, ws.root / rel)
        except BelayError as e:
            log.warning("could not remove the staging file %s: %s", rel, e.info.message)
            continue
        removed.append(rel)
    if removed:
        index.changes_since(removed)  # gone: not news (the journal never knew them)
    return removed


def _finish_rollback(opening: Opening, rollback: RollbackRecord) -> str:
    """Blocking: write what a pending undo had not written yet; mark it done (or failed)."""
    ws, blobs, recorder = opening.workspace, opening.blobs, opening.recorder
    kept: list[tuple[int, FileChange]] = []
    ops: list[FileOp] = []
    inverse: list[FileOp | None] = []
    left: list[str] = []
    for reverts, change in zip(rollback.reverts, rollback.changes):
        now = look(ws, change.path)
        old = look(ws, change.old_path) if change.old_path is not None else None
        if now.holds(change.after_hash, change.after_link) and (old is None or not old.exists):
            kept.append((reverts or 0, change))
        elif _not_yet(change, now, old):
            forward = _forward(blobs, change)
            ops += forward
            inverse += [_inverse(look(ws, op.path), op) for op in forward]
            kept.append((reverts or 0, change))
        else:
            left.append(change.path)
    try:
        apply_all(ws, ops, inverse)
    except BelayError as e:
        recorder.write_from_worker(Journal.finish_rollback, rollback.rollback_id, "failed", e.info.message)
        return (f"An undo of {rollback.call_id} was interrupted and could not be finished ({e.info.message}); "
                "its files are as they were before it.")
    recorder.write_from_worker(Journal.finish_rollback, rollback.rollback_id, "done", "finished after a restart", kept)
    note = f"An undo of {rollback.call_id} was interrupted by a crash and has been finished."
    if left:
        note += f" Changed since, so left as they are: {', '.join(left)}."
    return note


def _not_yet(change: FileChange, now: Seen, old: Seen | None) -> bool:
    """The file still holds what the undo was replacing."""
    if old is not None:  # a rename back: still at its later place, nothing yet at its first
        return old.holds(change.before_hash, change.before_link) and not now.exists
    return now.holds(change.before_hash, change.before_link)


def _forward(blobs: BlobStore, change: FileChange) -> list[FileOp]:
    ops: list[FileOp] = []
    if change.after_hash is None:
        ops.append(Remove(change.path))
    else:
        ops.append(Put(change.path, blobs.get(change.after_hash), change.after_mode, change.after_link))
    if change.old_path is not None:
        ops.append(Remove(change.old_path))
    return ops


def _inverse(now: Seen, op: FileOp) -> FileOp | None:
    """What puts a path back as it is now, should the finishing fail half-way."""
    if not now.exists:
        return Remove(op.path)
    return Put(op.path, now.data, now.mode, now.link) if now.data is not None else None
