"""The orchestrator's costs and gains, each against a baseline measured in the same run.

Figures:
- no-op call vs limit: the same no-op call against what a call cannot do without: one hop to a worker thread
  and back with one SQLite WAL commit (synchronous=NORMAL: no fsync) done there, the journal's own way of
  committing; alternating rounds on the same loop, plain asyncio and the window's qasync loop, both printed;
- pipeline overhead: a no-op tool called through the whole console (validation, policy, events, journal,
  cache bookkeeping), per call, against bare asyncio task dispatch of the same no-op coroutine; the two
  sides alternate, ROUNDS rounds each, and the figure is the ratio of their medians (with the spread of the
  rounds: the machine is shared, one round alone says little);
- the same overhead on the window's loop (qasync over Qt, offscreen), where Belay's console runs;
- journal commits per call: the same no-op call one at a time, and BURST of them at once (group commit: several
  calls share a commit under load);
- parallel speed-up: 8 independent calls of 100 ms run as one batch, against the same 8 run one after
  another through the same console (goal: at least 6x);
- cache hit: a Read answered from the result cache, against the same Read running (a cache miss).
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import ClassVar

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core import AgentHandle, Console  # noqa: E402
from core.models.batches import BatchCall  # noqa: E402
from core.tools.base import Annotations, RunTool, ToolArgs, ToolContext, ToolOutput  # noqa: E402
from core.tools.catalog import default_tools  # noqa: E402

NOOP_CALLS = 200
ROUNDS = 15
BURST = 64
SLEEP_S = 0.1
PARALLEL = 8
READS = 30


class NoArgs(ToolArgs):
    pass


class NoOp(RunTool):
    name = "NoOp"
    description = "Do nothing."
    Args: ClassVar[type[ToolArgs]] = NoArgs
    annotations = Annotations(read_only=True, destructive=False, idempotent=True)

    async def run(self, args: ToolArgs, ctx: ToolContext) -> ToolOutput:
        return ToolOutput("")


class SleepArgs(ToolArgs):
    seconds: float


class Sleep(RunTool):
    name = "Sleep"
    description = "Wait, change nothing."
    Args: ClassVar[type[ToolArgs]] = SleepArgs
    annotations = Annotations(read_only=True, destructive=False, idempotent=True)

    async def run(self, args: ToolArgs, ctx: ToolContext) -> ToolOutput:
        assert isinstance(args, SleepArgs)
        await asyncio.sleep(args.seconds)
        return ToolOutput("slept")


async def noop() -> None:
    return None


async def bare_dispatch_us() -> float:
    started = time.perf_counter()
    for _ in range(NOOP_CALLS):
        await asyncio.ensure_future(noop())  # noqa: TID251 - the baseline is exactly a bare task dispatch
    return (time.perf_counter() - started) / NOOP_CALLS * 1e6


class Limit:
    """One thread hop with one WAL commit (no fsync) on the far side: what a journaled call cannot do without."""

    def __init__(self, path: Path) -> None:
        self._executor = ThreadPoolExecutor(1, thread_name_prefix="bench-limit")
        self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS calls (id INTEGER PRIMARY KEY, tool TEXT, status TEXT)")

    def _commit(self) -> None:
        self._db.execute("BEGIN IMMEDIATE")
        self._db.execute("INSERT INTO calls (tool, status) VALUES ('NoOp', 'done')")
        self._db.execute("COMMIT")

    async def us(self) -> float:
        loop = asyncio.get_running_loop()
        started = time.perf_counter()
        for _ in range(NOOP_CALLS):
            await loop.run_in_executor(self._executor, self._commit)
        return (time.perf_counter() - started) / NOOP_CALLS * 1e6

    def close(self) -> None:
        self._executor.shutdown()
        self._db.close()


async def pipeline_us(console: Console, agent: AgentHandle) -> float:
    started = time.perf_counter()
    for _ in range(NOOP_CALLS):
        await console.call(agent, "NoOp", {})
    return (time.perf_counter() - started) / NOOP_CALLS * 1e6


def commits(console: Console) -> int:
    """Transactions the console's journal writer has committed so far."""
    recorder = console._recorder  # noqa: SLF001 - the bench counts what the console does not show
    assert recorder is not None
    return recorder.writer.commits


