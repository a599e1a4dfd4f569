"""Reading and atomically writing workspace files, checked by opening, not by string prefix.

`Workspace.resolve` checks a path once; a directory can be swapped for a
symlink between that check and the open.  So every function here starts
from a descriptor of the workspace root and opens the already-resolved path
one component at a time with O_NOFOLLOW.  A resolved path has no symlinks,
so meeting one means something changed underneath: the call is refused as
outside the workspace instead of following it.  All functions block; callers
run them off the event loop.

No write goes through an existing file's inode: contents are replaced by a
new file renamed over the name, and a mode change on a file with other
names (`change_mode`) does the same.  A regular file in the workspace with
st_nlink > 1 may be a hard link to a file outside it; replacing the
directory entry changes the workspace's name only, never the other one.
"""

from __future__ import annotations

import contextlib
import difflib
import errno
import os
import stat
from collections.abc import Iterator
from pathlib import Path

from core.errors import ErrorKind, ToolError
from core.paths import Workspace
from core.store.atomic_file import staging_name

DEFAULT_MAX_BYTES = 10 * 1024 * 1024
MAX_CAPTURE_BYTES = 64 * 1024 * 1024
"""The largest file whose contents Belay keeps for undo; larger ones are recorded but cannot be restored."""
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
_TEMP_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_CHUNK = 1024 * 1024


def read_with_stat(ws: Workspace, path: Path, max_bytes: int = DEFAULT_MAX_BYTES) -> tuple[bytes, os.stat_result]:
    """A regular file's bytes and its stat, both taken from the same open descriptor."""
    dir_parts, name = _split(ws, path)
    with _opened_dirs(ws, dir_parts, path) as dfd:
        fd = _open_file(ws, path, dfd, name)
    try:
        st = os.fstat(fd)
        _check_kind(ws, path, st)
        if st.st_size > max_bytes:
            raise _too_large(ws, path, st.st_size, max_bytes)
        return _read_all(ws, path, fd, max_bytes), st
    finally:
        os.close(fd)


def read_file(ws: Workspace, path: Path, max_bytes: int = DEFAULT_MAX_BYTES) -> bytes:
    """A regular file's bytes; directories, FIFOs, devices and oversized files are refused."""
    return read_with_stat(ws, path, max_bytes)[0]


def read_if_exists(ws: Workspace, path: Path, max_bytes: int = DEFAULT_MAX_BYTES) -> bytes | None:
    """Like `read_file`, but None when nothing exists at `path`."""
    try:
        return read_file(ws, path, max_bytes)
    except ToolError as e:
        if e.kind is ErrorKind.NOT_FOUND:
            return None
        raise


def stat_path(ws: Workspace, path: Path) -> os.stat_result | None:
    """The stat of what is at `path` (a symlink is not followed), or None when absent."""
    parts = _parts(ws, path)
    try:
        with _opened_dirs(ws, parts[:-1], path) as dfd:
            if not parts:
                return os.fstat(dfd)
            return os.stat(parts[-1], dir_fd=dfd, follow_symlinks=False)
    except FileNotFoundError:
        return None
    except ToolError as e:
        # A missing parent, or a file where a parent directory should be: nothing is there.
        if e.kind in (ErrorKind.NOT_FOUND, ErrorKind.INVALID_ARGS):
            return None
        raise
    except OSError as e:
        raise _os_error(ws, path, e, "inspect") from None


def atomic_write(ws: Workspace, path: Path, data: bytes, mode: int | None = None) -> None:
    """Replace (or create) a file so that readers see the old or the new bytes, never a mix.

    Missing parent directories are created.  `mode` None keeps the existing
    file's permission bits, or gives a new file 0o644 less the umask.
    """
    dir_parts, name = _split(ws, path)
    try:
        with _opened_dirs(ws, dir_parts, path, create=True) as dfd:
            existing = _lstat_or_none(dfd, name)
            if existing is not None:
                _check_kind(ws, path, existing)
            keep = mode if mode is not None else (stat.S_IMODE(existing.st_mode) if existing else None)
            _replace(dfd, name, data, keep)
    except OSError as e:
        raise _os_error(ws, path, e, "write") from None


