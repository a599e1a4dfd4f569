"""Which console owns a workspace's state: an advisory lock on a file beside the journal.

The owner may declare runs left unfinished by a crashed console interrupted;
other consoles on the same state (the terminal's `belay calls`, a second
window) read and undo but leave that bookkeeping alone.  The kernel drops
the lock when the process dies, so a crash never leaves it stuck.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path


class OwnerLock:
    """An exclusive, non-blocking flock held for a console's lifetime."""

    def __init__(self, path: Path, fd: int) -> None:
        self.path = path
        self._fd: int | None = fd

    @classmethod
    def try_acquire(cls, path: Path) -> OwnerLock | None:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return None
        except BaseException:
            os.close(fd)
            raise
        return cls(path, fd)

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing drops the flock
            self._fd = None

    def __repr__(self) -> str:
        return f"<OwnerLock {self.path} held={self._fd is not None}>"