async def overhead(console: Console, agent: AgentHandle, prefix: str = "") -> dict[str, float]:
    """The no-op call against bare dispatch, ROUNDS alternating rounds each: medians, ranges, ratio quartiles."""
    for _ in range(20):
        await console.call(agent, "NoOp", {})  # warm up: session row, first journal writes
    pipeline, bare, limits = [], [], []
    limit = Limit(console.workspace.root.parent / f"{prefix}limit.sqlite3")
    try:
        for _ in range(ROUNDS):  # alternating, so that a busy moment of the machine hits every side alike
            pipeline.append(await pipeline_us(console, agent))
            bare.append(await bare_dispatch_us())
            limits.append(await limit.us())
    finally:
        limit.close()
    ratios = sorted(p / b for p, b in zip(pipeline, bare, strict=True))
    over_limit = sorted(p / b for p, b in zip(pipeline, limits, strict=True))
    figures = {"pipeline_us": statistics.median(pipeline), "bare_us": statistics.median(bare),
               "pipeline_lo": min(pipeline), "pipeline_hi": max(pipeline), "bare_lo": min(bare), "bare_hi": max(bare),
               "ratio_q1": ratios[len(ratios) // 4], "ratio_q3": ratios[3 * len(ratios) // 4],
               "limit_us": statistics.median(limits), "limit_q1": over_limit[len(over_limit) // 4],
               "limit_q3": over_limit[3 * len(over_limit) // 4]}
    return {prefix + k: v for k, v in figures.items()}


async def measure_on_qasync(workspace: Path, state: Path) -> dict[str, float]:
    async with Console(workspace, state_dir=state, tools=[*default_tools(), NoOp(), Sleep()]) as console:
        agent = await console.start_agent("bench-qasync", "scripted")
        return await overhead(console, agent, "qt_")


def on_qasync(workspace: Path, state: Path) -> dict[str, float]:
    """`measure_on_qasync` on the loop the window runs (gui.window.runtime.loop): qasync over a Qt application,
    offscreen."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    from gui.window.runtime.loop import EventLoop

    app = QApplication.instance() or QApplication([])
    with asyncio.Runner(loop_factory=lambda: EventLoop(app)) as runner:
        return runner.run(measure_on_qasync(workspace, state))


async def measure(workspace: Path, state: Path) -> dict[str, float]:
    figures: dict[str, float] = {}
    async with Console(workspace, state_dir=state, tools=[*default_tools(), NoOp(), Sleep()]) as console:
        agent = await console.start_agent("bench", "scripted")
        figures |= await overhead(console, agent)

        before = commits(console)
        for _ in range(BURST):
            await console.call(agent, "NoOp", {})
        figures["commits_one_by_one"] = (commits(console) - before) / BURST
        before = commits(console)
        await asyncio.gather(*(console.call(agent, "NoOp", {}) for _ in range(BURST)))
        figures["commits_burst"] = (commits(console) - before) / BURST

        started = time.perf_counter()
        for _ in range(PARALLEL):
            await console.call(agent, "Sleep", {"seconds": SLEEP_S})
        figures["sequential_s"] = time.perf_counter() - started
        batch = [BatchCall(id=f"s{i}", tool="Sleep", args={"seconds": SLEEP_S}) for i in range(PARALLEL)]
        report = await console.run_batch(agent, batch)
        assert report.ok and report.max_running == PARALLEL, report
        figures["parallel_s"] = report.duration_s

        target = workspace / "module.py"
        misses, hits = [], []
        for round_ in range(READS):
            target.write_text("".join(f"def function_{i}(x):\n    return x + {round_}\n" for i in range(800)))
            started = time.perf_counter()
            miss = await console.call(agent, "Read", {"file_path": str(target)})
            misses.append(time.perf_counter() - started)
            started = time.perf_counter()
            hit = await console.call(agent, "Read", {"file_path": str(target)})
            hits.append(time.perf_counter() - started)
            assert not miss.cached and hit.cached, (miss.cached, hit.cached)
        figures["miss_ms"] = statistics.median(misses) * 1000
        figures["hit_ms"] = statistics.median(hits) * 1000
    return figures


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        workspace, state = Path(tmp) / "ws", Path(tmp) / "state"
        workspace.mkdir()
        f = asyncio.run(measure(workspace, state))
        f |= on_qasync(workspace, state)
    print(f"no-op call: {f['pipeline_us']:.0f} us through the pipeline (rounds {f['pipeline_lo']:.0f}-"
          f"{f['pipeline_hi']:.0f}), {f['bare_us']:.1f} us bare dispatch "
          f"(rounds {f['bare_lo']:.1f}-{f['bare_hi']:.1f}); "
          f"medians of {ROUNDS} alternating rounds of {NOOP_CALLS}, ratio per round {f['ratio_q1']:.0f}-"
          f"{f['ratio_q3']:.0f} x (quartiles). Journal commits per call: {f['commits_one_by_one']:.2f} one at a time, "
          f"{f['commits_burst']:.2f} with {BURST} at once. "
          f"{PARALLEL} x {SLEEP_S * 1000:.0f} ms: {f['sequential_s']:.2f} s one by one, {f['parallel_s']:.2f} s as a "
          f"batch. Read of a 27 KB file: {f['miss_ms']:.2f} ms running, {f['hit_ms']:.2f} ms from the cache "
          f"(medians of {READS})")
    for loop, key in (("plain asyncio", ""), ("the window's qasync loop", "qt_")):
        name = "no-op call vs limit" + (" (qasync)" if key else "")
        print(f"RESULT {name} = {f[key + 'pipeline_us'] / f[key + 'limit_us']:.2f} x the time (thread hop + WAL "
              f"commit: {f[key + 'limit_us']:.0f} us on {loop}, one hop to a worker thread and back with one "
              f"SQLite WAL commit without fsync; {f[key + 'pipeline_us']:.0f} us per no-op call; "
              f"per round {f[key + 'limit_q1']:.2f}-{f[key + 'limit_q3']:.2f} x; goal <= 3)")
    print(f"RESULT pipeline_overhead = {f['pipeline_us'] / f['bare_us']:.0f} x the time "
          f"(bare asyncio task dispatch of the same no-op; {f['pipeline_us']:.0f} us per call)")
    print(f"no-op call on the window's loop (qasync): {f['qt_pipeline_us']:.0f} us through the pipeline "
          f"(rounds {f['qt_pipeline_lo']:.0f}-{f['qt_pipeline_hi']:.0f}), {f['qt_bare_us']:.1f} us bare dispatch "
          f"(rounds {f['qt_bare_lo']:.1f}-{f['qt_bare_hi']:.1f}); ratio per round "
          f"{f['qt_ratio_q1']:.0f}-{f['qt_ratio_q3']:.0f} x")
    print(f"RESULT pipeline_overhead_qasync = {f['qt_pipeline_us'] / f['qt_bare_us']:.0f} x the time (bare task "
          f"dispatch of the same no-op on the window's qasync loop, {f['qt_bare_us']:.0f} us; "
          f"{f['qt_pipeline_us']:.0f} us per call; goal <= 25)")
    print(f"RESULT journal_commits_per_call_burst = {f['commits_burst']:.2f} commits per call ({BURST} no-op calls "
          f"at once; the same calls one at a time: {f['commits_one_by_one']:.2f})")
    print(f"RESULT parallel_speedup_8x100ms = {f['sequential_s'] / f['parallel_s']:.2f} x faster "
          f"(the same 8 calls one after another; goal >= 6)")
    print(f"RESULT cache_hit_speedup = {f['miss_ms'] / f['hit_ms']:.2f} x faster (the same Read running: a miss)")


if __name__ == "__main__":
    main()