def change_mode(dfd: int, name: str, mode: int) -> None:
    """Give the regular file `name` (in the directory `dfd`) the permission bits `mode`, durably.

    A file with one name is changed in place.  A file with other names
    (hard links, perhaps outside the workspace) is copied to a new file with
    `mode` that replaces this name: chmod on the shared inode would change
    the other names too.
    """
    fd = os.open(name, _FILE_FLAGS, dir_fd=dfd)
    try:
        st = os.fstat(fd)
        if st.st_nlink <= 1 or not stat.S_ISREG(st.st_mode):
            os.fchmod(fd, mode)
            os.fsync(fd)
            return
        data = b"".join(iter(lambda: os.read(fd, _CHUNK), b""))
    finally:
        os.close(fd)
    _replace(dfd, name, data, mode)


def remove_file(ws: Workspace, path: Path) -> None:
    """Delete a regular file and make the removal durable."""
    dir_parts, name = _split(ws, path)
    try:
        with _opened_dirs(ws, dir_parts, path) as dfd:
            existing = _lstat_or_none(dfd, name)
            if existing is None:
                raise ToolError(ErrorKind.NOT_FOUND, f"{ws.relative(path)} does not exist",
                                "Nothing to delete; check the path.")
            _check_kind(ws, path, existing)
            os.unlink(name, dir_fd=dfd)
            os.fsync(dfd)
    except OSError as e:
        raise _os_error(ws, path, e, "delete") from None


@contextlib.contextmanager
def open_dir(ws: Workspace, path: Path) -> Iterator[int]:
    """A descriptor of the directory at `path`, for scandir/fwalk relative to it; closed on exit."""
    with _opened_dirs(ws, _parts(ws, path), path) as fd:
        yield fd


@contextlib.contextmanager
def parent_dir(ws: Workspace, path: Path, create: bool = False) -> Iterator[tuple[int, str]]:
    """A descriptor of the directory holding `path` and the name within it (missing parents made if `create`).

    For work on the entry itself (replacing it, unlinking it, reading a link): nothing is followed.
    """
    dir_parts, name = _split(ws, path)
    with _opened_dirs(ws, dir_parts, path, create=create) as dfd:
        yield dfd, name


def temp_name(name: str) -> str:
    """A fresh hidden name beside `name` for a file that will be renamed over it."""
    return staging_name(name)


def write_temp(dfd: int, name: str, data: bytes, mode: int | None, fsync: bool = True) -> str:
    """Write `data` to a fresh hidden file beside `name` (in the directory `dfd`), to be renamed over it.

    `mode` None makes the file as a new file would be (0o644 less the umask);
    a given mode is set before anything else can open it.  Returns the name;
    on failure nothing is left behind.
    """
    tmp = staging_name(name)
    # A file that keeps existing bits is private until chmod; a new one may be created readable.
    fd = os.open(tmp, _TEMP_FLAGS, 0o644 if mode is None else 0o600, dir_fd=dfd)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            if mode is not None:
                os.fchmod(fd, mode)
            if fsync:
                os.fsync(fd)
        finally:
            os.close(fd)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp, dir_fd=dfd)
        raise
    return tmp


def os_error(ws: Workspace, path: Path, e: OSError, action: str) -> ToolError:
    """An OSError on `path` as a ToolError a person can act on ("no space left on the device"...)."""
    return _os_error(ws, path, e, action)


def list_dir(ws: Workspace, path: Path) -> list[tuple[str, bool]]:
    """(name, is_dir) of each entry; a symlink counts as a file, whatever it points to."""
    with open_dir(ws, path) as fd:
        try:
            with os.scandir(fd) as entries:
                return [(e.name, e.is_dir(follow_symlinks=False)) for e in entries]
        except OSError as e:
            raise _os_error(ws, path, e, "list") from None


