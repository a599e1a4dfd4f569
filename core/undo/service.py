"""Undo, redo and rewind as the console offers them: which changes, in what order, recorded how.

`core.undo.plan` decides what each file needs and writes them all or none;
`core.undo.git` moves git references back; this module picks the changes
of an operation that are still in force, runs both under the one-author
lock, records the undo (pending, then done or failed) and announces it.
A redo is the undo of the undos in force; a rewind undoes every later call,
newest first, and stops at the first refusal.

What an undo reads of the journal it reads through indexes (the operation,
its undos and theirs, the calls after a rewind's target), so one undo costs
the same after 20 calls as after 10,000 and a rewind grows with the calls it
undoes only (bench/undo.py; tests/core/undo/test_journal_size.py).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from core.changes.tracker import ChangeTracker
from core.errors import BelayError, ErrorKind, ToolError, UndoConflict
from core.events import RollbackFinished
from core.ids import CallId, RollbackId, new_rollback_id
from core.models.records import CallRecord, ChangeKind, FileChange, GitChange
from core.paths import Workspace
from core.recorder import Recorder
from core.store.blobs import BlobStore, DamagedBlob, MissingBlob
from core.store.journal import Journal
from core.store.journal_reads import JournalReads
from core.store.undone import Ref
from core.undo import git as undo_git
from core.undo import plan as undo_mod
from core.undo.report import Resolution, UndoPreview, UndoReport


@dataclass(frozen=True)
class UndoTarget:
    """An operation about to be undone, and which of its changes."""

    op_id: str
    call_id: CallId
    redo: bool
    changes: tuple[tuple[int, FileChange], ...]
    git: tuple[tuple[int, GitChange], ...] = ()
    """Reference moves, at negative positions (-1 for the first)."""


@dataclass(frozen=True)
class _Done:
    files: undo_mod.Applied
    refs: tuple[str, ...]
    refs_left: tuple[str, ...]


class Undoer:
    """Undo of one workspace's journaled operations."""

    def __init__(self, *, workspace: Workspace, recorder: Recorder, blobs: BlobStore,
                 tracker: Callable[[], ChangeTracker]) -> None:
        self.workspace, self.recorder, self.blobs = workspace, recorder, blobs
        self._tracker = tracker

    async def undo(self, op_id: str, *, paths: Sequence[str] | None = None, force: bool = False,
                   resolutions: Mapping[str, Resolution] | None = None) -> UndoReport:
        try:
            return await self._undo(op_id, paths, force, dict(resolutions or {}))
        except UndoConflict as e:
            root = await self.recorder.read(JournalReads.root_call, op_id)
            call_id = CallId(root or op_id)
            self.recorder.rollback_refused(call_id, e.info.message, e.paths)
            return UndoReport(call_id=call_id, ok=False, message=e.info.message, conflicts=tuple(e.paths))
        except BelayError as e:
            root = await self.recorder.read(JournalReads.root_call, op_id)
            call_id = CallId(root or op_id)
            self.recorder.rollback_refused(call_id, e.info.message)
            return UndoReport(call_id=call_id, ok=False, message=e.info.message)

    async def redo(self, call_id: str, *, paths: Sequence[str] | None = None) -> UndoReport:
        changes, git, undone, _ = await self.recorder.read(_operation, call_id)
        strangers = _untouched(call_id, "call", changes, paths) if paths is not None and changes else None
        if strangers:
            return UndoReport(call_id=call_id, ok=False, message=strangers)
        wanted = [i for i, c in enumerate(changes) if paths is None or c.path in paths or c.old_path in paths]
        wanted += [-1 - i for i in range(len(git))] if paths is None else []
        by_rollback: dict[str, list[int]] = {}
        for seq in wanted:
            if (call_id, seq) in undone:
                rollback_id, own = undone[(call_id, seq)]
                by_rollback.setdefault(rollback_id, []).append(own)
        if not by_rollback:
            return UndoReport(call_id=call_id, ok=False, message=f"call {call_id} has nothing undone to redo")
        report: UndoReport | None = None
        for rollback_id, positions in reversed(list(by_rollback.items())):
            rollback_changes = await self.recorder.read(JournalReads.changes_of, rollback_id)
            files = [rollback_changes[i].path for i in positions if 0 <= i < len(rollback_changes)]
            report = await self.undo(rollback_id, paths=files if paths is not None else None)
            if not report.ok:
                break
        assert report is not None
        return report

    async def preview(self, op_id: str, *, paths: Sequence[str] | None = None) -> UndoPreview:
        target = await self._target(op_id, paths)

        def build() -> UndoPreview:
            with _blob_problems():  # a damaged blob is a refusal the window shows, like the undo's own
                plan = undo_mod.plan_undo(self.workspace, self.blobs, op_id, target.changes)
                return undo_mod.preview_of(plan, self.blobs, target.call_id, target.redo)

        return await asyncio.to_thread(build)

    async def rewind_plan(self, call_id: str) -> list[CallRecord]:
        later = await self.recorder.read(JournalReads.calls_after, call_id)
        if later is None:
            raise ToolError(ErrorKind.NOT_FOUND, f"no call {call_id} in this workspace's journal")
        return [r for r in reversed(later) if any(c.restorable and c.path not in r.undone_paths for c in r.changes)]

    async def rewind(self, call_id: str) -> list[UndoReport]:
        reports: list[UndoReport] = []
        for record in await self.rewind_plan(call_id):
            report = await self.undo(record.call_id)
            reports.append(report)
            if not report.ok:
                break
        return reports

    # -- one undo ------------------------------------------------------------

    async def _target(self, op_id: str, paths: Sequence[str] | None) -> UndoTarget:
        """The changes of `op_id` that are in force (not undone already), limited to `paths`."""
        kind = await self.recorder.read(JournalReads.operation_kind, op_id)
        if kind is None:
            raise ToolError(ErrorKind.NOT_FOUND, f"no call or undo {op_id} in this workspace's journal")
        if kind == "external":
            raise ToolError(ErrorKind.INVALID_ARGS, "these changes were made outside Belay (by you or another "
                            "program); Belay records them but does not undo them")
        changes, git, undone, root = await self.recorder.read(_operation, op_id)
        call_id = CallId(root or op_id)
        if not changes and not git:
            spawned = await self.recorder.read(JournalReads.spawned_changes, op_id) if kind == "call" else []
            if spawned:  # an Agent call: its sub-agent's calls made the changes
                shown = ", ".join(spawned[:5]) + (f" and {len(spawned) - 5} more" if len(spawned) > 5 else "")
                raise ToolError(ErrorKind.NOT_FOUND, f"{op_id} changed no files itself; the sub-agent it started "
                                f"did, in {len(spawned)} call{'s' if len(spawned) != 1 else ''}: {shown}. Undo those, "
                                "newest first, or rewind to this call in the window (right-click it: Rewind to here…)")
            raise ToolError(ErrorKind.NOT_FOUND, f"{op_id} changed no files and moved no git references")
        strangers = _untouched(op_id, kind, changes, paths) if paths is not None else None
        if strangers:
            raise ToolError(ErrorKind.NOT_FOUND, strangers, "Give the paths relative to the workspace, as listed.")
        chosen = [(i, c) for i, c in enumerate(changes)
                  if (op_id, i) not in undone and (paths is None or c.path in paths or c.old_path in paths)]
        refs = [(-1 - i, g) for i, g in enumerate(git) if (op_id, -1 - i) not in undone] if paths is None else []
        if not chosen and not refs:
            what = f"those files of {op_id} were" if paths is not None else f"{op_id} was"
            raise ToolError(ErrorKind.CONFLICT, f"{what} already undone")
        return UndoTarget(op_id, call_id, kind == "rollback", tuple(chosen), tuple(refs))

    async def _undo(self, op_id: str, paths: Sequence[str] | None, force: bool,
                    resolutions: dict[str, Resolution]) -> UndoReport:
        target = await self._target(op_id, paths)
        await asyncio.to_thread(_check_blobs, self.blobs, target.changes)  # before the journal hears of it
        await self.recorder.session()
        rollback_id = new_rollback_id()
        tracker = self._tracker()
        async with tracker.mutation(f"undo of {op_id}"):
            done = await asyncio.to_thread(self._write, target, rollback_id, force, resolutions)
            await self.recorder.rollback_done(rollback_id)
            await tracker.absorb(await self.recorder.read(JournalReads.changes_of, rollback_id))
        return await self._finished(target, rollback_id, done, force)

    def _write(self, target: UndoTarget, rollback_id: RollbackId, force: bool,
               resolutions: dict[str, Resolution]) -> _Done:
        """Blocking: plan, record (pending), write the files all or none, then move the references."""
        try:
            with _blob_problems():
                plan = undo_mod.plan_undo(self.workspace, self.blobs, target.op_id, target.changes)
        except BelayError as e:
            self.recorder.write_from_worker(_failed, rollback_id, e.info.message)
            raise
        steps = undo_git.plan_refs(self.workspace.root, target.git, _all_back(plan)) if target.git else []
        moving = [s for s in steps if s.action == "restore"]
        own_git = [(s.seq, undo_git.inverse(s.change)) for s in moving]
        own_git += [(s.seq, _unmoved(s.change)) for s in steps if s.action == "already"]

        def record(own: list[tuple[int, FileChange]]) -> None:
            if not own and not own_git:
                raise ToolError(ErrorKind.CONFLICT, "every file was skipped or cannot be restored")
            self.recorder.write_from_worker(Journal.add_rollback, rollback_id, target.call_id, target.op_id, force, own,
                                            own_git)

        try:
            with _blob_problems():
                files = undo_mod.apply_undo(self.workspace, self.blobs, plan, resolutions, force, record)
            if moving:
                undo_git.apply_refs(self.workspace.root, moving)
        except BelayError as e:
            self.recorder.write_from_worker(_failed, rollback_id, e.info.message)
            raise
        left = tuple(f"{s.change.ref} ({s.reason})" for s in steps if s.action in ("conflict", "unrestorable"))
        return _Done(files, tuple(s.change.what for s in moving), left)

    async def _finished(self, target: UndoTarget, rollback_id: RollbackId, done: _Done, force: bool) -> UndoReport:
        record = await self.recorder.read(JournalReads.call_record, target.call_id)
        assert record is not None  # the undo was journaled against it
        applied = done.files
        self.recorder.rollback_finished(RollbackFinished(
            rollback_id=rollback_id, call_id=target.call_id, target=target.op_id, redo=target.redo,
            paths=applied.written, forced=force, undone_paths=record.undone_paths, undone_by=record.undone_by,
            git_undone=record.git_undone))
        verb = "Redid" if target.redo else "Restored"
        files = applied.written + applied.already
        kinds = {c.path: c.kind for _, c in target.changes}
        ending = ChangeKind.DELETE if target.redo else ChangeKind.CREATE  # what leaves a file gone now
        gone = [f for f in files if kinds.get(f) == ending]
        back = [f for f in files if kinds.get(f) != ending]
        parts = [f"{verb} {_files(back)}: {', '.join(back)}" if back else "",
                 f"{'Removed again' if target.redo else 'Removed'} {_files(gone)} the call had "
                 f"{'removed' if target.redo else 'created'}: {', '.join(gone)}" if gone else ""]
        if done.refs:
            parts.append(f"{'Moved forward' if target.redo else 'Moved back'}: {'; '.join(done.refs)} (files and "
                         "index left as they are)")
        if applied.merged:
            parts.append(f"Merged with later edits (kept): {', '.join(applied.merged)}")
        if applied.skipped:
            parts.append(f"Skipped, left as they are: {', '.join(applied.skipped)}")
        if applied.unrestorable:
            parts.append(f"Cannot be restored (ignored paths, contents not kept): {', '.join(applied.unrestorable)}")
        if done.refs_left:
            parts.append(f"Git references left alone: {'; '.join(done.refs_left)}")
        message = ". ".join(p for p in parts if p) or f"{verb} nothing"
        return UndoReport(call_id=target.call_id, ok=True, rollback_id=rollback_id, redo=target.redo, paths=files,
                          merged=applied.merged, skipped=applied.skipped, unrestorable=applied.unrestorable,
                          message=message)

    def __repr__(self) -> str:
        return f"<Undoer {self.workspace.root}>"


