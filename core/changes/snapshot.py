"""The workspace index: what every file looked like, so a shell command's changes can be attributed to it.

File tools know what they touch; a Bash command does not.  The index holds,
per file or symlink of the workspace, its size, mtime, ctime, inode, mode
and the hash of its content (a link's target) in the blob store.
`changes_since(dirty)` looks at what may have changed (the paths a
watchdog observer marked dirty, or everything), stores the new contents
and returns the differences as `FileChange`s while bringing the index up
to date: creates, modifications, deletions, mode changes, links, and
renames (a file gone from one path and the same content appearing at
another).  Called right before a command it absorbs what others changed;
called right after, what it returns is the command's doing.  The first
call reads every file once.

Not stored, only reported (`stored=False`): paths the ignore rules exclude
and files over `MAX_CAPTURE_BYTES`; they cannot be restored.  Not indexed
at all: `.git` directories (an agent's commits are reported as git changes
instead) and anything that is neither a file nor a link.

Blocking (disk walks and reads): call it off the loop thread, one call at a
time.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

from core.changes.ignore import IgnoreRules
from core.models.records import ChangeKind, FileChange
from core.paths import Workspace
from core.store.blobs import BlobBatch, BlobStore
from core.store.fsio import MAX_CAPTURE_BYTES

SKIPPED_DIRS = frozenset({".git"})


@dataclass(frozen=True)
class Entry:
    """One file or link as last seen."""

    size: int
    mtime_ns: int
    ctime_ns: int
    ino: int
    mode: int
    digest: str | None
    """Blob of the content (a link's target); None when it is not stored (ignored, too large)."""
    link: bool = False

    def same_stat(self, st: os.stat_result) -> bool:
        return (self.size, self.mtime_ns, self.ctime_ns, self.ino, self.mode) == (
            st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, stat.S_IMODE(st.st_mode))


class WorkspaceIndex:
    """Every file and link of a workspace, by relative path, with its content in the blob store."""

    def __init__(self, workspace: Workspace, blobs: BlobStore, ignore: IgnoreRules | None = None) -> None:
        self.workspace, self.blobs = workspace, blobs
        self.ignore_extra: tuple[str, ...] = ()
        """Ignore patterns from settings, kept for reloading the rules when an ignore file changes."""
        self.ignore = ignore if ignore is not None else IgnoreRules.load(workspace.root)
        self.entries: dict[str, Entry] = {}
        self.built = False

    def changes_since(self, dirty: Iterable[str] | None = None) -> list[FileChange]:
        """What changed on disk since the last call: among `dirty` paths (files or whole directories),
        or anywhere when `dirty` is None.  The first call takes the workspace as it is and returns []."""
        if not self.built:
            dirty = None
        scope = None if dirty is None else sorted(set(dirty))
        if scope is not None and self.ignore.reload_needed(scope):
            self.ignore = IgnoreRules.load(self.workspace.root, self.ignore_extra)
        seen = dict(self._walk(scope))
        known = self.entries if scope is None else _within(self.entries, scope, str(self.workspace.root))
        changes: list[FileChange] = []
        with self.blobs.batch() as batch:  # durable, all at once, before any journal row refers to them
            for rel, st in seen.items():
                old = self.entries.get(rel)
                reread = scope is not None and rel in scope  # marked dirty: the stat may not show the change
                if old is None or reread or not old.same_stat(st):
                    self._compare(rel, st, old, batch, changes)
        for rel in [r for r in known if r not in seen]:
            old = self.entries.pop(rel)
            changes.append(FileChange(path=rel, kind=ChangeKind.DELETE, before_hash=old.digest, after_hash=None,
                                      before_mode=old.mode, before_link=old.link, stored=old.digest is not None))
        first, self.built = not self.built, True
        return [] if first else _pair_renames(sorted(changes, key=lambda c: c.path))

    def expect(self, written: Mapping[str, str | None]) -> list[FileChange]:
        """Take in files Belay itself just wrote (path -> content hash, None for removed).

        Returns what differs from what Belay wrote: someone else's change, made meanwhile.
        """
        if not self.built:
            return []
        found = self.changes_since(written)
        surprises = []
        for change in found:
            meant = written.get(change.path)
            if change.after_hash == meant and change.stored:
                continue
            surprises.append(change.model_copy(update={"before_hash": meant}) if change.path in written else change)
        return surprises

    def differences_from(self, known: dict[str, str | None]) -> list[FileChange]:
        """How the indexed workspace differs from `known` (path -> content hash, None for absent).

        Used after a restart: `known` is what the journal last recorded, the index what is on disk now.
        Paths the journal never knew are not reported: nothing says who made them.
        """
        changes = []
        for rel, digest in sorted(known.items()):
            now = self.entries.get(rel)
            if now is not None and now.digest is None:
                continue  # not stored: nothing to compare
            if now is not None and digest is None:
                changes.append(FileChange(path=rel, kind=ChangeKind.CREATE, before_hash=None, after_hash=now.digest,
                                          after_mode=now.mode, after_link=now.link))
            elif now is None and digest is not None:
                changes.append(FileChange(path=rel, kind=ChangeKind.DELETE, before_hash=digest, after_hash=None))
            elif now is not None and digest is not None and now.digest != digest:
                changes.append(FileChange(path=rel, kind=ChangeKind.MODIFY, before_hash=digest, after_hash=now.digest,
                                          after_mode=now.mode, after_link=now.link))
        return changes

    def _compare(self, rel: str, st: os.stat_result, old: Entry | None, batch: BlobBatch,
                 changes: list[FileChange]) -> None:
        new = self._capture(rel, st, batch)
        if new is None:
            return
        self.entries[rel] = new
        stored = new.digest is not None and (old is None or old.digest is not None)
        if old is None:
            changes.append(FileChange(path=rel, kind=ChangeKind.CREATE, before_hash=None, after_hash=new.digest,
                                      after_mode=new.mode, after_link=new.link, stored=new.digest is not None))
        elif not stored and (old.size, old.mtime_ns, old.ino) != (new.size, new.mtime_ns, new.ino):
            changes.append(FileChange(path=rel, kind=ChangeKind.MODIFY, before_hash=old.digest,
                                      after_hash=new.digest, before_mode=old.mode, after_mode=new.mode,
                                      stored=False))
        elif stored and (old.digest != new.digest or old.link != new.link):
            changes.append(FileChange(path=rel, kind=ChangeKind.MODIFY, before_hash=old.digest, after_hash=new.digest,
                                      before_mode=old.mode, after_mode=new.mode, before_link=old.link,
                                      after_link=new.link))
        elif old.mode != new.mode and not new.link:
            changes.append(FileChange(path=rel, kind=ChangeKind.MODE, before_hash=old.digest, after_hash=new.digest,
                                      before_mode=old.mode, after_mode=new.mode, stored=stored))

    def _capture(self, rel: str, st: os.stat_result, batch: BlobBatch) -> Entry | None:
        """Reads one file (or link) into the blob store; None when it vanished meanwhile."""
        path = os.path.join(self.workspace.root, rel)
        if stat.S_ISLNK(st.st_mode):
            try:
                target = os.fsencode(os.readlink(path))
            except OSError:
                return None
            return Entry(st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, stat.S_IMODE(st.st_mode),
                         batch.put(target), link=True)
        if st.st_size > MAX_CAPTURE_BYTES or self.ignore.ignored(rel):
            return _unstored(st)
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError:
            return None
        try:
            now = os.fstat(fd)
            if not stat.S_ISREG(now.st_mode) or now.st_size > MAX_CAPTURE_BYTES:
                return _unstored(now) if stat.S_ISREG(now.st_mode) else None
            data = _read_all(fd, now.st_size)
        finally:
            os.close(fd)
        if len(data) > MAX_CAPTURE_BYTES:
            return _unstored(now)
        return Entry(now.st_size, now.st_mtime_ns, now.st_ctime_ns, now.st_ino, stat.S_IMODE(now.st_mode),
                     batch.put(data))

    def _walk(self, scope: list[str] | None) -> Iterator[tuple[str, os.stat_result]]:
        """(relative path, lstat) of every file and link in scope (everything when None)."""
        root = str(self.workspace.root)
        if scope is None:
            yield from _walk_tree(root, root)
            return
        for rel in _outermost(scope):
            if any(part in SKIPPED_DIRS for part in rel.split("/")):
                continue
            path = os.path.join(root, rel)
            try:
                st = os.lstat(path)
            except OSError:
                continue  # gone: entries under it are reported deleted
            if stat.S_ISDIR(st.st_mode):
                yield from _walk_tree(root, path)
            elif stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode):
                yield rel, st

    def __repr__(self) -> str:
        return f"<WorkspaceIndex {self.workspace.root} files={len(self.entries)} built={self.built}>"


