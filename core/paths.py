"""The workspace boundary: turning an agent's path into a real path inside it, or a clear refusal.

`Workspace.resolve` is the first of two checks.  It follows symlinks
(`realpath`) and compares whole components (`within`), never a bare string
prefix, so `/work/app2` is not inside `/work/app`.  It cannot stop a directory being
swapped for a symlink after the check; `core.store.fsio` closes that gap by opening
the resolved path one component at a time without following symlinks.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

from core.errors import ErrorKind, ToolError

MAX_PATH_BYTES = 4096
MAX_NAME_BYTES = 255

_LOOK: ContextVar[dict[str, str] | None] = ContextVar("belay_one_look", default=None)


@contextmanager
def one_look(seen: dict[str, str] | None = None) -> Iterator[dict[str, str]]:
    """While a call is named and judged, each path it names is resolved once (`realpath`).

    Its summary, its validation and the policy each resolved the same paths again, a walk of every component
    each time.  Within the block `realpath` remembers what it found; the block spans only one call's naming
    and judging in one task (in the pipeline, across the await that journals the call), and what runs the
    call resolves afresh (and `fsio` opens without following links), so a swap in between gains nothing.
    `seen`: the paths an earlier block of the same call resolved (it yields them), for a call named in one
    step and judged in the next."""
    seen = {} if seen is None else seen
    token = _LOOK.set(seen)
    try:
        yield seen
    finally:
        _LOOK.reset(token)


def one_slash(path: str) -> str:
    """`path` with a leading `//` read as `/`, as Linux reads it (`normpath` keeps it: POSIX leaves its meaning
    to the system)."""
    return "/" + path.lstrip("/") if path.startswith("//") else path


def within(path: str, root: str) -> bool:
    """Whether `path` is `root` or lies below it, component by component (`/work/app2` is not below
    `/work/app`).  Both absolute and normalised (`realpath`, `abspath` or `normpath`), as every caller passes
    them: what `os.path.commonpath` answers for such paths, in a fraction of its time.  A leading `//` is `/`
    (`one_slash`), as commonpath has it, or `//home/me/.ssh` would not be below `/home/me`."""
    path, root = one_slash(path), one_slash(root)
    return path == root or path.startswith(root if root.endswith(os.sep) else root + os.sep)


def settled_realpath(path: str | os.PathLike[str]) -> str | None:
    """`os.path.realpath`, or None when a link on the way vanished while it was followed (another process swapping
    it: Python 3.11's realpath raises then)."""
    try:
        return os.path.realpath(path)
    except OSError:
        return None


def realpath(path: str) -> str:
    """`os.path.realpath`, remembered inside `one_look`."""
    seen = _LOOK.get()
    if seen is None:
        return os.path.realpath(path)
    found = seen.get(path)
    if found is None:
        found = seen[path] = os.path.realpath(path)
    return found


class Workspace:
    """The directory an agent works in; every path a tool touches must lie inside it."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        real = os.path.realpath(root)
        if not os.path.isdir(real):
            raise ValueError(f"workspace root {os.fspath(root)!r} is not an existing directory")
        self.root = Path(real)
        self._root_str = real

    def resolve(self, raw: object, field: str = "file_path") -> Path:
        """The real path `raw` names, checked to lie inside the workspace.

        Relative paths are refused rather than guessed at: an agent that
        thinks it is in another directory would otherwise edit the wrong file.
        """
        return Path(self._real(raw, field))

    def _real(self, raw: object, field: str) -> str:
        text = self._checked_text(raw, field)
        try:
            real = realpath(text)
        except OSError:  # a symlink vanished between realpath's lstat and readlink
            raise ToolError(ErrorKind.OUTSIDE_WORKSPACE, f"{field} {raw!r} changed while it was being resolved",
                            "Check the path and retry.") from None
        if not self._inside(real):
            special = _special_kind(real)
            if special is not None:  # a link to a device or a pipe: no tool can use it, wherever it points
                raise ToolError(ErrorKind.NOT_REGULAR_FILE, f"{field} {raw!r} leads to {real}, {special}, "
                                "not a regular file", "Only regular files can be read or written.")
            raise ToolError(
                ErrorKind.OUTSIDE_WORKSPACE,
                f"{field} {raw!r} is outside the workspace {self._root_str}"
                + (f" (it resolves to {real})" if real != text else ""),
                f"Only paths under {self._root_str} can be used.",
            )
        return real

    def relative(self, path: str | os.PathLike[str]) -> str:
        """How to show `path` to a person: relative to the root, "." for the root itself."""
        text = os.path.abspath(path)
        if not self._inside(text):
            return text
        root = self._root_str
        return "." if text == root else text[len(root) + (not root.endswith(os.sep)):]

    def describe(self, raw: object) -> str:
        """A path argument for the timeline: relative when it resolves inside, else as given."""
        try:
            return self.relative(self._real(raw, "file_path"))
        except ToolError:
            return str(raw)

    def contains(self, path: str | os.PathLike[str]) -> bool:
        """Whether `path`, with symlinks followed, lies inside the workspace.  A link that vanishes
        while it is followed (another process swapping it) cannot be shown to: not inside."""
        real = settled_realpath(path)
        return real is not None and self._inside(real)

    def _inside(self, real: str) -> bool:
        return os.path.isabs(real) and within(real, self._root_str)

    def _checked_text(self, raw: object, field: str) -> str:
        if not isinstance(raw, str):
            raise ToolError(ErrorKind.INVALID_ARGS, f"{field} must be a string, got {type(raw).__name__}",
                            f"Pass an absolute path under {self._root_str}.")
        if not raw or "\0" in raw:
            what = "empty" if not raw else "contains a NUL character"
            raise ToolError(ErrorKind.INVALID_ARGS, f"{field} is {what}",
                            f"Pass an absolute path under {self._root_str}.")
        text = os.path.expanduser(raw) if raw.startswith("~") else raw
        if not os.path.isabs(text):
            raise ToolError(ErrorKind.INVALID_ARGS, f"{field} must be an absolute path, got {raw!r}",
                            f"Use {os.path.join(self._root_str, text)} for a path in the workspace"
                            f" {self._root_str}.")
        _check_lengths(text, field)
        return text

    def __repr__(self) -> str:
        return f"<Workspace {self._root_str}>"


def _check_lengths(text: str, field: str) -> None:
    try:
        encoded = os.fsencode(text)
    except UnicodeEncodeError:
        raise ToolError(ErrorKind.INVALID_ARGS, f"{field} contains characters that cannot be a file name",
                        "Pass a path of valid Unicode characters.") from None
    if len(encoded) > MAX_PATH_BYTES:
        raise ToolError(ErrorKind.INVALID_ARGS,
                        f"{field} is {len(encoded):,} bytes long; paths are limited to {MAX_PATH_BYTES:,}",
                        "Use a shorter path.")
    longest = max(encoded.split(b"/"), key=len)
    if len(longest) > MAX_NAME_BYTES:
        raise ToolError(ErrorKind.INVALID_ARGS,
                        f"{field} has a component of {len(longest)} bytes; names are limited to"
                        f" {MAX_NAME_BYTES}", "Use shorter file and directory names.")


def _special_kind(path: str) -> str | None:
    """What a device, pipe or socket is, in words; None for files, directories and missing paths.

    `stat` never opens the path, so a FIFO or a terminal cannot block it.
    """
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None
    for test, words in ((stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                        (stat.S_ISFIFO, "a named pipe"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return words
    return None


def runtime_dir() -> Path:
    """A private directory for sockets: $XDG_RUNTIME_DIR/belay, else /tmp/belay-<uid>, checked to be ours."""
    base = os.environ.get("XDG_RUNTIME_DIR")
    path = Path(base) / "belay" if base else Path(f"/tmp/belay-{os.getuid()}")
    path.mkdir(mode=0o700, exist_ok=True)
    st = os.lstat(path)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid():
        raise PermissionError(f"{path} is not a directory owned by this user; refusing to put a socket there")
    if stat.S_IMODE(st.st_mode) != 0o700:
        os.chmod(path, 0o700)
    return path


def resolved_paths(args: Mapping[str, object]) -> tuple[Path, ...]:
    """The absolute paths a call's arguments name, symlinks followed, so a rule on the target cannot be dodged."""
    found = []
    for key in ("file_path", "path", "notebook_path"):
        value = args.get(key)
        if isinstance(value, str) and os.path.isabs(value) and "\0" not in value:
            try:
                found.append(Path(realpath(value)))
            except (OSError, ValueError):
                continue
    return tuple(found)
