"""Who changed what: the workspace index kept current, and one author at a time.

Every operation that changes files (a write tool, a shell command, an
undo) runs inside `mutation()`: it takes the one-author lock, records what
changed since the last look as external changes (the person's editor,
a build running beside Belay: never attributed to an agent), and notes
the git state.  A shell command then calls `capture()`, which returns the
files and git references it changed; Belay's own writes call `absorb()`,
which takes them into the index and records anything else found there as
external.  Read-only work runs beside a mutation, without the lock.

A watchdog observer (`DirtyTracker`) marks paths dirty, so a look costs
what changed rather than a walk of the workspace; when it cannot vouch for
its set (not running, overflowed, too slow) the look walks everything.
Changes made while nothing runs are recorded after a quiet moment.  When it
cannot watch at all (an inotify limit reached: a large repository, many
editors open), every look walks: before and after each command, so nothing
is missed, and outside changes are found when the next call runs
(`watch_state` says so, for the window).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass

from core.changes.gitstate import GitState, describe_changes, read_git_state
from core.changes.ignore import IgnoreRules
from core.changes.snapshot import WorkspaceIndex
from core.changes.watcher import DirtyTracker, Limit
from core.models.records import FileChange, GitChange
from core.paths import Workspace
from core.store.blobs import BlobStore
from core.tasks import spawn

log = logging.getLogger(__name__)

QUIET_S = 1.5
"""How long the workspace must stay still before changes made outside Belay are recorded."""

ExternalSink = Callable[[list[FileChange], str], Awaitable[None]]
"""Records changes nobody in Belay made, with a note on when they were found."""


@dataclass(frozen=True)
class Holding:
    """Who holds the one-author lock, since when (loop time), and how many wait for it."""

    who: str
    since: float
    waiting: int

    @property
    def call_id(self) -> str | None:
        """The holding call, when it is one ("call <id> ...", as calls name themselves)."""
        words = self.who.split()
        return words[1] if len(words) > 1 and words[0] == "call" else None


@dataclass(frozen=True)
class WatchState:
    """Whether Belay watches the workspace's files.  When it cannot, each command is still captured exactly (the
    workspace is compared whole before and after it, which takes longer in a large tree), edits made outside
    Belay are found when the next call runs, and read-only results are not cached."""

    watching: bool
    problem: str = ""
    """Why not, in a line: the directory and the error ("" when watching)."""
    limit: Limit | None = None
    """The user's inotify limit that ran out, when that is why."""


@dataclass(frozen=True)
class Captured:
    """What one command changed."""

    changes: tuple[FileChange, ...]
    git: tuple[GitChange, ...]


