"""The pipeline's side of the result cache: when a read-only call may be answered without running.

A hit is never stale.  Entries are dropped by the workspace watcher the
moment a path they read changes, whoever changed it (a tool, a shell
command, the person's editor), and before a hit is served the watcher's
barrier (`DirtyTracker.sync`) makes sure every change made until now has
been seen.  A result is only stored if nothing it read changed while the
tool was running (`ResultCache.put(since=...)` checks that and stores in
one step).  Without a working watcher nothing is served or stored.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from core.changes.watcher import DirtyTracker
from core.paths import Workspace
from core.run.results import CacheEntry, CacheStats, ResultCache
from core.tools.base import Tool, ToolArgs, ToolContext, ToolOutput


class CallCache:
    """Serves and stores results of cacheable tools for one workspace."""

    def __init__(self, cache: ResultCache, workspace: Workspace, sync: Callable[[], bool]) -> None:
        self.cache, self.workspace = cache, workspace
        self._sync = sync

    @classmethod
    def kept_by(cls, watcher: DirtyTracker | None, workspace: Workspace) -> CallCache | None:
        """A cache the watcher keeps fresh; None where no watcher can tell the moment what a result read changes."""
        if watcher is None or not watcher.watching:
            return None
        cache = cls(ResultCache(), workspace, watcher.sync)
        watcher.add_listener(cache.changed)
        return cache

    def changed(self, paths: frozenset[str], everything: bool) -> None:
        """A watcher listener (any thread): drop the entries that read these paths."""
        self.cache.invalidate(paths, everything)

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

    def begin(self) -> int:
        """Taken before a cacheable tool starts reading."""
        return self.cache.begin()

    async def store(self, since: int, tool: Tool, args: ToolArgs, output: ToolOutput) -> None:
        reads = await asyncio.to_thread(tool.reads, args, self.workspace)
        if reads is None or not await asyncio.to_thread(self._sync):  # sync: what it read has all been seen
            return
        entry = CacheEntry.of(output.text, dict(output.data), reads, time.monotonic())
        self.cache.put(ResultCache.key(tool.name, args.model_dump(by_alias=True)), entry, since=since)

    def __repr__(self) -> str:
        return f"<CallCache {self.cache.stats}>"
