"""The console's memory: what a call leaves behind once it is over, measured as resident set size (RSS).

One console (its timeline, journal and blob store), in bypass mode so nobody is asked, takes every call
through the real pipeline (policy, change capture, journal, events, timeline):
- a warm-up of one-byte writes and of 1 MB writes, so that imports, the journal's page cache and the
  allocator's pools have reached their working size before anything is measured;
- 200 Write calls of one byte each and 200 Write calls of 1 MB each, each to a new file, in rounds of 50 and
  50 that take turns going first: the RSS each large write adds against what each small one adds, the
  baseline (a console that keeps only an excerpt of each call's arguments grows about as much for both;
  one that keeps whole arguments grows by their size);
- then 1,000 more one-byte writes: the RSS one thousand calls add (what the timeline keeps per call, plus the
  allocator's and the journal's share);
- last, with tracemalloc on, 50 more of each: the Python objects each kind of call leaves behind.  The RSS
  moves by a few MB either way as the allocator's pools grow and shrink, which is a good part of a
  per-call figure; the traced heap is free of that noise (it leaves out SQLite's and Qt's own memory).
  Much of that noise is the worker threads' malloc arenas: each keeps the last megabyte buffer it freed
  resident (malloc_trim does not shrink a thread arena's top), so large rounds read about a megabyte or two
  high and the small rounds after them low; it is bounded by the number of threads, not of calls.
It also prints how many characters of arguments the timeline keeps for a 1 MB write (its excerpt).
"""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import gc
import json
import os
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core import Console  # noqa: E402

WRITES = 200
ROUNDS = 4
BIG = 1024 * 1024
MANY = 1_000
WARM_UP = 50
WARM_UP_BIG = 20
TRACED = 50


def _trimmer() -> Callable[[], object]:
    """glibc's malloc_trim: hands memory the allocator keeps free back to the system (a no-op elsewhere)."""
    try:
        trim = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim
    except (OSError, AttributeError):
        return lambda: None
    return lambda: trim(0)


_trim = _trimmer()


def rss_mb() -> float:
    """This process's resident set size now, after a full garbage collection and a malloc_trim.

    A megabyte buffer freed a moment ago may still sit in the allocator's pools, counted in the RSS until
    the next allocation reuses it; that is not what a call leaves behind, and it made the one-byte baseline
    swing by megabytes (even below zero) depending on what ran before it."""
    gc.collect()
    _trim()
    with open("/proc/self/statm") as statm:
        resident_pages = int(statm.read().split()[1])
    return resident_pages * os.sysconf("SC_PAGE_SIZE") / 2**20


async def writes(console: Console, agent: object, folder: Path, count: int, size: int) -> float:
    """RSS growth (MB) after `count` Write calls of `size` bytes each, every one to a new file."""
    before = rss_mb()
    for i in range(count):
        content = ("x" * (size - 1) + "\n") if size > 1 else "x"
        outcome = await console.call(agent, "Write", {"file_path": str(folder / f"f{i}.txt"), "content": content})
        assert outcome.status.value == "done", outcome.text
        del content
    return rss_mb() - before


async def traced_writes(console: Console, agent: object, folder: Path, count: int, size: int) -> float:
    """Growth of the traced Python heap (KB per call) over `count` Write calls of `size` bytes each."""
    gc.collect()
    before = tracemalloc.get_traced_memory()[0]
    for i in range(count):
        content = ("x" * (size - 1) + "\n") if size > 1 else "x"
        outcome = await console.call(agent, "Write", {"file_path": str(folder / f"f{i}.txt"), "content": content})
        assert outcome.status.value == "done", outcome.text
        del content, outcome
    gc.collect()
    return (tracemalloc.get_traced_memory()[0] - before) / 1024 / count


async def measure(root: Path) -> dict[str, Any]:
    work = root / "work"
    work.mkdir()
    async with Console(work, state_dir=root / "state") as console:
        console.set_mode("bypass")
        agent = await console.start_agent("bench", "scripted")
        await writes(console, agent, work / "warm", WARM_UP, 1)  # imports, caches and the journal's first pages
        await writes(console, agent, work / "warm-big", WARM_UP_BIG, BIG)  # the allocator's pools for big buffers
        started = time.perf_counter()
        rounds: dict[str, list[float]] = {"small": [], "big": []}
        for n in range(ROUNDS):
            kinds = [("small", 1), ("big", BIG)]
            for kind, size in kinds if n % 2 == 0 else reversed(kinds):
                rounds[kind].append(await writes(console, agent, work / f"{kind}{n}", WRITES // ROUNDS, size))
        small, big = sum(rounds["small"]), sum(rounds["big"])
        many = await writes(console, agent, work / "many", MANY, 1)
        tracemalloc.start()
        try:
            heap_small = await traced_writes(console, agent, work / "traced-small", TRACED, 1)
            heap_big = await traced_writes(console, agent, work / "traced-big", TRACED, BIG)
        finally:
            tracemalloc.stop()
        elapsed = time.perf_counter() - started
        runs = list(console.timeline.runs.values())
        assert len(runs) == WARM_UP + WARM_UP_BIG + 2 * WRITES + MANY + 2 * TRACED
        kept = max(len(json.dumps(run.args)) + len(run.output) for run in runs)
    return {"small": small, "big": big, "many": many, "elapsed": elapsed, "kept": kept, "heap_small": heap_small,
            "heap_big": heap_big, "rounds": rounds}


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        f = asyncio.run(measure(Path(tmp)))
    small_kb, big_kb = f["small"] * 1024 / WRITES, f["big"] * 1024 / WRITES
    print(f"RSS growth: {WRITES} one-byte Writes {f['small']:.1f} MB, {WRITES} Writes of 1 MB {f['big']:.1f} MB "
          f"({WRITES} MB written), {MANY:,} one-byte Writes {f['many']:.1f} MB; {f['elapsed']:.0f} s in all; "
          f"the timeline keeps at most {f['kept']:,} characters of one call's arguments and output")
    print("RSS growth by round of " + f"{WRITES // ROUNDS} (the allocator's noise): one-byte " +
          " ".join(f"{mb:+.1f}" for mb in f["rounds"]["small"]) + " MB; 1 MB " +
          " ".join(f"{mb:+.1f}" for mb in f["rounds"]["big"]) + " MB")
    # The baseline grows by a few KB per call, give or take the allocator's noise (it can even shrink), so a
    # ratio of the two says little: the difference, against the 1 MB more each large call carried, says it.
    print(f"RESULT rss_per_1mb_write = {big_kb:.1f} KB (one-byte writes: {small_kb:.1f} KB per call in the same "
          f"console; {big_kb - small_kb:+.1f} KB, {(big_kb - small_kb) / 1024:.1%} of the 1 MB more argument)")
    print(f"RESULT heap_per_1mb_write = {f['heap_big']:.1f} KB of Python objects (one-byte writes: "
          f"{f['heap_small']:.1f} KB per call in the same console)")
    print(f"RESULT memory_per_1000_calls = {f['many'] * 1000 / MANY:.1f} MB RSS growth per 1,000 calls (one-byte "
          f"Writes through the whole pipeline)")


if __name__ == "__main__":
    main()
