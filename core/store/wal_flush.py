"""The journal's write-ahead log made durable off the path of a call waiting for its commit.

Lighter bookkeeping commits with synchronous=NORMAL: SQLite appends the commit to the log and does not
sync it.  The log is synced only when a checkpoint copies it back into the database, and SQLite runs that
checkpoint inside whichever commit makes the log pass its threshold (1,000 pages: a hundred calls or
so).  That commit then waits for the disk to take the whole log, some 4 MB: 13 to 20 ms on a 2-core VM,
against a median commit of 75 µs, and on average 150 µs of every call, each time on the path of a call
waiting for its commit.

`WalFlusher` syncs the log on a thread of its own after every few such commits (`SYNC_EVERY`), so that
the checkpoint finds it nearly all on disk already and only copies pages.  Syncing more often than SQLite asks never
weakens what SQLite promises; a commit also reaches the disk within milliseconds instead of at the next
checkpoint.  Nothing depends on the flusher: should it fail, the checkpoint still syncs the log itself.
"""

from __future__ import annotations

import logging
import os
import threading
from pathlib import Path

log = logging.getLogger(__name__)

_sync = getattr(os, "fdatasync", os.fsync)
_OPEN_FLAGS = (os.O_RDWR | getattr(os, "O_BINARY", 0)) if os.name == "nt" else os.O_RDONLY
"""Windows syncs only a descriptor open for writing; nothing here ever writes through it."""


SYNC_EVERY = 8
"""Commits between two syncs: the checkpoint then syncs at most the last few (some 300 KB, against 4 MB),
and the thread wakes an eighth as often as the commits (waking it costs the committing thread, and the
thread takes the GIL each time it wakes)."""
IDLE_S = 1.0
"""A flusher's thread ends after this long without a commit (a journal left open, idle, keeps no thread)."""


class WalFlusher:
    """Syncs the write-ahead log at `wal` after commits: `committed` counts them, `close` stops.

    Several syncs asked for in a row share one: one asked for while a sync runs is made after it."""

    def __init__(self, wal: Path, idle_s: float = IDLE_S, every: int = SYNC_EVERY) -> None:
        self.wal, self.idle_s, self.every = wal, idle_s, every
        self._unsynced = 0
        """Commits since the last sync was asked for (on the committing thread)."""
        self._lock = threading.Lock()
        self._due = threading.Event()
        self._thread: threading.Thread | None = None
        """The thread syncing, while it runs (guarded by `_lock`)."""
        self._closed = False
        self.syncs = 0
        """Syncs made so far (on the flusher's thread)."""

    @property
    def running(self) -> bool:
        """A thread is syncing, or waiting for the next commit."""
        return self._thread is not None

    def committed(self) -> None:
        """A commit was appended to the log without a sync: every `every` of them, sync the log soon (starting
        the thread if none runs)."""
        self._unsynced += 1
        if self._unsynced < self.every:
            return
        self._unsynced = 0
        with self._lock:
            if self._closed:
                return
            self._due.set()
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name=f"belay-wal-flush {self.wal.name}",
                                                daemon=True)
                self._thread.start()

    def close(self) -> None:
        """Stop; a sync under way is finished first."""
        with self._lock:
            self._closed = True
            self._due.set()
            thread = self._thread
        if thread is not None:
            thread.join()

    def _run(self) -> None:
        fd: int | None = None
        try:
            while self._next():
                if fd is None:  # the log exists once a commit has been written to it
                    fd = os.open(self.wal, _OPEN_FLAGS)
                _sync(fd)
                self.syncs += 1
        except OSError as e:
            with self._lock:
                self._closed = True  # the next commits would fail alike: leave the log to the checkpoints
                self._thread = None
            log.warning("syncing the journal's log %s failed; its checkpoints will sync it: %s", self.wal, e)
        finally:
            if fd is not None:
                os.close(fd)

    def _next(self) -> bool:
        """Wait for a commit to sync: False when closed, or idle for `idle_s` (the thread then ends)."""
        self._due.wait(self.idle_s)
        with self._lock:
            if self._closed or not self._due.is_set():
                self._thread = None
                return False
            self._due.clear()
            return True

    def __repr__(self) -> str:
        state = "closed" if self._closed else "running" if self.running else "idle"
        return f"<WalFlusher {self.wal} {state} syncs={self.syncs}>"
