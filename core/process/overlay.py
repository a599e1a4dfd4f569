"""A command in a private layer over the workspace: what it would change, found before anything changes.

On Linux an unprivileged process may take a user and a mount namespace of its own (`unshare -Urm`) and
mount overlayfs there.  The workspace, at its own path, becomes the lower layer; everything the command
writes lands in an upper directory Belay owns, and the workspace itself is never written.  When the command
has ended, the upper directory is the change set:

- a file or a link in it was created, or modified (it differs from the one below), or only changed its mode;
- a character device 0:0 (a whiteout) is something deleted;
- a directory marked opaque (`user.overlay.opaque`, the `userxattr` mount option) replaced the one below:
  what the lower one held and the upper one does not was deleted;
- a deleted file and a created one with the same content are a rename.

Making the changes in the workspace is `core.run.preview`'s part (merged as they are for a command run
beside others in a batch, chosen by a person for a preview).  `Layer.discard` removes the layer and leaves
the workspace as it was.  Where the kernel or the system refuses (no unshare, user namespaces switched off,
no overlayfs), `overlay_support` says why, once.

Limits, said where a preview is shown: the command runs as root inside its namespace (only root can mount
there, and only the caller's uid is mapped); what it does outside the workspace (network, other
directories, processes left running) is not captured; a path with a comma, a colon or a backslash cannot
be named in the mount's options.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from core.models.records import ChangeKind

UNSHARE = shutil.which("unshare")
_MOUNT = ('mount -t overlay belay -o "lowerdir=$1,upperdir=$2,workdir=$3,userxattr" "$1" && cd "$1" && shift 3 '
          '&& exec "$@"')
"""Run inside the new namespaces: the layer over the workspace's own path, then the command in it."""
_UNNAMEABLE = (",", ":", "\\")
"""Characters overlayfs's options cannot carry in a path."""
_OPAQUE = "user.overlay.opaque"

@dataclass(frozen=True)
class OverlaySupport:
    """Whether commands can run in a layer here, and if not, why (for the status line)."""

    available: bool
    detail: str


@dataclass(frozen=True)
class LayerChange:
    """One path the command changed, relative to the workspace."""

    path: str
    kind: ChangeKind
    old_path: str | None = None
    """A rename's former path."""
    is_dir: bool = False
    is_link: bool = False


@functools.cache
def overlay_support() -> OverlaySupport:
    """Probed once (blocking: a short subprocess): a layer over a scratch directory, written through."""
    if UNSHARE is None:
        return OverlaySupport(False, "unshare (util-linux) is not installed")
    with tempfile.TemporaryDirectory(prefix="belay-overlay-probe-") as scratch:
        lower = Path(scratch, "lower")
        lower.mkdir()
        layer = Layer.create(lower, Path(scratch))
        try:
            done = subprocess.run(layer.wrap(["sh", "-c", "echo probe > probe"]), capture_output=True, text=True,
                                  timeout=10, check=False)
            written = (layer.upper / "probe").is_file() and not (lower / "probe").exists()
        except (OSError, subprocess.TimeoutExpired) as e:
            return OverlaySupport(False, f"the probe could not run: {e}")
        finally:
            layer.discard()
    if done.returncode != 0 or not written:
        why = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else f"exit {done.returncode}"
        return OverlaySupport(False, f"the kernel refused an overlay in a user namespace ({why})")
    return OverlaySupport(True, "commands can run in a private layer over the workspace")


