"""Writing an undo's files all or nothing: stage every file beside its target, then rename them in.

An undo may touch hundreds of files.  Writing them one by one would leave
half of them restored when the disk fills up or a directory turns out to
be read-only.  So the work happens in two phases: every new content is
first written (and fsynced) to a temporary name in the target's own
directory, and every directory that will lose a file is probed by
creating a file in it.  Only when all of that succeeded are the temporary
files renamed over their targets, which needs no space and cannot fail
for a lack of it.  A failure while staging removes what was staged and
leaves every file untouched; a failure while renaming (rare: the disk
went away) puts back what was already renamed, from the contents the
caller saved.

Paths are opened one component at a time without following links
(`core.store.fsio`), so a symlink swapped in cannot send a write outside the
workspace.  Blocking; run it off the loop.
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from core.errors import ErrorKind, ToolError
from core.paths import Workspace
from core.store import fsio
from core.store.blobs import sync_filesystem

_TEMP_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
ONE_SYNC_FROM = 8
"""From this many staged files on, one syncfs makes them all durable instead of an fsync each."""


@dataclass(frozen=True)
class Put:
    """Make `path` hold `data`: a regular file with `mode`, or (`link`) a symlink whose target is `data`."""

    path: str
    data: bytes
    mode: int | None = None
    link: bool = False


@dataclass(frozen=True)
class Remove:
    """Make `path` absent."""

    path: str


@dataclass(frozen=True)
class Chmod:
    """Give the regular file at `path` these permission bits."""

    path: str
    mode: int


FileOp = Put | Remove | Chmod


@dataclass
class _Staged:
    ops: list[FileOp]
    temps: dict[int, str] = field(default_factory=dict)
    """Position of a Put in `ops` -> its temporary name beside the target."""
    made_dirs: list[str] = field(default_factory=list)
    """Directories that staging created (deepest last), removed again if it fails."""


def apply_all(ws: Workspace, ops: Sequence[FileOp], inverse: Sequence[FileOp | None]) -> None:
    """Carry out `ops` in order, all or nothing.  `inverse[i]` undoes `ops[i]` (None: nothing to undo).

    Raises ToolError, saying nothing was changed, when a file cannot be staged.
    """
    staged = _Staged(list(ops))
    each = sum(isinstance(op, Put) for op in ops) < ONE_SYNC_FROM
    try:
        _stage(ws, staged, each)
        if not each and staged.temps:
            sync_filesystem(ws.root)  # every staged file on disk before any of them is renamed in
    except BaseException:
        _discard(ws, staged)
        raise
    done = 0
    touched: set[str] = set()
    try:
        for position, op in enumerate(staged.ops):
            _commit(ws, op, staged.temps.get(position))
            touched.add(os.path.dirname(op.path))
            done += 1
        for rel in sorted(touched):  # the renames and removals themselves made durable, once per directory
            _fsync_dir(ws, rel)
    except BaseException as e:
        _discard(ws, staged)
        _put_back(ws, [inverse[i] for i in range(done - 1, -1, -1)])
        if isinstance(e, OSError):
            raise _failed(ws, staged.ops[done].path, e, "replace", "The files already restored were put back.") from e
        raise


def _stage(ws: Workspace, staged: _Staged, fsync: bool) -> None:
    probed: set[str] = set()
    for position, op in enumerate(staged.ops):
        target = _abs(ws, op.path)
        try:
            if isinstance(op, Put):
                staged.made_dirs += _missing_dirs(ws, target)
                staged.temps[position] = _write_temp(ws, target, op, fsync)
            elif os.path.dirname(op.path) not in probed:
                _probe(ws, target)
                probed.add(os.path.dirname(op.path))
        except OSError as e:
            raise _failed(ws, op.path, e, "write", "") from None


def _write_temp(ws: Workspace, target: Path, op: Put, fsync: bool = True) -> str:
    with fsio.parent_dir(ws, target, create=True) as (dfd, name):
        if op.link:
            tmp = fsio.temp_name(name)
            os.symlink(os.fsdecode(op.data), tmp, dir_fd=dfd)
            return tmp
        return fsio.write_temp(dfd, name, op.data, op.mode, fsync)


def _probe(ws: Workspace, target: Path) -> None:
    """Prove the directory of `target` takes changes (not read-only, not full of inodes) by making a file."""
    with fsio.parent_dir(ws, target) as (dfd, name):
        probe = fsio.temp_name(name)
        os.close(os.open(probe, _TEMP_FLAGS, 0o600, dir_fd=dfd))
        os.unlink(probe, dir_fd=dfd)


def _commit(ws: Workspace, op: FileOp, temp: str | None) -> None:
    with fsio.parent_dir(ws, _abs(ws, op.path)) as (dfd, name):
        if isinstance(op, Put):
            assert temp is not None
            os.replace(temp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
        elif isinstance(op, Remove):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(name, dir_fd=dfd)
        else:
            fsio.change_mode(dfd, name, op.mode)  # a hard-linked file gets a copy: its other names keep their mode


def _fsync_dir(ws: Workspace, rel_dir: str) -> None:
    with fsio.parent_dir(ws, _abs(ws, os.path.join(rel_dir, "x"))) as (dfd, _):
        os.fsync(dfd)


def _discard(ws: Workspace, staged: _Staged) -> None:
    for position, temp in staged.temps.items():
        with contextlib.suppress(OSError, ToolError), fsio.parent_dir(ws, _abs(ws, staged.ops[position].path)) as (
                dfd, _):
            os.unlink(temp, dir_fd=dfd)
    staged.temps.clear()
    for rel in reversed(staged.made_dirs):
        with contextlib.suppress(OSError):
            os.rmdir(ws.root / rel)


def _put_back(ws: Workspace, inverse: Sequence[FileOp | None]) -> None:
    """Best effort: restore what a half-finished commit already replaced."""
    for op in inverse:
        if op is None:
            continue
        with contextlib.suppress(OSError, ToolError):
            temp = _write_temp(ws, _abs(ws, op.path), op) if isinstance(op, Put) else None
            _commit(ws, op, temp)
            _fsync_dir(ws, os.path.dirname(op.path))


def _missing_dirs(ws: Workspace, target: Path) -> list[str]:
    """The parents of `target` that do not exist yet, outermost first."""
    missing: list[str] = []
    parent = target.parent
    while parent != ws.root and not os.path.lexists(parent):
        missing.append(os.path.relpath(parent, ws.root))
        parent = parent.parent
    return list(reversed(missing))


def _abs(ws: Workspace, rel: str) -> Path:
    return Path(os.path.normpath(os.path.join(ws.root, rel)))


def _failed(ws: Workspace, rel: str, e: OSError, action: str, after: str) -> ToolError:
    error = fsio.os_error(ws, _abs(ws, rel), e, action)
    nothing = after or "Nothing was undone: every file is as it was."
    if e.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
        nothing += " Free some disk space, then undo again."
    return ToolError(error.kind if error.kind is not ErrorKind.NOT_FOUND else ErrorKind.SYSTEM,
                     f"{error.info.message}. {nothing}", error.info.suggestion)
