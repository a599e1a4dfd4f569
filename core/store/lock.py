"""Which process owns a workspace's state: an advisory lock on a file beside the journal.

One console at a time may work on a workspace (run agents, watch and undo);
`belay gc` takes the same lock to compact.  The holder writes its pid and
what it is into the file, so whoever is refused can name it.  Consoles that
only read the journal (`belay calls`, `belay export`) take no lock.  The
kernel drops the lock when the process dies, so a crash never leaves it stuck.

A console also locks the workspace itself, by its real path, in the user's
private runtime folder (`core.paths.runtime_dir`): two consoles given
different state folders (`--state-dir`) would otherwise both write to the
same files, each journaling the other's changes as someone else's.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import logging
import os
from pathlib import Path

from core.errors import BelayError, ErrorKind
from core.paths import runtime_dir

log = logging.getLogger(__name__)

LOCK = "console.lock"
"""The lock's file, in the workspace's state directory."""


class WorkspaceBusy(BelayError):
    """Another console (a window, `belay run`, `belay serve`) or `belay gc` has the workspace: one at a time."""

    def __init__(self, workspace: Path, holder: str) -> None:
        super().__init__(ErrorKind.CONFLICT, f"{workspace} is open in another Belay console: {holder}",
                         "Work there (`belay calls` and `belay undo` reach it), or close it first.")


class OwnerLock:
    """An exclusive, non-blocking flock held for a console's lifetime."""

    def __init__(self, path: Path, fd: int) -> None:
        self.path = path
        self._fd: int | None = fd
        self.also: OwnerLock | None = None
        """The workspace's own lock in the runtime folder, released with this one."""

    @classmethod
    def try_acquire(cls, path: Path, what: str = "a Belay console", **said: str) -> OwnerLock | None:
        """The lock, its file saying this process holds it as `what` ("window", "belay run"...) and what `said`
        adds; None if held."""
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            os.ftruncate(fd, 0)
            os.pwrite(fd, json.dumps({"pid": os.getpid(), "what": what, **said}).encode(), 0)
        except BlockingIOError:
            os.close(fd)
            return None
        except BaseException:
            os.close(fd)
            raise
        return cls(path, fd)

    @staticmethod
    def holder(path: Path) -> str:
        """Who holds the lock at `path`, as its file says: "window (pid 4242)"."""
        try:
            said = json.loads(path.read_bytes() or b"{}")
            state = f", its state in {said['state']}" if said.get("state") else ""
            return f"{said['what']} (pid {int(said['pid'])}{state})"
        except (OSError, ValueError, KeyError, TypeError):  # a holder starting: its line not written yet
            return "another Belay process (starting)"

    def release(self) -> None:
        if self.also is not None:
            self.also.release()
        if self._fd is not None:
            os.close(self._fd)  # closing drops the flock
            self._fd = None

    def __repr__(self) -> str:
        return f"<OwnerLock {self.path} held={self._fd is not None}>"


def own_workspace(state_dir: Path, workspace: Path, what: str) -> OwnerLock:
    """The workspace's lock, held as `what`; raises WorkspaceBusy naming whoever holds it."""
    state_dir.mkdir(parents=True, exist_ok=True)
    lock = OwnerLock.try_acquire(state_dir / LOCK, what)
    if lock is None:
        raise WorkspaceBusy(workspace, OwnerLock.holder(state_dir / LOCK))
    try:
        folder = runtime_dir() / "workspaces"
        folder.mkdir(mode=0o700, exist_ok=True)
    except OSError as e:  # no private runtime folder: the state folder's lock alone
        log.warning("cannot lock %s beyond its state folder: %s", workspace, e)
        return lock
    mine = folder / f"{hashlib.sha256(os.path.realpath(workspace).encode()).hexdigest()[:24]}.lock"
    lock.also = OwnerLock.try_acquire(mine, what, state=str(state_dir))
    if lock.also is None:
        lock.release()
        raise WorkspaceBusy(workspace, OwnerLock.holder(mine))
    return lock