class Layer:
    """One command's private layer: `wrap` runs it there, `changes` reads what it did, `discard` ends it."""

    def __init__(self, workspace: Path, root: Path) -> None:
        self.workspace, self.root = Path(os.path.realpath(workspace)), root
        self.upper, self.work = root / "upper", root / "work"

    @classmethod
    def create(cls, workspace: Path, parent: Path | None = None) -> Layer:
        """A layer in a new private directory (0700) under `parent` (the system's temporary one by default)."""
        root = Path(tempfile.mkdtemp(prefix="belay-layer-", dir=parent))
        layer = cls(workspace, root)
        layer.upper.mkdir()
        layer.work.mkdir()
        return layer

    def nameable(self) -> bool:
        """Whether the mount's options can name the workspace and the layer."""
        return not any(c in str(p) for p in (self.workspace, self.upper, self.work) for c in _UNNAMEABLE)

    def wrap(self, argv: Sequence[str]) -> list[str]:
        """The command line that runs `argv` in the layer, in the workspace's directory (as seen through it)."""
        if UNSHARE is None:
            raise RuntimeError("unshare is not installed: see overlay_support()")
        if not self.nameable():
            raise ValueError(f"{self.workspace} or {self.root} holds a character overlayfs cannot name "
                             f"({' '.join(_UNNAMEABLE)})")
        return [UNSHARE, "--user", "--map-root-user", "--mount", "--propagation", "private", "sh", "-c", _MOUNT,
                "sh", str(self.workspace), str(self.upper), str(self.work), *argv]

    def changes(self) -> list[LayerChange]:
        """What the command changed (blocking: reads the layer and compares with the workspace), by path."""
        found = list(self._walk(""))
        return sorted(_renames(found, self.upper, self.workspace), key=lambda c: c.path)

    def discard(self) -> None:
        """Remove the layer (overlayfs leaves its work directory unreadable: made readable first)."""
        for path, dirs, _ in os.walk(self.root):
            for name in dirs:
                with contextlib.suppress(OSError):  # go on past one it cannot change
                    os.chmod(os.path.join(path, name), 0o700)
        shutil.rmtree(self.root, ignore_errors=True)

    # -- reading the layer -------------------------------------------------------------------

    def _walk(self, rel: str) -> Iterator[LayerChange]:
        with os.scandir(self.upper / rel if rel else self.upper) as entries:
            for entry in sorted(entries, key=lambda e: e.name):
                path = f"{rel}/{entry.name}" if rel else entry.name
                yield from self._entry(path, entry.stat(follow_symlinks=False))

    def _entry(self, path: str, st: os.stat_result) -> Iterator[LayerChange]:
        lower = _lstat(self.workspace / path)
        if stat.S_ISCHR(st.st_mode) and st.st_rdev == 0:  # a whiteout: deleted, with all it held
            yield from self._deleted(path, lower)
            return
        if stat.S_ISDIR(st.st_mode):
            if lower is None or not stat.S_ISDIR(lower.st_mode):
                yield from self._deleted(path, lower)
                yield LayerChange(path, ChangeKind.CREATE, is_dir=True)
            elif _opaque(self.upper / path):  # replaced: what it held below and no longer holds is deleted
                kept = set(os.listdir(self.upper / path))
                for name in sorted(set(os.listdir(self.workspace / path)) - kept):
                    yield from self._deleted(f"{path}/{name}", _lstat(self.workspace / path / name))
            elif stat.S_IMODE(st.st_mode) != stat.S_IMODE(lower.st_mode):
                yield LayerChange(path, ChangeKind.MODE, is_dir=True)
            yield from self._walk(path)
            return
        link = stat.S_ISLNK(st.st_mode)
        if lower is None:
            yield LayerChange(path, ChangeKind.CREATE, is_link=link)
        elif stat.S_IFMT(lower.st_mode) != stat.S_IFMT(st.st_mode) or not self._same(path, link):
            if stat.S_ISDIR(lower.st_mode):
                yield from self._deleted(path, lower)
                yield LayerChange(path, ChangeKind.CREATE, is_link=link)
            else:
                yield LayerChange(path, ChangeKind.MODIFY, is_link=link)
        elif not link and stat.S_IMODE(st.st_mode) != stat.S_IMODE(lower.st_mode):
            yield LayerChange(path, ChangeKind.MODE)
        # else copied up unchanged (opened for writing, touched): nothing to show

    def agrees(self, path: str) -> bool:
        """Whether the workspace holds at `path` what the layer does: both absent, the same link, or a file of
        the same bytes (another writer may have made the same change)."""
        upper, lower = _lstat(self.upper / path), _lstat(self.workspace / path)
        if upper is None or lower is None or stat.S_ISCHR(upper.st_mode):  # a whiteout: deleted in the layer
            return lower is None and (upper is None or stat.S_ISCHR(upper.st_mode))
        if stat.S_IFMT(upper.st_mode) != stat.S_IFMT(lower.st_mode):
            return False
        return stat.S_ISDIR(upper.st_mode) or self._same(path, stat.S_ISLNK(upper.st_mode))

    def _same(self, path: str, link: bool) -> bool:
        upper, lower = self.upper / path, self.workspace / path
        if link:
            return os.readlink(upper) == os.readlink(lower)
        return _digest(upper) == _digest(lower)

    def _deleted(self, path: str, lower: os.stat_result | None) -> Iterator[LayerChange]:
        if lower is None:
            return
        if stat.S_ISDIR(lower.st_mode):
            for name in sorted(os.listdir(self.workspace / path)):
                yield from self._deleted(f"{path}/{name}", _lstat(self.workspace / path / name))
            yield LayerChange(path, ChangeKind.DELETE, is_dir=True)
        else:
            yield LayerChange(path, ChangeKind.DELETE, is_link=stat.S_ISLNK(lower.st_mode))


def _renames(changes: list[LayerChange], upper: Path, workspace: Path) -> list[LayerChange]:
    """A deleted regular file and a created one with the same content become one rename (1:1 only)."""
    deleted: dict[str, list[LayerChange]] = {}
    for change in changes:
        if change.kind == ChangeKind.DELETE and not change.is_dir and not change.is_link:
            deleted.setdefault(_digest(workspace / change.path), []).append(change)
    result, taken = [], set()
    for change in changes:
        if change.kind == ChangeKind.CREATE and not change.is_dir and not change.is_link:
            matches = [d for d in deleted.get(_digest(upper / change.path), []) if d.path not in taken]
            if len(matches) == 1:
                taken.add(matches[0].path)
                result.append(LayerChange(change.path, ChangeKind.RENAME, old_path=matches[0].path))
                continue
        result.append(change)
    return [c for c in result if not (c.kind == ChangeKind.DELETE and c.path in taken)]


def _lstat(path: Path) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except FileNotFoundError:
        return None


def _opaque(path: Path) -> bool:
    try:
        return os.getxattr(path, _OPAQUE, follow_symlinks=False) == b"y"
    except OSError:
        return False


def _digest(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()
