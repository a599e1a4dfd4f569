"""Diff previews at native speed: Belay's preview against `git diff --histogram` on the same two files.

Three figures, each with its baseline measured in the same run, the two sides alternating:
- diff_100k: a 100,000-line Python file (4.3 MB) with 10 scattered edits (seven lines replaced, two
  inserted, one removed).  Belay's side is the whole preview the approval path computes before it asks
  (`Calls._preview`: the `FileDiff` of the write and its proposed content), from the two versions in memory
  as the write tool holds them; the baseline is `git diff --no-index --histogram` on the same two files,
  already on disk and in the page cache (a process that reads both, diffs them and prints the patch).
  Medians of ROUNDS rounds, wall clock (CPU time beside).
- diff_100k_longest_stall: the longest gap between the 1 ms ticks of the main thread while the 100k-line
  preview runs in a worker thread, as the console runs it (`asyncio.to_thread`): how long the window would
  stop.
- diff_repetitive: 120 distinct lines repeated to 20k, 40k, 80k and 160k lines, with 10 scattered edits at
  the same fractions of the file: Belay's preview per line and the ratio of its time at 160k to its time at
  20k (linear would be 8; every line matches 1 in 120 of the others, where a quadratic diff shows), in CPU
  time, which the other programs on a shared machine stretch less than the wall clock: medians over as many
  rounds as make the same number of lines at every size (88 at 20k, 11 at 160k), with the best rounds'
  and the wall-clock ratios beside.  Also against 40k: at 20k no line has more matches than xdiff's
  threshold for frequent lines (about the square root of the line count, rounded up to a power of two:
  256); from 40k every line has, and xdiff then scans 100 lines around each (xdl_clean_mmatch): a step in
  the cost per line, not a growth; and against 80k, where one more doubling shows the cost per line has
  settled.  git diff --histogram on the same files for reference: its own ratio,
  and Belay against it.
- diff <pattern>, one figure per edit pattern, each Belay's CPU time against git diff --histogram's (medians,
  turn about): growth (10,000 lines inserted in the middle of a 100k-line file), balanced (as many lines
  inserted as removed: 50 in at the top, 50 out at the bottom), deletion (10,000 lines removed from the middle),
  repetitive
  (the 160k-line file above), large (200k lines, 10 MB, 10 scattered edits) and binary (1 MB of random bytes,
  one byte changed every 4 KB; git only reports that they differ, as Belay's preview does).
The machine's load is printed before and after.

Run: .venv/bin/python bench/diff.py
"""

from __future__ import annotations

import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from types import SimpleNamespace
from typing import NamedTuple

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.changes.gitproc import GIT, git_env  # noqa: E402
from core.paths import Workspace  # noqa: E402
from core.run.calls import Calls  # noqa: E402
from core.tools.base import FileWrite, WritePlan  # noqa: E402

ROUNDS = 11
PATTERN_ROUNDS = 5
REPETITIVE_SIZES = (20_000, 40_000, 80_000, 160_000)


def source(count: int) -> list[str]:
    """A Python module: a function every 20 lines, distinct statements."""
    return [f"def function_{n}(x, y):\n" if n % 20 == 0 else f"    value_{n} = compute(x, y, {n % 97}) + {n}\n"
            for n in range(count)]


def repetitive(count: int) -> list[str]:
    return [f"    value_{n % 120} = compute(value_{n % 120 - 1}, {n % 120})\n" for n in range(count)]


