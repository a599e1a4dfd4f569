"""Which workspace paths changed since the last look: watchdog's inotify events mark them dirty.

Walking every file after each shell command costs tens of milliseconds in a
large tree; `DirtyTracker` collects the paths watchdog reports so the caller
looks only at those.  The hard part is completeness right after a command
exits: inotify queues events synchronously, but watchdog passes them through
three threads (reader, emitter, dispatcher), each in order.  So `take()`
raises a barrier: it sets the root directory's times to what they already
are (only its ctime changes), which queues an IN_ATTRIB on the root watch
behind every earlier event, and waits for that echo to reach the handler.
Concurrent takes are serialized, one echo in flight at a time.  watchdog
holds an unpaired IN_MOVED_FROM back 0.5 s to pair it with an IN_MOVED_TO
and its queue is FIFO: a take() after a move out of the tree waits that long.

Listeners (`add_listener`) see the same stream as it arrives, for caches
whose entries must die the moment a file they read changes
(`core.run.results.ResultCache.invalidate`): each batch of paths as the handler
records it, and "everything" whenever the stream may have a gap (events
lost, watching restarted).  `sync()` is take()'s barrier without the drain:
once it returns True every change made before the call has reached them.

Not seen, as with any inotify user: writes through a hard link from outside
the tree or a shared mmap, changes made by another host.  A chmod/touch of
the root itself by someone else, still undispatched when the echo is asked
for, looks like the echo and may end the wait early.
"""

from __future__ import annotations

import errno
import itertools
import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from watchdog.events import (
    DirAttribEvent,
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
    FileAttribEvent,
    FileClosedEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileSystemEvent,
    FileSystemEventHandler,
)
from watchdog.observers.api import BaseObserver
from watchdog.observers.inotify import InotifyEmitter
from watchdog.observers.inotify_c import CallbackId, InotifyEvent, InotifyFD, Mask, WatchCallback, WatchDescriptor

log = logging.getLogger(__name__)