def _files(paths: Sequence[str]) -> str:
    return f"{len(paths)} file{'s' if len(paths) != 1 else ''}"


def _all_back(plan: undo_mod.UndoPlan) -> tuple[str, ...]:
    """Every path the undone changes name, when the undo puts each back as it was (no conflict, nothing that
    cannot be restored); else nothing: a checkout the call made is then undone only if it changed no file."""
    if not plan.files or any(f.action not in ("restore", "already") for f in plan.files):
        return ()
    return tuple(dict.fromkeys(p for f in plan.files for p in (f.change.old_path, f.change.path) if p))


def _operation(journal: JournalReads,
               op_id: str) -> tuple[list[FileChange], list[GitChange], dict[Ref, Ref], str | None]:
    """On the journal's thread, in one hop: an operation's changes, reference moves, which of them are undone
    now, and the call it belongs to."""
    return (journal.changes_of(op_id), journal.git_changes_of(op_id), journal.undo_state_of([op_id]),
            journal.root_call(op_id))


def _failed(journal: Journal, rollback_id: str, why: str) -> None:
    """An undo recorded as pending, then writing its files failed: it is marked so (if it was recorded)."""
    if journal.rollback_state(rollback_id) == "pending":
        journal.finish_rollback(rollback_id, "failed", why)


