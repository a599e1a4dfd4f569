"""Results of read-only tool calls, kept until anything they read changes.

Agents read the same files and grep the same trees again and again; a
cacheable tool's result (`Tool.cacheable`, `Tool.reads()`) is kept here,
keyed by the call's canonical arguments, and dies the moment a path it
read changes.  How the console uses it, so that a hit is never stale
whatever changed the file (a tool, a shell command, the person's editor):

* `tracker.add_listener(cache.invalidate)`: every batch of paths the
  `DirtyTracker` records, and every "everything" after lost events or a
  restart, drops the entries that read them, on watchdog's thread.
* before serving a hit, `tracker.sync()` (off the loop): once it returns
  True every change made before the call has been through `invalidate`.
  When it returns False the call runs instead.
* `since = cache.begin()` before a tool runs, `cache.put(key, entry,
  since=since)` after: a change delivered while the tool was reading
  would otherwise find nothing to drop, and the stale result be stored.

Invalidation has to keep up with a burst (an `npm install` dirties ten
thousand paths), so entries are indexed by what they read: bare reads by
path, trees by their "dir/" prefix, and every read under each directory
that contains it.  A changed path then costs a few dictionary look-ups
plus one per enclosing directory not yet seen in the burst, however many
entries there are; never entries x paths.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

_LOG_LIMIT = 4096
"""Changed paths remembered for `put(since=...)`; a result older than the oldest one is refused."""


@dataclass(frozen=True)
class CacheEntry:
    """One stored result.  `data` is shared with whoever gets it: copy before changing it."""

    text: str
    data: dict[str, Any]
    reads: frozenset[str]
    """What the result depends on, as `Tool.reads()`: a file (or a directory's listing) "a/b.py", a whole tree
    "a/", or "" for the whole workspace."""
    size: int
    """Bytes counted against the cache's bound: the text's length plus a JSON estimate of `data`."""
    created: float
    """The cache's clock when the result was made; it expires `max_age_s` later."""

    @classmethod
    def of(cls, text: str, data: dict[str, Any], reads: Iterable[str], created: float) -> CacheEntry:
        """An entry with its size estimated."""
        size = len(text) + len(json.dumps(data, ensure_ascii=False, default=str))
        return cls(text, data, frozenset(reads), size, created)


@dataclass(frozen=True)
class CacheStats:
    """Counters since the cache was made, and what it holds now."""

    hits: int
    misses: int
    entries: int
    bytes: int
    invalidations: int
    """Entries dropped because something they read changed (not evictions or expiries)."""


def kills(changed: str, read: str) -> bool:
    """Whether a change at `changed` (a file, or a directory created, deleted or moved as a whole) may alter
    what a result reading `read` saw.  The rule the index implements; `put(since=...)` applies it directly."""
    if not read:
        return True
    if read.endswith("/"):
        return changed.startswith(read) or read.startswith(changed + "/")
    # A bare directory read is its listing, which a child's creation or deletion changes.
    return changed == read or read.startswith(changed + "/") or _parent(changed) == read


class ResultCache:
    """An LRU map of call keys to results, bounded in entries, bytes and age, invalidated by changed paths.

    Thread-safe: watchdog's thread invalidates while the loop's thread gets and puts.  One lock, held for
    dictionary work only.
    """

    def __init__(self, *, max_entries: int = 512, max_bytes: int = 32 * 1024 * 1024, max_age_s: float = 300.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.max_entries, self.max_bytes, self.max_age_s = max_entries, max_bytes, max_age_s
        self.clock = clock
        self._lock = threading.Lock()
        self._entries: OrderedDict[str, CacheEntry] = OrderedDict()  # least recently used first
        self._exact: dict[str, set[str]] = {}  # a bare read ("a/b.py", "a") -> keys
        self._trees: dict[str, set[str]] = {}  # a tree read ("a/", "" for everything) -> keys
        self._under: dict[str, set[str]] = {}  # "a/" -> keys with a read inside "a" or of its tree ("a/b.py", "a/")
        self._seq = 0  # bumped by each invalidate or clear
        self._floor = 0  # puts begun before this are refused: what changed then is no longer in `_log`
        self._log: deque[tuple[int, str]] = deque()  # (seq, changed path), oldest first
        self._bytes = self._hits = self._misses = self._invalidations = 0

    @staticmethod
    def key(tool: str, args: Mapping[str, Any]) -> str:
        """The cache key of a call: sha256 of its canonical JSON.  `args` must be JSON (`model_dump(mode="json")`)."""
        canonical = json.dumps([tool, args], sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()

    def get(self, key: str) -> CacheEntry | None:
        """The stored result, counted as a hit; None (a miss) when absent or expired."""
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None and self.clock() - entry.created > self.max_age_s:
                self._remove(key)
                entry = None
            if entry is None:
                self._misses += 1
                return None
            self._entries.move_to_end(key)
            self._hits += 1
            return entry

    def begin(self) -> int:
        """A mark to take before a tool starts reading, for `put(since=...)`."""
        with self._lock:
            return self._seq

    def put(self, key: str, entry: CacheEntry, *, since: int | None = None) -> None:
        """Stores `entry` under `key`, evicting the least recently used beyond the bounds.

        Any older result under `key` is dropped either way.  Not stored: an entry larger than a quarter of
        `max_bytes`, and, given `since` from `begin()`, one that read something invalidated since (or whose
        changes have been forgotten).  The check and the store are one step under the lock.
        """
        with self._lock:
            if key in self._entries:
                self._remove(key)
            if entry.size > self.max_bytes / 4 or (since is not None and self._changed_since(since, entry.reads)):
                return
            self._entries[key] = entry
            self._bytes += entry.size
            for read in entry.reads:
                self._index(read, key)
            while len(self._entries) > self.max_entries or self._bytes > self.max_bytes:
                self._remove(next(iter(self._entries)))

    def invalidate(self, paths: Iterable[str], everything: bool = False) -> int:
        """Drops every entry that read something in `paths` (all of them when `everything`); how many.

        Fits `DirtyTracker.add_listener`.  A path may be a file or a directory changed as a whole.
        """
        with self._lock:
            self._seq += 1
            if everything:
                return self._drop_all(counted=True)
            victims: set[str] = set()
            walked: set[str] = set()  # directories whose enclosing trees are in `victims` already
            for path in paths:
                changed = path.rstrip("/")
                if not changed:
                    return self._drop_all(counted=True)
                self._collect(changed, victims, walked)
                if self._log and self._log[-1][1] == changed:  # watchdog reports a write 2 or 3 times
                    self._log[-1] = (self._seq, changed)
                else:
                    self._log.append((self._seq, changed))
            while len(self._log) > _LOG_LIMIT:
                self._floor = self._log.popleft()[0]
            for key in victims:
                self._remove(key)
            self._invalidations += len(victims)
            return len(victims)

    def clear(self) -> None:
        """Forgets every result, and refuses those being made now."""
        with self._lock:
            self._seq += 1
            self._drop_all(counted=False)

    @property
    def stats(self) -> CacheStats:
        with self._lock:
            return CacheStats(self._hits, self._misses, len(self._entries), self._bytes, self._invalidations)

    def _collect(self, changed: str, victims: set[str], walked: set[str]) -> None:
        """Adds the keys of entries with a read that `kills(changed, read)`.

        The trees enclosing `changed` ("", "a/", "a/b/"...) are looked up once per parent directory in a call:
        the other paths of a burst into the same directory cost three look-ups each.
        """
        slash = changed.rfind("/")
        parent = changed[:slash] if slash != -1 else ""
        for keys in (self._exact.get(changed), self._exact.get(parent), self._under.get(changed + "/")):
            if keys:
                victims.update(keys)
        if parent in walked:
            return
        walked.add(parent)
        trees = self._trees
        if keys := trees.get(""):
            victims.update(keys)
        slash = changed.find("/")
        while slash != -1:
            if keys := trees.get(changed[:slash + 1]):
                victims.update(keys)
            slash = changed.find("/", slash + 1)

    def _changed_since(self, since: int, reads: frozenset[str]) -> bool:
        if since < self._floor:
            return True
        for seq, changed in reversed(self._log):
            if seq <= since:
                return False
            if any(kills(changed, read) for read in reads):
                return True
        return False

    def _index(self, read: str, key: str) -> None:
        (self._trees if read == "" or read.endswith("/") else self._exact).setdefault(read, set()).add(key)
        for prefix in _prefixes(read):
            self._under.setdefault(prefix, set()).add(key)

    def _unindex(self, read: str, key: str) -> None:
        _discard(self._trees if read == "" or read.endswith("/") else self._exact, read, key)
        for prefix in _prefixes(read):
            _discard(self._under, prefix, key)

    def _remove(self, key: str) -> None:
        entry = self._entries.pop(key)
        self._bytes -= entry.size
        for read in entry.reads:
            self._unindex(read, key)

    def _drop_all(self, counted: bool) -> int:
        dropped = len(self._entries)
        for index in (self._entries, self._exact, self._trees, self._under, self._log):
            index.clear()
        self._bytes, self._floor = 0, self._seq
        self._invalidations += dropped if counted else 0
        return dropped

    def __repr__(self) -> str:
        s = self.stats
        return (f"<ResultCache {s.entries}/{self.max_entries} entries {s.bytes}/{self.max_bytes} bytes"
                f" hits={s.hits} misses={s.misses} invalidations={s.invalidations}>")


def _parent(path: str) -> str:
    return path[:path.rfind("/")] if "/" in path else ""


def _prefixes(read: str) -> Iterator[str]:
    """The "dir/" prefixes of `read`, outermost first: "a/b/c.py" and "a/b/" both give "a/" and "a/b/"."""
    slash = read.find("/")
    while slash != -1:
        yield read[:slash + 1]
        slash = read.find("/", slash + 1)


def _discard(index: dict[str, set[str]], read: str, key: str) -> None:
    keys = index.get(read)
    if keys is not None:
        keys.discard(key)
        if not keys:
            del index[read]
