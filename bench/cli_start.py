"""Commands without the window: `belay calls`, `belay undo` and `belay gc` against a bare Python start, and
`belay gc` against SQLite's VACUUM of the same journal, in one run (issue 37, point 6).

A workspace gets a journal of 2,020 calls, made by a real console as Write calls of 200 files (in-process,
before anything is timed).  Then, alternating so that a busy machine slows every kind alike:
- bare: `python -c pass` with this interpreter (what any command costs before it does anything);
- calls: `belay calls` on the workspace, as its console script runs it (`from gui.terminal.cli import main`),
  timed from the spawn to the first byte it writes on standard output;
- undo: `belay undo` of one of the last 200 calls (each the newest of its file, so each undo goes through and
  each run undoes another; not those of the files the gc-again state's later calls changed), to its first
  output, which it writes once the files are back;
- gc: `belay gc --yes` on a fresh copy of the state as the calls left it (the copying is not timed), to its
  first output (the plan it prints before it removes anything) and to its end;
- gc again: the same, on the state a gc left and 20 calls made since (what a gc run now and then finds);
- vacuum: `VACUUM` on a fresh copy of the same journal, run in this process (the statement alone: the
  baseline the issue names).
Python's bytecode cache is in a scratch directory (PYTHONPYCACHEPREFIX), warmed by one unmeasured run of each.
Medians are reported; the machine's load is printed before and after.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
RUNS = int(os.environ.get("BELAY_BENCH_RUNS", "5"))
CALLS, FILES, LATER = 2020, 200, 20
SIDE_BY_SIDE = 10

BELAY = "import sys; from gui.terminal.cli import main; sys.exit(main())"
"""What the `belay` console script runs."""


def load() -> str:
    return f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs"


async def journal(ws: Path, state: Path, count: int, start: int = 0) -> list[str]:
    """`count` Write calls through a real console (the files in turn); their ids."""
    from core import Console, RunStatus

    async with Console(ws, state_dir=state) as console:
        await console.add_rule("Write", "allow", "session")
        agent = await console.start_agent("editor", "scripted")
        ids = []
        for first in range(start, start + count, SIDE_BY_SIDE):  # ten files at a time: calls on other paths overlap
            outcomes = await asyncio.gather(*(
                console.call(agent, "Write", {"file_path": str(ws / f"f{i % FILES:03}.py"),
                                              "content": f"# version {i}\n" + "x = 1\n" * 20})
                for i in range(first, min(first + SIDE_BY_SIDE, start + count))))
            assert all(o.status == RunStatus.DONE for o in outcomes), outcomes
            ids += [o.call_id for o in outcomes]
    return ids


class Runner:
    """Starts commands in a private state and config, with a scratch bytecode cache."""

    def __init__(self, tmp: Path) -> None:
        self.env = {**os.environ, "PYTHONPATH": str(ROOT), "BELAY_CONFIG_DIR": str(tmp / "config"),
                    "BELAY_STATE_DIR": str(tmp / "state"), "PYTHONPYCACHEPREFIX": str(tmp / "pycache")}
        self.env.pop("PYTHONDONTWRITEBYTECODE", None)
        self.cwd = tmp

    def first_output(self, *args: str) -> tuple[float, float, bytes]:
        """Seconds from the spawn to the first byte on stdout, and to the exit; what it wrote."""
        start = time.perf_counter()
        with subprocess.Popen([sys.executable, *args], cwd=self.cwd, env=self.env, stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE) as child:
            assert child.stdout is not None and child.stderr is not None
            first = child.stdout.read(1)
            at_first = time.perf_counter() - start
            rest = child.stdout.read()
            err = child.stderr.read()
            code = child.wait()
        ended = time.perf_counter() - start
        if code not in (0,) or (args[-1] != "pass" and not first):
            raise SystemExit(f"{' '.join(args[2:])}: exit {code}: {err.decode(errors='replace')[-800:]}")
        return (at_first if first else ended), ended, first + rest

    def belay(self, *args: str) -> tuple[float, float, bytes]:
        return self.first_output("-c", BELAY, *args)


def vacuum(journal_file: Path, scratch: Path) -> float:
    copy = scratch / "vacuum.sqlite3"
    shutil.copyfile(journal_file, copy)
    db = sqlite3.connect(copy, isolation_level=None)
    try:
        start = time.perf_counter()
        db.execute("VACUUM")
        return time.perf_counter() - start
    finally:
        db.close()
        for suffix in ("", "-wal", "-shm"):
            Path(f"{copy}{suffix}").unlink(missing_ok=True)


def fresh(saved: Path, state: Path) -> None:
    """The state as it was saved (a gc changes it): the journal copied, the blobs linked (a stored blob is never
    changed, only removed or packed anew)."""
    shutil.rmtree(state, ignore_errors=True)
    shutil.copytree(saved, state, copy_function=_link_blob)


def _link_blob(source: str, target: str) -> None:
    if f"{os.sep}blobs{os.sep}" in source:
        os.link(source, target)
    else:
        shutil.copy2(source, target)


def main() -> None:
    print(load())
    with tempfile.TemporaryDirectory(prefix="belay-cli-start-") as name:
        tmp = Path(name)
        ws, state = tmp / "ws", tmp / "state"
        ws.mkdir()
        (tmp / "config").mkdir()
        os.environ["BELAY_CONFIG_DIR"] = str(tmp / "config")
        made = time.perf_counter()
        ids = asyncio.run(journal(ws, state, CALLS))
        print(f"journal of {CALLS:,} calls made in {time.perf_counter() - made:.1f} s")
        from core import workspace_state_dir

        journal_file = workspace_state_dir(ws, state) / "journal.sqlite3"
        saved, saved_again = tmp / "saved", tmp / "saved-again"
        fresh(state, saved)
        run = Runner(tmp)
        run.belay("gc", "--workspace", str(ws), "--yes")  # then 20 calls: the state a later gc finds
        asyncio.run(journal(ws, state, LATER, start=CALLS))
        fresh(state, saved_again)
        fresh(saved, state)
        later = {i % FILES for i in range(CALLS, CALLS + LATER)}  # files the later calls changed: not undone
        undoable = [call for i, call in enumerate(ids) if i >= CALLS - FILES and i % FILES not in later]

        times: dict[str, list[float]] = {k: [] for k in ("bare", "calls", "undo", "gc", "gc end", "gc again",
                                                         "gc again end", "vacuum")}
        run.first_output("-c", "pass")  # warm the bytecode cache and the disk for each
        run.belay("calls", "--workspace", str(ws))
        for r in range(RUNS + 1):
            warm = r == 0
            bare = run.first_output("-c", "pass")[1]
            calls = run.belay("calls", "--workspace", str(ws))[0]
            undo = run.belay("undo", undoable.pop(), "--workspace", str(ws))[0]
            kept = tmp / "kept"  # the state as the undos left it: a gc changes it
            fresh(state, kept)
            gc_first, gc_end, _ = run.belay("gc", "--workspace", str(ws), "--yes")
            fresh(saved_again, state)
            again_first, again_end, _ = run.belay("gc", "--workspace", str(ws), "--yes")
            fresh(kept, state)
            vac = vacuum(journal_file, tmp)
            if warm:
                continue
            for key, value in (("bare", bare), ("calls", calls), ("undo", undo), ("gc", gc_first),
                               ("gc end", gc_end), ("gc again", again_first), ("gc again end", again_end),
                               ("vacuum", vac)):
                times[key].append(value)
    med = {k: statistics.median(v) for k, v in times.items()}
    for key, values in times.items():
        print(f"{key:>13}: median {med[key] * 1000:7.1f} ms over {len(values)} runs "
              f"({min(values) * 1000:.1f}-{max(values) * 1000:.1f})")
    print(load())
    ratios = {command: med[command] / med["bare"] for command in ("calls", "undo", "gc")}
    for command, ratio in ratios.items():
        print(f"RESULT cli start {command} vs bare python = {ratio:.2f} x (bare python start, "
              f"{med['bare'] * 1000:.0f} ms; to its first output)")
    worst = max(ratios, key=lambda c: ratios[c])
    print(f"RESULT cli start vs bare python = {ratios[worst]:.2f} x (bare python start; the worst of calls, undo "
          f"and gc: {worst})")
    print(f"RESULT gc vs vacuum = {med['gc end'] / med['vacuum']:.2f} x (sqlite VACUUM on the same journal, "
          f"{med['vacuum'] * 1000:.0f} ms; the whole `belay gc --yes` of {CALLS:,} calls, never compacted before)")
    print(f"RESULT gc again vs vacuum = {med['gc again end'] / med['vacuum']:.2f} x (sqlite VACUUM on the same "
          f"journal; `belay gc --yes` after a gc and {LATER} calls)")


if __name__ == "__main__":
    main()
