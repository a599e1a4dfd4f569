"""What a test left running: threads, processes and inotify instances it started and did not end.

`Leftovers.now()` notes what runs; `since(before)` names what a test added.  A
process counts when it is a child of this one, or carries the test's private
state directory in its environment (a console that `belay` started in the
background, reparented to init, still does).  A zombie child counts too: it was
never waited for.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass


@dataclass(frozen=True)
class Leftovers:
    """Threads (ident -> name), processes (pid -> parent and command line) and inotify instances of one moment."""

    threads: dict[int, str]
    pids: frozenset[int]
    inotify: int

    @classmethod
    def now(cls) -> Leftovers:
        # A thread Python did not start (Qt's, a library's) is listed once it ran Python code, and stays listed
        # whether it ended or not: only Python's own threads can be told apart as alive.
        threads = {t.ident: f"{t.name}{' (daemon)' if t.daemon else ''}" for t in threading.enumerate()
                   if t.ident is not None and not isinstance(t, threading._DummyThread)}
        return cls(threads, _pids(), _inotify_instances())

    def since(self, before: Leftovers, marker: str) -> list[str]:
        """What is here now and was not `before`, in words; processes only when a child or carrying `marker`
        (a `NAME=value` of the test's environment)."""
        threads = [f"thread {name!r}" for ident, name in self.threads.items() if ident not in before.threads]
        processes = [f"process {pid} {what}" for pid in sorted(self.pids - before.pids)
                     if (what := _ours(pid, marker))]
        extra = self.inotify - before.inotify
        inotify = [f"{extra} inotify instance{'s' if extra > 1 else ''}"] if extra > 0 else []
        return threads + processes + inotify


def _pids() -> frozenset[int]:
    return frozenset(int(name) for name in os.listdir("/proc") if name.isdigit())


def _inotify_instances() -> int:
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            count += os.readlink(f"/proc/self/fd/{fd}") == "anon_inode:inotify"
        except OSError:  # the descriptor listdir itself held, or one closed meanwhile
            pass
    return count


def _ours(pid: int, marker: str) -> str:
    """`pid`'s command line (and "a zombie" when it is one) when it is ours; "" when not, or gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
        state, ppid = stat[stat.rindex(b")") + 2:].split()[:2]
        child = int(ppid) == os.getpid()
        if not child:
            with open(f"/proc/{pid}/environ", "rb") as f:
                if os.fsencode(marker) not in f.read().split(b"\0"):
                    return ""
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            command = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
    except (OSError, ValueError):  # gone meanwhile, or not ours to read
        return ""
    command = command[:120] or stat[stat.index(b"(") + 1:stat.rindex(b")")].decode(errors="replace")
    return f"`{command}`" + (" (a zombie: never waited for)" if state == b"Z" else "")
