"""ResultCache: a result is served until something it read changes, never after."""

from __future__ import annotations

import random
import subprocess
import threading
import time
from collections.abc import Iterable
from pathlib import Path

import pytest

from core.changes.watcher import DirtyTracker
from core.run.results import CacheEntry, CacheStats, ResultCache, kills
from tests.conftest import RUNAWAY_S


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def entry(*reads: str, text: str = "result", size: int | None = None, created: float | None = None) -> CacheEntry:
    made = CacheEntry.of(text, {"n": 1}, reads, time.monotonic() if created is None else created)
    return made if size is None else CacheEntry(made.text, made.data, made.reads, size, made.created)


def filled(reads: dict[str, Iterable[str]]) -> ResultCache:
    cache = ResultCache()
    for key, read in reads.items():
        cache.put(key, entry(*read))
    return cache


def alive(cache: ResultCache, keys: Iterable[str]) -> set[str]:
    return {key for key in keys if cache.get(key) is not None}


def test_a_stored_result_is_a_hit_and_anything_else_a_miss() -> None:
    cache = ResultCache()
    stored = CacheEntry.of("3 matches", {"files": ["a.py"]}, ["src/"], time.monotonic())
    assert cache.get("k") is None
    cache.put("k", stored)
    assert cache.get("k") is stored and cache.get("k") is stored
    assert cache.get("other") is None
    assert cache.stats == CacheStats(hits=2, misses=2, entries=1, bytes=stored.size, invalidations=0)
    assert stored.size == len("3 matches") + len('{"files": ["a.py"]}')


def test_keys_are_canonical() -> None:
    key = ResultCache.key("Grep", {"pattern": "é", "path": "src", "opts": {"b": 1, "a": [1, 2]}})
    assert key == ResultCache.key("Grep", {"opts": {"a": [1, 2], "b": 1}, "path": "src", "pattern": "é"})
    assert len(key) == 64 and int(key, 16) >= 0
    assert key != ResultCache.key("Glob", {"pattern": "é", "path": "src", "opts": {"b": 1, "a": [1, 2]}})
    assert key != ResultCache.key("Grep", {"pattern": "é", "path": "src", "opts": {"b": 1, "a": [2, 1]}})


def test_the_least_recently_used_goes_first_beyond_max_entries() -> None:
    cache = ResultCache(max_entries=3)
    for key in "abc":
        cache.put(key, entry("f"))
    cache.get("a")
    cache.put("d", entry("f"))
    assert alive(cache, "abcd") == {"a", "c", "d"}
    cache.put("c", entry("g"))  # replacing is not growing
    assert cache.stats.entries == 3


def test_the_least_recently_used_goes_first_beyond_max_bytes() -> None:
    cache = ResultCache(max_bytes=1000)
    for key in "abcde":
        cache.put(key, entry("f", size=200))
    assert cache.stats.bytes == 1000
    cache.get("a")
    cache.put("f", entry("f", size=250))
    assert alive(cache, "abcdef") == {"a", "d", "e", "f"} and cache.stats.bytes == 850


def test_a_result_larger_than_a_quarter_of_the_bound_is_not_stored() -> None:
    cache = ResultCache(max_bytes=1000)
    cache.put("a", entry("f", size=100))
    cache.put("b", entry("f", size=100))
    cache.put("a", entry("f", size=251))  # and the older result under its key is gone too
    assert alive(cache, "ab") == {"b"} and cache.stats.bytes == 100


def test_results_expire_after_max_age() -> None:
    clock = Clock()
    cache = ResultCache(max_age_s=300, clock=clock)
    cache.put("k", entry("f", created=clock()))
    clock.now = 300
    assert cache.get("k") is not None
    clock.now = 300.5
    assert cache.get("k") is None
    assert cache.stats == CacheStats(hits=1, misses=1, entries=0, bytes=0, invalidations=0)


READS = {
    "file": ["src/a.py"],
    "nested": ["src/pkg/b.py"],
    "tree": ["src/"],
    "subtree": ["src/pkg/"],
    "listing": ["src/pkg"],
    "top": ["README.md"],
    "two": ["lib/c.py", "docs/"],
    "all": [""],
}


@pytest.mark.parametrize(("changed", "dead"), [
    ("src/a.py", {"file", "tree", "all"}),
    ("src/pkg/b.py", {"nested", "tree", "subtree", "listing", "all"}),
    ("src/pkg/new.py", {"tree", "subtree", "listing", "all"}),  # a new name in the listed directory
    ("src/pkg", {"nested", "tree", "subtree", "listing", "all"}),  # moved or deleted as a whole
    ("src", {"file", "nested", "tree", "subtree", "listing", "all"}),
    ("src/", {"file", "nested", "tree", "subtree", "listing", "all"}),
    ("docs/deep/x.md", {"two", "all"}),
    ("lib/c.py", {"two", "all"}),
    ("README.md", {"top", "all"}),
    ("src/a.pyc", {"tree", "all"}),
    ("srcx/a.py", {"all"}),
    ("sr", {"all"}),
    ("src2", {"all"}),
    ("lib/c.py.orig", {"all"}),
])
def test_a_change_kills_exactly_the_results_that_read_it(changed: str, dead: set[str]) -> None:
    cache = filled(READS)
    assert cache.invalidate([changed]) == len(dead)
    assert alive(cache, READS) == set(READS) - dead
    assert cache.stats.invalidations == len(dead)


