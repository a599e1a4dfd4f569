"""The pipeline's side of the result cache: when a read-only call may be answered without running.

A hit is never stale.  Entries are dropped by the workspace watcher the
moment a path they read changes, whoever changed it (a tool, a shell
command, the person's editor), and before a hit is served the watcher's
barrier (`DirtyTracker.sync`) makes sure every change made until now has
been seen.  A result is only stored if nothing it read changed while the
tool was running: the changes seen since the run began are kept in a short
log and checked against what the result read.  Without a working watcher
nothing is served or stored.
"""

from __future__ import annotations

import asyncio
import collections
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from core.cache import CacheEntry, CacheStats, ResultCache
from core.paths import Workspace
from core.tools.base import Tool, ToolArgs, ToolContext, ToolOutput

CHANGE_LOG = 4096
"""Changed paths remembered to vet results of runs still in flight; past that, such results are not stored."""


@dataclass(frozen=True)
class Ticket:
    """Handed out when a cacheable run begins: where the change log stood then."""

    position: int


class CallCache:
    """Serves and stores results of cacheable tools for one workspace."""

    def __init__(self, cache: ResultCache, workspace: Workspace, sync: Callable[[], bool]) -> None:
        self.cache, self.workspace = cache, workspace
        self._sync = sync
        self._lock = threading.Lock()
        self._log: collections.deque[tuple[int, frozenset[str] | None]] = collections.deque(maxlen=CHANGE_LOG)
        self._position = 0

    def changed(self, paths: frozenset[str], everything: bool) -> None:
        """A watcher listener (any thread): drop entries that read these paths, note them for runs in flight."""
        self.cache.invalidate(paths, everything)
        with self._lock:
            self._position += 1
            self._log.append((self._position, None if everything else paths))

    @property
    def stats(self) -> CacheStats:
        return self.cache.stats

    async def lookup(self, tool: Tool, args: ToolArgs, ctx: ToolContext) -> CacheEntry | None:
        if not await asyncio.to_thread(self._sync):
            return None
        entry = self.cache.get(ResultCache.key(tool.name, args.model_dump(by_alias=True)))
        if entry is not None:
            await asyncio.to_thread(tool.on_cache_hit, args, ctx)
        return entry

    def begin(self) -> Ticket:
        with self._lock:
            return Ticket(self._position)

    async def store(self, ticket: Ticket, tool: Tool, args: ToolArgs, output: ToolOutput) -> None:
        reads = await asyncio.to_thread(tool.reads, args, self.workspace)
        if reads is None or not await asyncio.to_thread(self._sync):
            return
        if self._changed_since(ticket, reads):
            return  # something it read changed while it ran: the result may already be stale
        size = len(output.text.encode()) + len(repr(output.data))
        self.cache.put(ResultCache.key(tool.name, args.model_dump(by_alias=True)),
                       CacheEntry(output.text, dict(output.data), reads, size, time.monotonic()))

    def _changed_since(self, ticket: Ticket, reads: frozenset[str]) -> bool:
        with self._lock:
            if self._position - ticket.position > len(self._log):
                return True  # the log no longer reaches back that far
            recent = [paths for position, paths in self._log if position > ticket.position]
        return any(paths is None or any(touches(p, r) for p in paths for r in reads) for paths in recent)

    def __repr__(self) -> str:
        return f"<CallCache {self.cache.stats}>"


def touches(changed: str, read: str) -> bool:
    """Whether a change to `changed` (a file or a whole directory) can alter a result that read `read`."""
    if read == "" or changed == read:
        return True
    if read.endswith("/"):
        return changed.startswith(read) or changed == read[:-1] or read.startswith(changed + "/")
    return read.startswith(changed + "/")