def _untouched(op_id: str, kind: str, changes: Sequence[FileChange], paths: Sequence[str]) -> str | None:
    """Files asked for that the operation never changed, named with the ones it did change; None if none."""
    touched = {c.path for c in changes} | {c.old_path for c in changes if c.old_path}
    strangers = [p for p in paths if p not in touched]
    if not strangers:
        return None
    what = "call" if kind == "call" else "undo"
    return f"{what} {op_id} did not change {', '.join(strangers)}; it changed: {', '.join(sorted(touched))}"


def _check_blobs(blobs: BlobStore, changes: Sequence[tuple[int, FileChange]]) -> None:
    """Every earlier content the undo puts back is there and whole, before anything is recorded or written.

    A missing or damaged blob is damage to Belay's store, not a choice the person made: the undo is
    refused as a whole, naming the file and the blob, rather than restoring the rest around a hole.
    """
    for _, change in changes:
        if change.stored and change.before_hash is not None:
            try:
                blobs.get(change.before_hash)
            except (DamagedBlob, MissingBlob) as e:
                raise _unreadable(e, change.old_path or change.path) from e


@contextmanager
def _blob_problems() -> Iterator[None]:
    """A blob found missing or damaged later on (a merge reads the call's own version) as a refusal."""
    try:
        yield
    except (DamagedBlob, MissingBlob) as e:
        raise _unreadable(e, None) from e


def _unreadable(error: DamagedBlob | MissingBlob, path: str | None) -> ToolError:
    whose = f"the earlier content of {path}" if path else "a content the undo needs"
    return ToolError(ErrorKind.SYSTEM, f"cannot undo: {whose} cannot be read from Belay's blob store ({error}); "
                     "nothing was changed", "The blob store was changed outside Belay; restore it from a backup "
                     "if there is one. Other calls can still be undone.", code="blob-unreadable")


def _unmoved(change: GitChange) -> GitChange:
    """A move already back where the undo would put it: recorded as undone, nothing to do."""
    return GitChange(ref=change.ref, kind="moved", before=change.before, after=change.before,
                     what=f"already back: {change.what}")