class ChangeTracker:
    """The workspace index, its watcher and the one-author lock."""

    def __init__(self, workspace: Workspace, blobs: BlobStore, on_external: ExternalSink, *,
                 ignore_extra: Sequence[str] = (), watch: bool = True) -> None:
        self.workspace = workspace
        self.index = WorkspaceIndex(workspace, blobs, IgnoreRules.load(workspace.root, ignore_extra))
        self.index.ignore_extra = tuple(ignore_extra)
        self.watcher = DirtyTracker(workspace.root, on_dirty=self._on_dirty) if watch else None
        self._on_external = on_external
        self._lock = asyncio.Lock()
        self._git_before: GitState | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stirred = asyncio.Event()
        self._settler: asyncio.Task[None] | None = None
        self._held: dict[str, frozenset[str]] = {}
        self._holder: tuple[str, float] | None = None
        self._waiting = 0
        """Paths an outside agent's approved call is about to write (call id -> paths): their changes are
        that call's, recorded when it reports back, never external or another call's."""

    @property
    def watching(self) -> bool:
        return self.watcher is not None and self.watcher.watching

    @property
    def watch_state(self) -> WatchState | None:
        """Whether the files are watched, or why not (after `start`); None for a tracker made not to watch."""
        watcher = self.watcher
        if watcher is None:
            return None
        return WatchState(False, watcher.problem, watcher.limit) if watcher.problem else WatchState(True)

    async def start(self) -> None:
        """Start watching, then take the workspace as it is (the watcher first, so nothing slips between)."""
        self._loop = asyncio.get_running_loop()
        if self.watcher is not None and not await asyncio.to_thread(self.watcher.start):
            log.info("not watching %s (%s): every look walks the workspace", self.workspace.root,
                     self.watcher.problem)
        await asyncio.to_thread(self.index.changes_since)
        if self.watcher is not None:
            self._settler = spawn(self._settle_when_quiet(), "belay-settle-external")

    async def stop(self) -> None:
        if self._settler is not None:
            self._settler.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._settler
        if self.watcher is not None:
            await asyncio.to_thread(self.watcher.stop)

    @contextlib.asynccontextmanager
    async def mutation(self, who: str) -> AsyncIterator[None]:
        """Hold the one-author lock; what changed before it is recorded as external first."""
        self._waiting += 1
        try:
            await self._lock.acquire()
        finally:
            self._waiting -= 1
        self._holder = (who, asyncio.get_running_loop().time())
        try:
            await self._settle(f"before {who}")
            self._git_before = await asyncio.to_thread(read_git_state, self.workspace.root)
            yield
        finally:
            self._holder = None
            self._lock.release()

    @property
    def holding(self) -> Holding | None:
        """Who holds the lock (as it said in `mutation(who)`) while anyone waits for it; None otherwise."""
        if self._holder is None or not self._waiting:
            return None
        return Holding(self._holder[0], self._holder[1], self._waiting)

    async def capture(self) -> Captured:
        """Inside a mutation, after a command: the files and git references it changed."""
        changes = await asyncio.to_thread(self._look)
        after = await asyncio.to_thread(read_git_state, self.workspace.root)
        git: list[GitChange] = []
        if after != self._git_before:
            git = await asyncio.to_thread(describe_changes, self._git_before, after, self.workspace.root)
        self._git_before = after
        return Captured(tuple(changes), tuple(git))

    async def absorb(self, written: Sequence[FileChange]) -> None:
        """Inside a mutation, after Belay wrote files: take them in; anything else found there is external."""
        expected: dict[str, str | None] = {}
        for change in written:
            if change.old_path is not None:
                expected[change.old_path] = None
            expected[change.path] = change.after_hash
        surprises = await asyncio.to_thread(self.index.expect, expected)
        if surprises:
            await self._on_external(surprises, "while Belay was writing those files")

    def hold(self, call_id: str, paths: frozenset[str]) -> None:
        """An outside agent (Claude Code) will write these paths for `call_id`: leave their changes to it."""
        self._held[call_id] = paths

    def release(self, call_id: str) -> None:
        self._held.pop(call_id, None)

    def _look(self) -> list[FileChange]:
        """Blocking: what changed since the last look, from the dirty set when the watcher vouches for it."""
        # take() even when not watching: it reports `everything`, and restarts a watcher that lost events.
        dirty = self.watcher.take() if self.watcher is not None else None
        if dirty is None or dirty.everything:
            found = self.index.changes_since()
        elif not dirty.paths:
            return []
        else:
            found = self.index.changes_since(dirty.paths)
        held = frozenset().union(*self._held.values()) if self._held else frozenset()
        return [c for c in found if c.path not in held and c.old_path not in held] if held else found

    async def _settle(self, note: str) -> None:
        found = await asyncio.to_thread(self._look)
        if found:
            await self._on_external(found, note)

    def _on_dirty(self) -> None:
        """From the watcher's thread: something changed; look once things are quiet."""
        loop = self._loop
        if loop is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):  # the loop closed between the check and the call
                loop.call_soon_threadsafe(self._stirred.set)

    async def _settle_when_quiet(self) -> None:
        while True:
            await self._stirred.wait()
            while self._stirred.is_set():
                self._stirred.clear()
                await asyncio.sleep(QUIET_S)
            if self._lock.locked():
                continue  # a mutation is running: it settles what came before it, and captures the rest
            async with self._lock:
                try:
                    await self._settle("while no call was running")
                except OSError as e:
                    log.warning("could not look at the workspace for outside changes: %s", e)

    def __repr__(self) -> str:
        return f"<ChangeTracker {self.workspace.root} watching={self.watching} busy={self._lock.locked()}>"
