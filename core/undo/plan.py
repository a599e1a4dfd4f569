"""Undo of one operation: what each file needs, merged with later edits, written all or nothing.

For each change (newest first) the file is looked at as it is now:
- it holds what the operation left: restore what was there before;
- it already holds that: nothing to do;
- it changed since: a three-way merge like `git revert` (base: what the
  operation left, ours: the file now, theirs: what was there before).  A
  clean merge keeps the later edits and drops the operation's; anything
  else is a conflict, which the person resolves (overwrite, skip, or their
  own merged text) or which refuses the undo: later work is never thrown
  away silently.
Renames are moved back, modes restored, links re-made, binary files
restored byte for byte.  Paths the ignore rules excluded were never stored
and are left alone.

Applying stores every content it replaces (so the undo can itself be
undone), journals the undo as pending, then writes through
`core.store.restore` (all files or none) and the caller marks it done.
Blocking: run it off the loop.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from core.errors import ErrorKind, ToolError, UndoConflict
from core.models.records import ChangeKind, FileChange
from core.paths import Workspace
from core.store import fsio
from core.store.blobs import BlobStore, content_hash
from core.store.fsio import MAX_CAPTURE_BYTES
from core.store.restore import Chmod, FileOp, Put, Remove, apply_all
from core.undo.merge import merge3
from core.undo.report import FilePreview, Resolution, UndoPreview

Action = Literal["restore", "already", "merged", "conflict", "unrestorable"]


@dataclass(frozen=True)
class Seen:
    """What is at a path now."""

    exists: bool
    link: bool = False
    digest: str | None = None
    mode: int | None = None
    data: bytes | None = None
    """The file's bytes or the link's target, kept for merging and so the undo can be undone."""
    other: str = ""
    """Set when something that is neither a file nor a link is there ("a directory")."""

    def holds(self, digest: str | None, link: bool, mode: int | None = None) -> bool:
        if digest is None:
            return not self.exists
        return (self.exists and not self.other and self.link == link and self.digest == digest
                and (mode is None or self.mode == mode))


ABSENT = Seen(exists=False)


@dataclass(frozen=True)
class FilePlan:
    """One change of the operation and what undoing it needs."""

    seq: int
    """Position of the change in the operation (what the journal links the undo to)."""
    change: FileChange
    action: Action
    now: Seen
    reason: str = ""
    merged: bytes | None = None
    """The merged content: clean for "merged", with conflict markers for a text "conflict"."""
    now_old: Seen = ABSENT
    """For a rename: what is at its old path now."""


@dataclass(frozen=True)
class UndoPlan:
    op_id: str
    files: tuple[FilePlan, ...]
    """Newest change first, the order they are undone in."""

    @property
    def conflicts(self) -> list[FilePlan]:
        return [f for f in self.files if f.action == "conflict"]


@dataclass(frozen=True)
class Applied:
    """What an applied undo did, per path."""

    written: tuple[str, ...]
    merged: tuple[str, ...]
    skipped: tuple[str, ...]
    unrestorable: tuple[str, ...]
    already: tuple[str, ...]


# -- planning ---------------------------------------------------------------


def plan_undo(ws: Workspace, blobs: BlobStore, op_id: str, changes: Sequence[tuple[int, FileChange]]) -> UndoPlan:
    """Look at every file the changes touched and decide what undoing each needs."""
    return UndoPlan(op_id, tuple(_plan_one(ws, blobs, seq, c) for seq, c in reversed(changes)))


def _plan_one(ws: Workspace, blobs: BlobStore, seq: int, c: FileChange) -> FilePlan:
    if not c.stored:
        return FilePlan(seq, c, "unrestorable", ABSENT, "ignored by the workspace's ignore rules: its content "
                        "was not kept")
    if c.before_hash is not None and not blobs.has(c.before_hash):
        return FilePlan(seq, c, "unrestorable", ABSENT, "its earlier content is missing from the blob store")
    now = look(ws, c.path)
    if c.kind is ChangeKind.RENAME and c.old_path is not None:
        old = look(ws, c.old_path)
        if not now.exists and old.holds(c.before_hash, c.before_link):
            return FilePlan(seq, c, "already", now, now_old=old)
        if now.holds(c.after_hash, c.after_link) and not old.exists:
            return FilePlan(seq, c, "restore", now, now_old=old)
        why = f"{c.old_path} exists again" if old.exists else _changed_since(c, now)
        return FilePlan(seq, c, "conflict", now, why, now_old=old)
    modes = c.kind is ChangeKind.MODE
    if now.holds(c.before_hash, c.before_link, c.before_mode if modes else None):
        return FilePlan(seq, c, "already", now)
    if now.holds(c.after_hash, c.after_link, c.after_mode if modes else None):
        return FilePlan(seq, c, "restore", now)
    return _merge_or_conflict(blobs, seq, c, now)


def _merge_or_conflict(blobs: BlobStore, seq: int, c: FileChange, now: Seen) -> FilePlan:
    why = _changed_since(c, now)
    texts = not (c.before_link or c.after_link or now.link or now.other)
    if not texts or c.before_hash is None or c.after_hash is None or now.data is None:
        return FilePlan(seq, c, "conflict", now, why)
    result = merge3(blobs.get(c.after_hash), now.data, blobs.get(c.before_hash))
    if result is None:
        return FilePlan(seq, c, "conflict", now, why + " (not text: it cannot be merged)")
    if result.clean:
        return FilePlan(seq, c, "merged", now, "changed since this call; the later edits are kept",
                        merged=result.content)
    return FilePlan(seq, c, "conflict", now, why + " and the later edits overlap what the undo restores",
                    merged=result.content)


def _changed_since(c: FileChange, now: Seen) -> str:
    if now.other:
        return f"it is now {now.other}"
    if not now.exists:
        return "it was deleted after this call"
    if c.after_hash is None:
        return "it was created again after this call"
    return "it changed after this call"


def look(ws: Workspace, rel: str) -> Seen:
    """What is at a workspace path now, read without following links."""
    path = Path(os.path.normpath(os.path.join(ws.root, rel)))
    st = fsio.stat_path(ws, path)
    if st is None:
        return ABSENT
    if stat.S_ISLNK(st.st_mode):
        with fsio.parent_dir(ws, path) as (dfd, name):
            target = os.fsencode(os.readlink(name, dir_fd=dfd))
        return Seen(True, True, content_hash(target), None, target)
    if not stat.S_ISREG(st.st_mode):
        return Seen(True, other="a directory" if stat.S_ISDIR(st.st_mode) else "a special file")
    if st.st_size > MAX_CAPTURE_BYTES:
        return Seen(True, digest="", mode=stat.S_IMODE(st.st_mode))  # too large to compare: never a match
    data, st = fsio.read_with_stat(ws, path, MAX_CAPTURE_BYTES)
    return Seen(True, False, content_hash(data), stat.S_IMODE(st.st_mode), data)


# -- applying ---------------------------------------------------------------


def apply_undo(ws: Workspace, blobs: BlobStore, plan: UndoPlan, resolutions: Mapping[str, Resolution],
               force: bool, record: Callable[[list[tuple[int, FileChange]]], None]) -> Applied:
    """Resolve, store what will be replaced, journal through `record`, then write everything or nothing."""
    decided = [_decide(f, resolutions, force) for f in plan.files]
    unresolved = [f.change.path for f, d in zip(plan.files, decided) if d == "ask"]
    if unresolved:
        raise UndoConflict(f"{', '.join(unresolved)} changed after this call; undoing it would overwrite those "
                           "changes.", unresolved)
    ops: list[FileOp] = []
    inverse: list[FileOp | None] = []
    own: list[tuple[int, FileChange]] = []
    with blobs.batch() as batch:
        for f, decision in zip(plan.files, decided):
            if isinstance(decision, bytes) or decision == "restore":
                content = decision if isinstance(decision, bytes) else None
                step_ops, change = _ops_for(blobs, f, content)
                for data in _replaced(f):
                    batch.put(data)
                if content is not None:
                    batch.put(content)
                ops += step_ops
                inverse += [_inverse_op(f, op) for op in step_ops]
                own.append((f.seq, change))
            elif decision == "already":
                own.append((f.seq, _noop(f)))
    record(own)
    apply_all(ws, ops, inverse)
    return _applied(plan, decided)


Decision = Literal["restore", "already", "skip", "unrestorable", "ask"] | bytes


def _decide(f: FilePlan, resolutions: Mapping[str, Resolution], force: bool) -> Decision:
    if f.action in ("already", "unrestorable"):
        return f.action
    if f.action == "restore":
        return "restore"
    if f.action == "merged":
        assert f.merged is not None
        return f.merged
    chosen = resolutions.get(f.change.path)
    if chosen is None:
        return "restore" if force else "ask"
    if chosen.seen_digest is not None and chosen.seen_digest != (f.now.digest or ""):
        raise ToolError(ErrorKind.CONFLICT, f"{f.change.path} changed again while the undo was being decided; "
                        "nothing was undone.", "Undo again to see it as it is now.")
    if chosen.action == "skip":
        return "skip"
    if chosen.action == "merge":
        if f.change.kind is ChangeKind.RENAME:
            raise ToolError(ErrorKind.INVALID_ARGS, f"{f.change.path} was renamed: it can be moved back or "
                            "skipped, not merged.", "Choose overwrite or skip for it.")
        return (chosen.content or "").encode()
    return "restore"


def _ops_for(blobs: BlobStore, f: FilePlan, content: bytes | None) -> tuple[list[FileOp], FileChange]:
    """The writes that undo one change, and the change that undo makes (so it can be undone in turn)."""
    c, now = f.change, f.now
    if c.kind is ChangeKind.RENAME and c.old_path is not None and content is None:
        data = blobs.get(c.before_hash) if c.before_hash else b""
        ops: list[FileOp] = [Put(c.old_path, data, c.before_mode, c.before_link)]
        ops += [Remove(c.path)] if now.exists else []
        return ops, FileChange(path=c.old_path, old_path=c.path, kind=ChangeKind.RENAME, before_hash=now.digest,
                               after_hash=c.before_hash, before_mode=now.mode, after_mode=c.before_mode,
                               before_link=now.link, after_link=c.before_link)
    if content is not None:
        op: FileOp = Put(c.path, content, now.mode)
        after, after_mode, after_link = content_hash(content), now.mode, False
    elif c.before_hash is None:
        op, after, after_mode, after_link = Remove(c.path), None, None, False
    elif c.kind is ChangeKind.MODE and now.holds(c.before_hash, c.before_link) and c.before_mode is not None:
        op, after, after_mode, after_link = Chmod(c.path, c.before_mode), c.before_hash, c.before_mode, False
    else:
        mode = c.before_mode if c.before_mode is not None else now.mode
        op = Put(c.path, blobs.get(c.before_hash), mode, c.before_link)
        after, after_mode, after_link = c.before_hash, mode, c.before_link
    ops = [op] if now.exists or not isinstance(op, Remove) else []
    return ops, FileChange(path=c.path, kind=_kind(now, after, after_mode), before_hash=now.digest if now.exists
                           else None, after_hash=after, before_mode=now.mode, after_mode=after_mode,
                           before_link=now.link, after_link=after_link)


def _kind(now: Seen, after: str | None, after_mode: int | None) -> ChangeKind:
    if not now.exists:
        return ChangeKind.CREATE
    if after is None:
        return ChangeKind.DELETE
    if now.digest == after and now.mode != after_mode:
        return ChangeKind.MODE
    return ChangeKind.MODIFY


def _noop(f: FilePlan) -> FileChange:
    """An already-restored file: the undo changes nothing there, but counts it as undone."""
    renamed = f.change.kind is ChangeKind.RENAME and f.change.old_path is not None
    seen, path = (f.now_old, f.change.old_path or "") if renamed else (f.now, f.change.path)
    return FileChange(path=path, kind=ChangeKind.MODIFY, before_hash=seen.digest, after_hash=seen.digest,
                      before_mode=seen.mode, after_mode=seen.mode, before_link=seen.link, after_link=seen.link)


def _replaced(f: FilePlan) -> list[bytes]:
    """Contents this step overwrites or deletes: stored so that undoing the undo can bring them back."""
    return [seen.data for seen in (f.now, f.now_old) if seen.exists and seen.data is not None]


def _inverse_op(f: FilePlan, op: FileOp) -> FileOp | None:
    seen = f.now_old if f.change.old_path is not None and op.path == f.change.old_path else f.now
    if not seen.exists:
        return Remove(op.path)
    if seen.data is None:
        return None
    if isinstance(op, Chmod) and seen.mode is not None:
        return Chmod(op.path, seen.mode)
    return Put(op.path, seen.data, seen.mode, seen.link)


def _applied(plan: UndoPlan, decided: list[Decision]) -> Applied:
    def paths(*wanted: str) -> tuple[str, ...]:
        return tuple(f.change.path for f, d in zip(plan.files, decided)
                     if (d if not isinstance(d, bytes) else "bytes") in wanted)
    merged = tuple(f.change.path for f, d in zip(plan.files, decided) if isinstance(d, bytes))
    return Applied(written=paths("restore", "bytes"), merged=merged, skipped=paths("skip"),
                   unrestorable=paths("unrestorable"), already=paths("already"))


# -- previewing ---------------------------------------------------------------


def preview_of(plan: UndoPlan, blobs: BlobStore, call_id: str, redo: bool) -> UndoPreview:
    """The plan as the window shows it: the three versions of each file as text where they are text."""
    return UndoPreview(op_id=plan.op_id, call_id=call_id, redo=redo,
                       files=tuple(_file_preview(f, blobs) for f in plan.files))


def _file_preview(f: FilePlan, blobs: BlobStore) -> FilePreview:
    c = f.change
    renamed = c.kind is ChangeKind.RENAME
    versions = [_text(f.now.data if not f.now.link else None),
                _text(_blob(blobs, c.after_hash) if not c.after_link else None),
                _text(_blob(blobs, c.before_hash) if not c.before_link else None)]
    present = [f.now.exists, c.after_hash is not None, c.before_hash is not None]
    binary = any(shown and text is None for shown, text in zip(present, versions))
    return FilePreview(path=c.path, old_path=c.old_path if renamed else None, action=f.action, reason=f.reason,
                       now=versions[0], after_call=versions[1], before_call=versions[2],
                       merged=_text(f.merged), now_digest=f.now.digest or "", binary=binary)


def _blob(blobs: BlobStore, digest: str | None) -> bytes | None:
    if digest is None or not blobs.has(digest):
        return None
    return blobs.get(digest)


def _text(data: bytes | None, limit: int = 2_000_000) -> str | None:
    if data is None or len(data) > limit or b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None