def _parts(ws: Workspace, path: Path) -> tuple[str, ...]:
    text = os.fspath(path)
    root = os.fspath(ws.root)
    if not os.path.isabs(text) or os.path.normpath(text) != text or os.path.commonpath([root, text]) != root:
        raise ToolError(ErrorKind.OUTSIDE_WORKSPACE, f"{text} is not a resolved path inside the workspace"
                        f" {ws.root}", "Resolve the path with Workspace.resolve first.")
    rel = os.path.relpath(text, root)
    return () if rel == "." else tuple(rel.split(os.sep))


def _split(ws: Workspace, path: Path) -> tuple[tuple[str, ...], str]:
    parts = _parts(ws, path)
    if not parts:
        raise ToolError(ErrorKind.IS_DIRECTORY, "the workspace root is a directory, not a file",
                        "Name a file inside the workspace.")
    return parts[:-1], parts[-1]


@contextlib.contextmanager
def _opened_dirs(ws: Workspace, parts: tuple[str, ...], path: Path, create: bool = False) -> Iterator[int]:
    try:
        fd = os.open(ws.root, _DIR_FLAGS)
    except OSError as e:
        changed = e.errno in (errno.ELOOP, errno.ENOTDIR)
        raise (_changed(ws, path) if changed else _os_error(ws, path, e, "open")) from None
    try:
        for depth, name in enumerate(parts):
            child = _open_child_dir(ws, path, fd, name, create, os.path.join(*parts[: depth + 1]))
            os.close(fd)
            fd = child
        yield fd
    finally:
        os.close(fd)


def _open_child_dir(ws: Workspace, path: Path, fd: int, name: str, create: bool, shown: str) -> int:
    try:
        if create:
            # Another writer may create it first; either way it now exists.
            with contextlib.suppress(FileExistsError):
                os.mkdir(name, 0o777, dir_fd=fd)
        return os.open(name, _DIR_FLAGS, dir_fd=fd)
    except FileNotFoundError:
        raise _missing(ws, path, fd, name, shown) from None
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise _changed(ws, path) from None
        if e.errno == errno.ENOTDIR:
            raise _not_a_directory(ws, path, fd, name, shown) from None
        raise _os_error(ws, path, e, "open") from None


def _open_file(ws: Workspace, path: Path, dfd: int, name: str) -> int:
    # Looking before opening means a device node or FIFO is refused without being opened at all;
    # the fstat after opening catches anything swapped in between.
    try:
        _check_kind(ws, path, os.stat(name, dir_fd=dfd, follow_symlinks=False))
        return os.open(name, _FILE_FLAGS, dir_fd=dfd)
    except FileNotFoundError:
        raise _missing(ws, path, dfd, name, ws.relative(path)) from None
    except OSError as e:
        raise (_changed(ws, path) if e.errno == errno.ELOOP else _os_error(ws, path, e, "open")) from None


def _check_kind(ws: Workspace, path: Path, st: os.stat_result) -> None:
    rel = ws.relative(path)
    if stat.S_ISLNK(st.st_mode):
        raise _changed(ws, path)
    if stat.S_ISDIR(st.st_mode):
        raise ToolError(ErrorKind.IS_DIRECTORY, f"{rel} is a directory, not a file",
                        "Use LS or Glob to see what it contains.")
    if not stat.S_ISREG(st.st_mode):
        raise ToolError(ErrorKind.NOT_REGULAR_FILE, f"{rel} is a {_kind_name(st.st_mode)}, not a regular file",
                        "Only regular files can be read or written.")


def _kind_name(mode: int) -> str:
    for test, name in ((stat.S_ISFIFO, "FIFO (named pipe)"), (stat.S_ISSOCK, "socket"),
                       (stat.S_ISCHR, "character device"), (stat.S_ISBLK, "block device")):
        if test(mode):
            return name
    return "special file"


def _read_all(ws: Workspace, path: Path, fd: int, max_bytes: int) -> bytes:
    chunks: list[bytes] = []
    total = 0
    while chunk := os.read(fd, min(_CHUNK, max_bytes + 1 - total)):
        chunks.append(chunk)
        total += len(chunk)
        if total > max_bytes:  # it grew after the fstat
            raise _too_large(ws, path, total, max_bytes)
    return b"".join(chunks)


