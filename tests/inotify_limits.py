"""The user's inotify limits, lowered in this process: what a large repository or many open editors cause.

The real limits (/proc/sys/fs/inotify/max_user_watches and max_user_instances) are the whole machine's;
these stand-ins make the kernel's calls fail as they do at the limit, for this test only (monkeypatch).
"""

from __future__ import annotations

import ctypes
import errno
import os

import pytest
from watchdog.observers import inotify_c


def limit_watches_to(monkeypatch: pytest.MonkeyPatch, allowed: set[bytes]) -> None:
    """inotify_add_watch fails with ENOSPC, as at the watch limit, for directories not in `allowed`."""
    real = inotify_c.inotify_add_watch

    def add_watch(fd: int, path: bytes, mask: int) -> int:
        if path in allowed:
            return real(fd, path, mask)
        ctypes.set_errno(errno.ENOSPC)
        return -1

    monkeypatch.setattr(inotify_c, "inotify_add_watch", add_watch)


def limit_instances_to(monkeypatch: pytest.MonkeyPatch, more: int) -> None:
    """inotify_init fails with EMFILE, as at the instance limit, after `more` further instances."""
    real, made = inotify_c.inotify_init, [0]

    def init() -> int:
        if made[0] < more:
            made[0] += 1
            return real()
        ctypes.set_errno(errno.EMFILE)
        return -1

    monkeypatch.setattr(inotify_c, "inotify_init", init)


def inotify_instances() -> int:
    """The inotify instances this process holds (each counts against the user's limit)."""
    return sum(os.path.realpath(f"/proc/self/fd/{fd}").endswith("anon_inode:inotify")
               for fd in os.listdir("/proc/self/fd"))
