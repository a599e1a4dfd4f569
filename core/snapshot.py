"""The workspace index: what every file looked like, so a shell command's changes can be attributed to it.

File tools know what they touch; a Bash command does not.  The index holds,
per regular file of the workspace, its size, mtime, inode, mode and the
hash of its content in the blob store.  `changes_since` walks the workspace
(stat only), reads and stores just the files whose stat changed, and
returns the differences as `FileChange`s while bringing the index up to
date.  Called right before a command it absorbs what others changed
(returned as external changes, never the agent's); called right after, what
it returns is the command's doing.  The first call reads every file once.

Not indexed: `.git` directories (git's own database; an agent's commits are
git's business, not file contents to restore), anything that is not a
regular file (links, sockets...), and files over `MAX_CAPTURE_BYTES`, which
are listed in `too_large` instead: they cannot be restored.

Blocking (disk walks and reads): call it off the loop thread, one call at a
time.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass

from core.blobs import BlobBatch, BlobStore
from core.changes import MAX_CAPTURE_BYTES
from core.models import ChangeKind, FileChange
from core.paths import Workspace

SKIPPED_DIRS = frozenset({".git"})


@dataclass(frozen=True)
class Entry:
    """One file as last seen."""

    size: int
    mtime_ns: int
    ino: int
    mode: int
    digest: str

    def same_stat(self, st: os.stat_result) -> bool:
        return (self.size, self.mtime_ns, self.ino, self.mode) == (st.st_size, st.st_mtime_ns, st.st_ino,
                                                                  stat.S_IMODE(st.st_mode))


class WorkspaceIndex:
    """Every regular file of a workspace, by relative path, with its content in the blob store."""

    def __init__(self, workspace: Workspace, blobs: BlobStore) -> None:
        self.workspace, self.blobs = workspace, blobs
        self.entries: dict[str, Entry] = {}
        self.too_large: set[str] = set()
        self.built = False

    def changes_since(self) -> list[FileChange]:
        """What changed on disk since the last call (everything, the first time, is taken as it is)."""
        seen: dict[str, os.stat_result] = dict(self._walk())
        changes: list[FileChange] = []
        with self.blobs.batch() as batch:  # durable, all at once, before any journal row refers to them
            for rel, st in seen.items():
                old = self.entries.get(rel)
                if old is None or not old.same_stat(st):
                    self._compare(rel, st, old, batch, changes)
        for rel in [r for r in self.entries if r not in seen]:
            old = self.entries.pop(rel)
            changes.append(FileChange(path=rel, kind=ChangeKind.DELETE, before_hash=old.digest, after_hash=None,
                                      before_mode=old.mode))
        first, self.built = not self.built, True
        return [] if first else sorted(changes, key=lambda c: c.path)

    def differences_from(self, known: dict[str, str | None]) -> list[FileChange]:
        """How the indexed workspace differs from `known` (path -> content hash, None for absent).

        Used after a crash: `known` is what the journal last recorded, the index what is on disk now.
        Paths the journal never knew are not reported: nothing says who made them.
        """
        changes = []
        for rel, digest in sorted(known.items()):
            now = self.entries.get(rel)
            if now is not None and digest is None:
                changes.append(FileChange(path=rel, kind=ChangeKind.CREATE, before_hash=None, after_hash=now.digest,
                                          after_mode=now.mode))
            elif now is None and digest is not None and rel not in self.too_large:
                changes.append(FileChange(path=rel, kind=ChangeKind.DELETE, before_hash=digest, after_hash=None))
            elif now is not None and digest is not None and now.digest != digest:
                changes.append(FileChange(path=rel, kind=ChangeKind.MODIFY, before_hash=digest, after_hash=now.digest,
                                          after_mode=now.mode))
        return changes

    def _compare(self, rel: str, st: os.stat_result, old: Entry | None, batch: BlobBatch,
                 changes: list[FileChange]) -> None:
        new = self._capture(rel, st, batch)
        if new is None:
            return
        self.entries[rel] = new
        if old is None:
            changes.append(FileChange(path=rel, kind=ChangeKind.CREATE, before_hash=None, after_hash=new.digest,
                                      after_mode=new.mode))
        elif old.digest != new.digest or old.mode != new.mode:
            changes.append(FileChange(path=rel, kind=ChangeKind.MODIFY, before_hash=old.digest,
                                      after_hash=new.digest, before_mode=old.mode, after_mode=new.mode))

    def _capture(self, rel: str, st: os.stat_result, batch: BlobBatch) -> Entry | None:
        """Reads one file into the blob store; None when it is too large or vanished meanwhile."""
        if st.st_size > MAX_CAPTURE_BYTES:
            self.too_large.add(rel)
            return None
        path = os.path.join(self.workspace.root, rel)
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            return None
        try:
            now = os.fstat(fd)
            if not stat.S_ISREG(now.st_mode) or now.st_size > MAX_CAPTURE_BYTES:
                return None
            with os.fdopen(os.dup(fd), "rb") as f:
                data = f.read(MAX_CAPTURE_BYTES + 1)
        finally:
            os.close(fd)
        self.too_large.discard(rel)
        return Entry(now.st_size, now.st_mtime_ns, now.st_ino, stat.S_IMODE(now.st_mode), batch.put(data))

    def _walk(self) -> Iterator[tuple[str, os.stat_result]]:
        """(relative path, stat) of every regular file, without following links, with an explicit stack."""
        root = str(self.workspace.root)
        cut = len(root) + 1  # the paths scandir builds start with the root and a separator
        stack = [root]
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
                elif stat.S_ISREG(st.st_mode):
                    yield item.path[cut:], st

    def __repr__(self) -> str:
        return f"<WorkspaceIndex {self.workspace.root} files={len(self.entries)} built={self.built}>"