class _StopRace(logging.Filter):
    """watchdog 7's emitter thread can read once more after `stop()` has closed its inotify queue; it then
    logs "queue_events() called when the thread is inactive" as an error and returns.  Nothing is lost (the
    watch is over), so the message is dropped rather than shown as a failure at every close that hits it."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "called when the thread is inactive" not in record.getMessage()


logging.getLogger("watchdog.observers.inotify").addFilter(_StopRace())

# Everything that can change a file's content, mode or presence.  Opens and reads are left out: a `grep -r`
# would otherwise queue two events per file and could overflow the kernel queue.  DirAttribEvent is the echo.
_REPORTED = [FileCreatedEvent, DirCreatedEvent, FileDeletedEvent, DirDeletedEvent, FileModifiedEvent,
             FileAttribEvent, DirAttribEvent, FileMovedEvent, DirMovedEvent, FileClosedEvent]
_EXHAUSTED = frozenset({errno.ENOSPC, errno.ENOMEM, errno.EMFILE})

Limit = Literal["instances", "watches"]
"""One of the user's inotify limits: instances (fs.inotify.max_user_instances, one per watching program: many
editors open use them up) or watches (fs.inotify.max_user_watches, one per directory: a large repository)."""
_LIMITS: dict[int, Limit] = {errno.EMFILE: "instances", errno.ENOSPC: "watches"}

Listener = Callable[[frozenset[str], bool], None]
"""Told (paths, False) for each batch of dirty paths, (frozenset(), True) when anything may have changed."""


@dataclass(frozen=True)
class Dirty:
    """What may have changed in the workspace since the previous `DirtyTracker.take()`."""

    paths: frozenset[str]
    """Workspace-relative paths that may have been created, modified, deleted, chmodded or moved (both ends of
    a move).  A directory is listed when it was itself created, deleted or moved: look at everything below it."""
    everything: bool
    """The tracker cannot vouch for `paths` (not watching, just started, lost events, no echo): walk it all."""


class _Inotify(InotifyFD):
    """watchdog's inotify reader, made to say when events were lost, and to give its inotify instance back.

    watchdog 7.1.0 skips a subdirectory it cannot watch (watch limit reached) without a word (7.1.1 fails the
    start), and after a kernel queue overflow it only logs and rebuilds its watches.  Its reading loop closes
    the inotify descriptor; stopped before that loop's first read (a start that failed at once), it never
    did, and each such start kept one of the user's inotify instances (128 here) until the process ended.
    """

    def __init__(self, on_lost: Callable[[str, Limit | None], None]) -> None:
        super().__init__()
        self._on_lost = on_lost
        self._released = False

    def run(self) -> None:
        try:
            super().run()
        finally:
            self.close()  # nothing when stopped already
            with self._lock:
                if not self._released:  # the loop ended before it could close the descriptor
                    self._close_resources()

    def _close_resources(self) -> None:
        self._released = True
        super()._close_resources()

    def _add_callback(self, path: bytes, mask: Mask, callback: WatchCallback, id_: CallbackId) -> WatchDescriptor:
        # Replaces watchdog's version, which raises a RuntimeWarning when its recursive registration watches a
        # directory again (mkdir -p a/b: a's walk watches b, then b's own IN_CREATE does): where warnings are
        # errors that kills this thread.  Registering again is harmless.
        try:
            watch = self._get_or_create_watch(path, mask)
        except OSError as e:
            if e.errno in _EXHAUSTED:
                self._on_lost(f"cannot watch {os.fsdecode(path)}: {e.strerror}", _LIMITS.get(e.errno))
            raise
        watch.callbacks[id_] = callback
        return watch.wd

    def handle_event(self, event: InotifyEvent) -> None:
        if event.is_queue_overflow:
            self._on_lost("the kernel's inotify queue overflowed", None)
        super().handle_event(event)


class _Handler(FileSystemEventHandler):
    def __init__(self, sink: Callable[[FileSystemEvent], None]) -> None:
        self._sink = sink

    def dispatch(self, event: FileSystemEvent) -> None:
        self._sink(event)  # every event, unsorted


class DirtyTracker:
    """Collects the paths of a workspace that changed, for `take()` to hand out exactly and clear.

    Nothing at or under a directory named in `skip_dirs` is reported (watchdog still watches it).  `on_dirty`
    is called (from a watchdog thread) when something new is there to take; it must only schedule the look,
    never call `take()` or `stop()` itself.  Start watching before building the index that the dirty paths
    will update: the first `take()` after `start()` reports `everything`.
    """

    def __init__(self, root: Path, skip_dirs: frozenset[str] = frozenset({".git"}),
                 on_dirty: Callable[[], None] | None = None) -> None:
        self.root = Path(os.path.realpath(root))
        self._root, self._prefix = str(self.root), os.path.join(self.root, "")
        self._skip, self._on_dirty = skip_dirs, on_dirty
        self.problem = ""
        self.limit: Limit | None = None
        """The inotify limit the last start ran into, when that is why it failed (`problem` says more)."""
        self._limit_hit: Limit | None = None
        self._turn = threading.Lock()  # one barrier, start or stop at a time
        self._cond = threading.Condition()  # guards the fields below; watchdog's threads notify it
        self._paths: set[str] = set()
        self._listeners: dict[int, Listener] = {}  # replaced, never mutated: watchdog's threads iterate it
        self._listener_ids = itertools.count()
        self._echoes = 0
        self._lost: str | None = None  # why `_paths` cannot be trusted since the last take
        self._fresh = True
        self._identity = (0, 0)
        self._inotify: _Inotify | None = None
        self._observer: BaseObserver | None = None

    @property
    def watching(self) -> bool:
        """Whether the next take() can vouch for its paths (after the first one)."""
        return self._observer is not None and self._lost is None and self._alive()

    def start(self) -> bool:
        """Watches the whole tree; False, with `.problem` saying why (and `.limit`, an inotify limit) when it cannot."""
        with self._turn:
            if self._observer is None:
                self.problem, self.limit = self._launch()
            return self._observer is not None

    def stop(self) -> None:
        with self._turn:
            self._shutdown()

    def add_listener(self, listener: Listener) -> Callable[[], None]:
        """Passes `listener` every batch of dirty paths as it is recorded; returns what removes it again.

        Called on watchdog's dispatcher thread with (paths, False), in the order the changes happened, before
        any later echo (so before a later `sync()` or `take()` returns).  Called with (frozenset(), True)
        when events may have been lost (queue overflow, watch limit, no echo: from whichever thread noticed)
        and after each (re)start, as nothing changed while unwatched was seen.  It must not block, nor call
        back into the tracker; what it raises is logged.
        """
        listener_id = next(self._listener_ids)
        with self._cond:
            self._listeners = {**self._listeners, listener_id: listener}

        def remove() -> None:
            with self._cond:
                self._listeners = {k: v for k, v in self._listeners.items() if k != listener_id}
        return remove

    def sync(self, timeout: float = 2.0) -> bool:
        """Blocks until every event queued before this call has reached the listeners; leaves the paths to take().

        False when it cannot vouch for that (not watching, events lost, no echo in time); the listeners have
        then been told everything, and watching is restarted as by take().  Blocking: call it off the loop.
        """
        deadline = time.monotonic() + timeout
        if not self._turn.acquire(timeout=timeout):
            return False
        try:
            if self._observer is None:
                return False
            if self._barrier(max(deadline - time.monotonic(), 0.0)):
                return True
            self._restart()
            return False
        finally:
            self._turn.release()

    def take(self, timeout: float = 2.0) -> Dirty:
        """Every path dirtied by what happened before this call, cleared; blocks until watchdog caught up."""
        deadline = time.monotonic() + timeout
        if not self._turn.acquire(timeout=timeout):
            return Dirty(frozenset(), everything=True)  # another take() or sync() holds the barrier: leave the paths
        try:
            if self._observer is None or self._fresh:
                return self._drain(everything=True)
            caught_up = self._barrier(max(deadline - time.monotonic(), 0.0))
            if not caught_up:
                self._restart()
            return self._drain(everything=not caught_up)
        finally:
            self._turn.release()

    def _barrier(self, timeout: float) -> bool:
        """Waits for the echo of a root attribute change made now; False when events may have been lost."""
        if not self._alive():
            self._lose("watchdog's threads stopped")
        with self._cond:
            if self._lost is not None:
                return False
            target = self._echoes + 1
        try:
            self._ping()
        except OSError as e:
            self._lose(f"cannot touch the workspace root {self._root}: {e.strerror}")
            return False
        with self._cond:
            echoed = self._cond.wait_for(lambda: self._echoes >= target or self._lost is not None, timeout)
        if not echoed:
            self._lose(f"watchdog did not report a change of {self._root} within {timeout:g} s")
        return self._lost is None

    def _ping(self) -> None:
        """Changes only the root's ctime: inotify reports an IN_ATTRIB on the root watch."""
        st = os.stat(self._root)
        if (st.st_dev, st.st_ino) != self._identity:
            raise FileNotFoundError(errno.ENOENT, "replaced since watching began")
        os.utime(self._root, ns=(st.st_atime_ns, st.st_mtime_ns))

    def _drain(self, everything: bool) -> Dirty:
        with self._cond:
            paths, self._paths, self._fresh = frozenset(self._paths), set(), False
        return Dirty(paths, everything)

    def _launch(self) -> tuple[str, Limit | None]:
        """Starts a fresh observer and checks that it echoes; the problem ("" when watching) and the inotify limit
        that caused it, if one did."""
        with self._cond:
            self._paths, self._echoes, self._lost, self._fresh = set(), 0, None, True
            self._limit_hit = None
        try:
            st = os.stat(self._root)
            self._identity = (st.st_dev, st.st_ino)
            self._inotify = _Inotify(self._note_lost)
            self._inotify.name = "watcher-inotify"
            self._inotify.start()
            self._observer = BaseObserver(InotifyEmitter, inotify_fd=self._inotify)
            self._observer.name = "watcher-dispatch"
            self._observer.schedule(_Handler(self._on_event), self._root, recursive=True, event_filter=_REPORTED)
            self._observer.start()
            problem = "" if self._barrier(timeout=5.0) else self._lost
            if not problem:
                self._tell(frozenset(), everything=True)  # whatever changed while nobody watched
        except OSError as e:  # what failed first, when it was a subdirectory (watchdog 7.1.1 fails the start)
            problem = self._lost or f"cannot watch {self._root}: {e.strerror or e}"
            self._limit_hit = self._limit_hit or _LIMITS.get(e.errno or 0)
        except BaseException:
            self._shutdown()
            raise
        if problem:
            self._shutdown()
        return (problem, self._limit_hit) if problem else ("", None)

    def _restart(self) -> None:
        reason = self._lost
        self._shutdown()
        self.problem, self.limit = self._launch()
        log.warning("dirty tracking of %s restarted (%s)%s", self._root, reason,
                    f"; failed: {self.problem}" if self.problem else "")

    def _shutdown(self) -> None:
        observer, inotify, self._observer, self._inotify = self._observer, self._inotify, None, None
        for thread in (observer, inotify):  # the observer first: it stops and joins its emitter
            if thread is not None:
                thread.stop()
                if thread.ident is not None:
                    thread.join()

    def _alive(self) -> bool:
        observer, inotify = self._observer, self._inotify
        return (observer is not None and inotify is not None and observer.is_alive() and inotify.is_alive()
                and all(emitter.is_alive() for emitter in observer.emitters))

    def _on_event(self, event: FileSystemEvent) -> None:
        src = os.fsdecode(event.src_path)
        if src == self._root:
            if isinstance(event, DirAttribEvent):
                with self._cond:
                    self._echoes += 1
                    self._cond.notify_all()
            elif isinstance(event, DirDeletedEvent):
                self._note_lost("the workspace root was deleted")
            return
        paths = frozenset(rel for path in (src, os.fsdecode(event.dest_path)) if (rel := self._relative(path)))
        if not paths:
            return
        with self._cond:
            news = not self._paths
            self._paths |= paths
        self._tell(paths, everything=False)
        if news:
            self._announce()

    def _relative(self, path: str) -> str | None:
        if not path.startswith(self._prefix):
            return None
        rel = path[len(self._prefix):]
        return None if self._skip.intersection(rel.split(os.sep)) else rel

    def _note_lost(self, reason: str, limit: Limit | None = None) -> None:
        """Events were lost, as watchdog's threads found: wake a waiting barrier and tell whoever looks."""
        if limit is not None:
            self._limit_hit = self._limit_hit or limit
        if self._lose(reason) and not self._fresh:  # a fresh tracker reports everything anyway
            self._announce()

    def _lose(self, reason: str) -> bool:
        """Notes that `_paths` cannot be trusted; whether that is news (listeners are told it then)."""
        with self._cond:
            news, self._lost = self._lost is None, self._lost or reason
            self._cond.notify_all()
        if news:
            self._tell(frozenset(), everything=True)
        return news

    def _tell(self, paths: frozenset[str], everything: bool) -> None:
        for listener in self._listeners.values():
            try:
                listener(paths, everything)
            except Exception:  # the watchdog thread must survive its owner's bug
                log.exception("dirty listener %r of %r failed", listener, self)

    def _announce(self) -> None:
        if self._on_dirty is not None:
            try:
                self._on_dirty()
            except Exception:  # the watchdog thread must survive its owner's bug
                log.exception("on_dirty callback of %r failed", self)

    def __repr__(self) -> str:
        state = "watching" if self.watching else f"not watching ({self.problem or 'not started'})"
        return f"<DirtyTracker {self._root} {state} dirty={len(self._paths)}>"