def _walk_tree(root: str, top: str) -> Iterator[tuple[str, os.stat_result]]:
    """Files and links under `top`, without following links, with an explicit stack."""
    cut = len(root) + 1  # the paths scandir builds start with the root and a separator
    stack = [top]
    while stack:
        directory = stack.pop()
        try:
            with os.scandir(directory) as it:
                items = list(it)
        except OSError:
            continue  # vanished or unreadable: its files are reported as deleted only if they were indexed
        for item in items:
            try:
                st = item.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISDIR(st.st_mode):
                if item.name not in SKIPPED_DIRS:
                    stack.append(item.path)
            elif stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode):
                yield item.path[cut:], st


def _outermost(paths: list[str]) -> list[str]:
    """Sorted paths with those inside another one of them dropped (walking the outer one covers them)."""
    kept: list[str] = []
    for rel in paths:
        if rel in ("", "."):
            return [""]
        if not kept or not rel.startswith(kept[-1] + "/"):
            kept.append(rel)
    return kept


def _within(entries: dict[str, Entry], scope: list[str], root: str) -> dict[str, Entry]:
    """The entries at or under the scope's paths."""
    outer = _outermost(scope)
    if outer == [""]:
        return entries
    found = {rel: entries[rel] for rel in outer if rel in entries}
    # A path that is (or was) a directory has entries under it; a file just created has none, and
    # looking through every entry for it would cost as much as the walk the dirty set saves.
    dirs = tuple(rel + "/" for rel in outer if rel not in entries and not _is_file(os.path.join(root, rel)))
    if dirs:
        found.update((rel, e) for rel, e in entries.items() if rel.startswith(dirs))
    return found