def test_everything_kills_everything() -> None:
    cache = filled(READS)
    assert cache.invalidate([], everything=True) == len(READS)
    assert cache.stats.entries == 0 and cache.stats.bytes == 0
    cache.put("again", entry("src/a.py"))
    assert cache.get("again") is not None


def test_the_index_agrees_with_the_rule_on_random_trees() -> None:
    rng = random.Random(3)
    names = ["a", "b", "ab", "a.py"]

    def path() -> str:
        return "/".join(rng.choice(names) for _ in range(rng.randint(1, 4)))

    for _ in range(300):
        reads = {f"k{i}": {rng.choice([path(), path() + "/", ""]) if rng.random() < 0.1 else
                           rng.choice([path(), path() + "/"]) for _ in range(rng.randint(1, 3))}
                 for i in range(20)}
        changed = [path() for _ in range(rng.randint(1, 3))]
        cache = filled(reads)
        cache.invalidate(changed)
        expected = {k for k, rs in reads.items() if not any(kills(c, r) for c in changed for r in rs)}
        assert alive(cache, reads) == expected, (reads, changed)


@pytest.mark.timeout(RUNAWAY_S)  # milliseconds here (an `npm install` sends such bursts); its figure is not in bench/
def test_a_burst_of_ten_thousand_paths_against_500_results_is_fast() -> None:
    cache = ResultCache()
    for i in range(500):
        reads = [f"src/m{i % 40}/f{i}.py", f"node_modules/pkg{i}/", "src/" if i % 50 == 0 else f"lib/l{i}/"]
        cache.put(f"k{i}", entry(*reads))
    burst = [f"node_modules/pkg{i % 300}/lib/dist/esm/part{i}.js" for i in range(10_000)]
    dropped = cache.invalidate(burst)
    assert dropped == 300 and cache.stats.entries == 200


def test_a_result_whose_reads_changed_while_it_was_made_is_not_stored() -> None:
    cache = ResultCache()
    since = cache.begin()
    cache.invalidate(["src/a.py"])  # delivered while the tool was still reading: nothing to drop yet
    cache.put("stale", entry("src/"), since=since)
    cache.put("fresh", entry("lib/"), since=since)
    cache.put("later", entry("src/"), since=cache.begin())
    assert alive(cache, ["stale", "fresh", "later"]) == {"fresh", "later"}


def test_repeated_events_for_one_path_are_remembered_once_and_as_the_latest() -> None:
    cache = ResultCache()
    since = cache.begin()
    cache.invalidate(["log.txt"])
    for _ in range(10_000):  # created, modified, closed...: one entry, not ten thousand
        cache.invalidate(["busy.txt"])
    cache.put("unrelated", entry("src/"), since=since)
    since = cache.begin()
    cache.invalidate(["busy.txt"])
    cache.put("busy", entry("busy.txt"), since=since)
    assert alive(cache, ["unrelated", "busy"]) == {"unrelated"}


def test_a_result_begun_before_everything_or_a_forgotten_change_is_not_stored() -> None:
    cache = ResultCache()
    since = cache.begin()
    cache.invalidate([], everything=True)
    cache.put("before everything", entry("lib/"), since=since)
    since = cache.begin()
    cache.invalidate(f"other/f{i}" for i in range(5000))  # more than the cache remembers
    cache.put("before the flood", entry("lib/"), since=since)
    since = cache.begin()
    cache.clear()
    cache.put("before clear", entry("lib/"), since=since)
    assert cache.stats.entries == 0


def test_threads_getting_putting_and_invalidating_leave_it_consistent() -> None:
    cache = ResultCache(max_entries=64)
    files = [f"d{i % 7}/f{i}.py" for i in range(100)]
    errors: list[BaseException] = []

    def work(seed: int) -> None:
        rng = random.Random(seed)
        try:
            for _ in range(3000):
                key = f"k{rng.randrange(100)}"
                action = rng.random()
                if action < 0.5:
                    cache.get(key)
                elif action < 0.9:
                    cache.put(key, entry(files[int(key[1:])], f"d{rng.randrange(7)}/"), since=cache.begin())
                else:
                    cache.invalidate(rng.sample(files, 3))
        except BaseException as e:
            errors.append(e)
            raise

    threads = [threading.Thread(target=work, args=(n,)) for n in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    left = [cache.get(f"k{i}") for i in range(100)]
    stats = cache.stats
    assert 0 < stats.entries <= 64 and stats.bytes == sum(e.size for e in left if e is not None)
    assert cache.invalidate(files) == stats.entries  # every entry is still indexed by what it read
    assert cache.stats.entries == 0 and cache.stats.bytes == 0


def test_a_file_changed_by_a_command_is_never_served_stale(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src/a.py").write_text("old")
    tracker, cache = DirtyTracker(tmp_path), ResultCache()
    tracker.add_listener(cache.invalidate)
    assert tracker.start()
    try:
        for i in range(30):
            key = ResultCache.key("Read", {"path": "src/a.py"})
            cache.put(key, entry("src/a.py", text=(tmp_path / "src/a.py").read_text()), since=cache.begin())
            subprocess.run(["sh", "-c", f"echo {i} > src/a.py"], cwd=tmp_path, check=True)
            assert tracker.sync()
            assert cache.get(key) is None, i
        assert cache.stats.invalidations == 30
    finally:
        tracker.stop()