def scattered_edits(lines: list[str], seed: int) -> list[str]:
    """Ten edits at random places, at the same fractions of the file whatever its length: seven lines
    replaced, two inserted, one removed (from the end backwards, so that each place is the one drawn)."""
    rng = random.Random(seed)
    places = sorted((len(lines) * k // 10_000 for k in rng.sample(range(1, 10_000), 10)), reverse=True)
    new = list(lines)
    for k, at in enumerate(places):
        if k in (2, 6):
            new.insert(at, f"    log('inserted at {at}')\n")
        elif k == 4:
            del new[at]
        else:
            new[at] = new[at].rstrip("\n") + "  # edited\n"
    return new


class Pair:
    """Two versions of one file, in memory (for Belay) and on disk (for git)."""

    def __init__(self, root: Path, name: str, old: list[str], new: list[str]) -> None:
        self.before, self.after = "".join(old).encode(), "".join(new).encode()
        self.dir = root / name
        self.dir.mkdir()
        (self.dir / "a").write_bytes(self.before)
        (self.dir / "b").write_bytes(self.after)
        self.workspace = Workspace(self.dir)
        self.plan = WritePlan(writes=(FileWrite(path=self.dir / "a", before=self.before, after=self.after),),
                              message="edited")
        self.lines = len(old)

    def belay(self) -> tuple[float, float]:
        """The approval path's preview (`Calls._preview` reads only the workspace of its Calls): wall and CPU
        seconds."""
        started, cpu = time.perf_counter(), time.process_time()
        diffs, proposed = Calls._preview(SimpleNamespace(workspace=self.workspace), self.plan)  # type: ignore[arg-type]
        elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
        assert (diffs[0].hunks or diffs[0].binary) and len(proposed) == 1
        return elapsed, cpu

    def git(self) -> tuple[float, float]:
        """git diff in its own process: wall seconds, and the CPU seconds of the process."""
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        proc = subprocess.run([GIT, "diff", "--no-index", "--no-color", "--histogram", "--", "a", "b"],
                              cwd=self.dir, env=git_env(), capture_output=True, check=False)
        elapsed = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        assert proc.returncode == 1 and proc.stdout, proc.stderr  # binary: "Binary files a and b differ"
        return elapsed, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def longest_stall(pair: Pair, rounds: int) -> float:
    """The median over `rounds` of the longest gap between 1 ms ticks of this thread while the preview runs in
    another."""
    stalls = []
    for _ in range(rounds):
        worker = threading.Thread(target=pair.belay, name="preview")
        longest, last = 0.0, time.perf_counter()
        worker.start()
        while worker.is_alive():
            time.sleep(0.001)
            now = time.perf_counter()
            longest, last = max(longest, now - last), now
        worker.join()
        stalls.append(longest)
    return statistics.median(stalls)


def alternate(pair: Pair, rounds: int) -> Timing:
    """Medians of Belay's preview and of git diff, measured turn about."""
    pair.belay()  # the first diff imports pygit2; a preview in a running Belay does not pay it again
    ours, theirs = [], []
    for _ in range(rounds):
        ours.append(pair.belay())
        theirs.append(pair.git())
    medians = (statistics.median(t[k] for t in side) for side in (ours, theirs) for k in (0, 1))
    return Timing(*medians, min(t[1] for t in ours), min(t[1] for t in theirs))


class Timing(NamedTuple):
    """Medians of wall and CPU seconds on each side, and each side's least CPU time (its best round)."""

    belay: float
    belay_cpu: float
    git: float
    git_cpu: float
    belay_best_cpu: float
    git_best_cpu: float


def patterns(root: Path) -> dict[str, Pair]:
    """The edit patterns of the `diff <pattern>` figures, besides the repetitive one."""
    lines = source(100_000)
    wide = [f"    value_{n} = compute(x, y, {n % 97}) + {n}  # {'w' * 12}\n" for n in range(200_000)]
    noise = random.Random(3).randbytes(1 << 20)
    flipped = bytearray(noise)
    flipped[::4096] = bytes((b ^ 0xFF) for b in flipped[::4096])
    pairs = {
        "growth": Pair(root, "growth", lines, lines[:50_000] + [f"    added_{n} = {n}\n" for n in range(10_000)]
                       + lines[50_000:]),
        "balanced": Pair(root, "balanced", lines, [f"    top_{n} = {n}\n" for n in range(50)] + lines[:-50]),
        "deletion": Pair(root, "deletion", lines, lines[:45_000] + lines[55_000:]),
        "large": Pair(root, "large", wide, scattered_edits(wide, 4)),
    }
    binary = Pair(root, "binary", [], [])
    binary.before, binary.after = noise, bytes(flipped)
    (binary.dir / "a").write_bytes(noise)
    (binary.dir / "b").write_bytes(bytes(flipped))
    binary.plan = WritePlan(writes=(FileWrite(path=binary.dir / "a", before=noise, after=bytes(flipped)),),
                            message="edited")
    pairs["binary"] = binary
    return pairs


def main() -> None:
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs; "
          f"{subprocess.run([GIT, '--version'], capture_output=True, text=True).stdout.strip()}")
    with tempfile.TemporaryDirectory(prefix="belay-bench-diff-") as tmp:
        root = Path(tmp)
        lines = source(100_000)
        big = Pair(root, "big", lines, scattered_edits(lines, 1))
        t = alternate(big, ROUNDS)
        print(f"100k lines ({len(big.before) / 1e6:.1f} MB), 10 scattered edits, medians of {ROUNDS}: "
              f"Belay's preview {t.belay * 1000:.1f} ms ({t.belay_cpu * 1000:.1f} ms CPU), "
              f"git diff --histogram {t.git * 1000:.1f} ms ({t.git_cpu * 1000:.1f} ms CPU)")
        stall = longest_stall(big, ROUNDS)
        rep = {}
        for count in REPETITIVE_SIZES:
            lines = repetitive(count)
            rounds = ROUNDS * REPETITIVE_SIZES[-1] // count  # as many lines diffed at every size
            rep[count] = r = alternate(Pair(root, f"rep{count}", lines, scattered_edits(lines, 2)), rounds)
            print(f"repetitive {count:>7,} lines: Belay {r.belay * 1000:6.1f} ms, CPU {r.belay_cpu / count * 1e9:4.0f} "
                  f"ns/line; git diff --histogram {r.git * 1000:6.1f} ms, CPU {r.git_cpu / count * 1e9:4.0f} ns/line")
        by_pattern = {name: alternate(pair, PATTERN_ROUNDS) for name, pair in patterns(root).items()}
        by_pattern["repetitive"] = rep[REPETITIVE_SIZES[-1]]
        for name, r in by_pattern.items():
            print(f"{name:>10}: Belay {r.belay * 1000:6.1f} ms ({r.belay_cpu * 1000:6.1f} ms CPU); "
                  f"git diff --histogram {r.git * 1000:6.1f} ms ({r.git_cpu * 1000:6.1f} ms CPU)")
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    print(f"RESULT diff_100k = {t.belay / t.git:.2f} x (git diff --histogram, {t.git * 1000:.1f} ms; "
          f"Belay {t.belay * 1000:.1f} ms; in CPU time {t.belay_cpu / t.git_cpu:.2f} x)")
    print(f"RESULT diff_100k_longest_stall = {stall * 1000:.1f} ms (the preview itself: {t.belay * 1000:.1f} ms; "
          f"a 1 ms ticker on the main thread while it runs in a worker thread)")
    low, high = REPETITIVE_SIZES[0], REPETITIVE_SIZES[-1]
    for base in (low, 40_000, 80_000):
        ours, theirs = rep[high], rep[base]
        print(f"RESULT diff_repetitive_{high // 1000}k_vs_{base // 1000}k = {ours.belay_cpu / theirs.belay_cpu:.1f} x "
              f"(linear would be {high / base:.0f}; Belay's CPU time, medians; best rounds "
              f"{ours.belay_best_cpu / theirs.belay_best_cpu:.1f} x, wall medians {ours.belay / theirs.belay:.1f} x; "
              f"git diff --histogram's CPU time {ours.git_cpu / theirs.git_cpu:.1f} x)")
    print(f"RESULT diff_repetitive_160k = {rep[high].belay / rep[high].git:.2f} x (git diff --histogram, "
          f"{rep[high].git * 1000:.1f} ms)")
    for name, r in by_pattern.items():
        print(f"RESULT diff {name} = {r.belay_cpu / r.git_cpu:.2f} x (git diff --histogram, CPU: "
              f"{r.git_cpu * 1000:.1f} ms; Belay {r.belay_cpu * 1000:.1f} ms)")


if __name__ == "__main__":
    main()