def _is_file(path: str) -> bool:
    try:
        return not stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def _unstored(st: os.stat_result) -> Entry:
    return Entry(st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, stat.S_IMODE(st.st_mode), None)


def _read_all(fd: int, size: int) -> bytes:
    chunks = [os.read(fd, size + 1 if size else 65536)]
    while chunks[-1] and sum(map(len, chunks)) <= MAX_CAPTURE_BYTES:
        chunks.append(os.read(fd, 1 << 20))
    return b"".join(chunks)


def _pair_renames(changes: list[FileChange]) -> list[FileChange]:
    """A deletion and a creation of the same stored content (or link) in one look are a rename."""
    created: dict[tuple[str, bool], list[int]] = {}
    for i, c in enumerate(changes):
        if c.kind is ChangeKind.CREATE and c.stored and c.after_hash is not None:
            created.setdefault((c.after_hash, c.after_link), []).append(i)
    renamed: dict[int, FileChange] = {}
    gone: set[int] = set()
    for i, c in enumerate(changes):
        if c.kind is not ChangeKind.DELETE or not c.stored or c.before_hash is None:
            continue
        candidates = created.get((c.before_hash, c.before_link))
        if candidates:
            j = candidates.pop(0)
            new = changes[j]
            renamed[j] = FileChange(path=new.path, old_path=c.path, kind=ChangeKind.RENAME,
                                    before_hash=c.before_hash, after_hash=new.after_hash, before_mode=c.before_mode,
                                    after_mode=new.after_mode, before_link=c.before_link, after_link=new.after_link)
            gone.add(i)
    return [renamed.get(i, c) for i, c in enumerate(changes) if i not in gone]