def _lstat_or_none(dfd: int, name: str) -> os.stat_result | None:
    try:
        return os.stat(name, dir_fd=dfd, follow_symlinks=False)
    except FileNotFoundError:
        return None


def _replace(dfd: int, name: str, data: bytes, mode: int | None) -> None:
    tmp = write_temp(dfd, name, data, mode)
    try:
        os.replace(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp, dir_fd=dfd)
        raise
    os.fsync(dfd)


def _changed(ws: Workspace, path: Path) -> ToolError:
    return ToolError(ErrorKind.OUTSIDE_WORKSPACE,
                     f"{ws.relative(path)} changed while it was being opened (a symlink appeared on its path)",
                     "Nothing outside the workspace was touched; check the path and retry.")


def _missing(ws: Workspace, path: Path, dfd: int, name: str, shown: str) -> ToolError:
    try:
        close = difflib.get_close_matches(name, os.listdir(dfd), n=3)
    except OSError:
        close = []
    hint = f"Did you mean {', '.join(repr(c) for c in close)}?" if close else "Check the path with LS or Glob."
    return ToolError(ErrorKind.NOT_FOUND, f"{shown} does not exist", hint)


def _not_a_directory(ws: Workspace, path: Path, fd: int, name: str, shown: str) -> ToolError:
    found = _lstat_or_none(fd, name)
    if found is None or stat.S_ISLNK(found.st_mode) or stat.S_ISDIR(found.st_mode):
        return _changed(ws, path)  # it was a symlink when opened, or it is changing under us
    return ToolError(ErrorKind.INVALID_ARGS, f"{shown} is a file, not a directory",
                     f"{ws.relative(path)} cannot exist under a file; check the path.")


def _too_large(ws: Workspace, path: Path, size: int, limit: int) -> ToolError:
    return ToolError(ErrorKind.TOO_LARGE, f"{ws.relative(path)} is at least {size:,} bytes; the limit is {limit:,}",
                     "Search it with Grep, or work on a smaller file.")


_ERRNO_TEXT = {
    errno.EACCES: (ErrorKind.PERMISSION, "permission denied", "Check the file's permissions."),
    errno.EPERM: (ErrorKind.PERMISSION, "operation not permitted", "Check the file's permissions and flags."),
    errno.EROFS: (ErrorKind.PERMISSION, "the file system is read-only", "Choose a writable location."),
    errno.ENOSPC: (ErrorKind.SYSTEM, "no space left on the device", "Free some disk space and retry."),
    errno.EDQUOT: (ErrorKind.SYSTEM, "the disk quota is exceeded", "Free some disk space and retry."),
    errno.EFBIG: (ErrorKind.SYSTEM, "the file is larger than the file size limit allows",
                  "Raise the limit (ulimit -f) or free space, and retry."),
    errno.EISDIR: (ErrorKind.IS_DIRECTORY, "it is a directory", "Name a file, not a directory."),
    errno.ENOENT: (ErrorKind.NOT_FOUND, "it does not exist", "Check the path with LS or Glob."),
    errno.ENAMETOOLONG: (ErrorKind.INVALID_ARGS, "the name is too long", "Use a shorter name."),
}


_BUSY = frozenset({errno.EAGAIN, errno.EBUSY, errno.EMFILE, errno.ENFILE, errno.EINTR, errno.ETXTBSY})


def _os_error(ws: Workspace, path: Path, e: OSError, action: str) -> ToolError:
    if e.errno == errno.ELOOP:
        return _changed(ws, path)
    if e.errno in _BUSY:
        return ToolError(ErrorKind.BUSY, f"could not {action} {ws.relative(path)}: {e.strerror or e}",
                         "Try again in a moment.", code=errno.errorcode.get(e.errno or 0, "EBUSY"))
    fallback = (ErrorKind.SYSTEM, e.strerror or str(e), "Retry; if it persists, check the disk and the path.")
    kind, reason, suggestion = _ERRNO_TEXT.get(e.errno or 0, fallback)
    code = errno.errorcode.get(e.errno or 0)
    return ToolError(kind, f"could not {action} {ws.relative(path)}: {reason}", suggestion, code=code)
