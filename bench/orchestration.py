"""The orchestrator's costs and gains, each against a baseline measured in the same run.

Figures:
- pipeline overhead: a no-op tool called through the whole console (validation, policy, events, journal,
  cache bookkeeping), per call, against bare asyncio task dispatch of the same no-op coroutine;
- parallel speed-up: 8 independent calls of 100 ms run as one batch, against the same 8 run one after
  another through the same console (goal: at least 6x);
- cache hit: a Read answered from the result cache, against the same Read running (a cache miss).
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import ClassVar

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core import Console  # noqa: E402
from core.models.batches import BatchCall  # noqa: E402
from core.tools.base import Annotations, RunTool, ToolArgs, ToolContext, ToolOutput  # noqa: E402
from core.tools.catalog import default_tools  # noqa: E402

NOOP_CALLS = 400
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


async def measure(workspace: Path, state: Path) -> dict[str, float]:
    figures: dict[str, float] = {}
    async with Console(workspace, state_dir=state, tools=[*default_tools(), NoOp(), Sleep()]) as console:
        agent = await console.start_agent("bench", "scripted")
        await console.call(agent, "NoOp", {})  # warm up: session row, first journal writes
        started = time.perf_counter()
        for _ in range(NOOP_CALLS):
            await console.call(agent, "NoOp", {})
        figures["pipeline_us"] = (time.perf_counter() - started) / NOOP_CALLS * 1e6
        figures["bare_us"] = await bare_dispatch_us()

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
    print(f"no-op call: {f['pipeline_us']:.0f} us through the pipeline, {f['bare_us']:.1f} us bare dispatch. "
          f"{PARALLEL} x {SLEEP_S * 1000:.0f} ms: {f['sequential_s']:.2f} s one by one, {f['parallel_s']:.2f} s as a "
          f"batch. Read of a 27 KB file: {f['miss_ms']:.2f} ms running, {f['hit_ms']:.2f} ms from the cache "
          f"(medians of {READS})")
    print(f"RESULT pipeline_overhead = {f['pipeline_us'] / f['bare_us']:.0f} x the time "
          f"(bare asyncio task dispatch of the same no-op; {f['pipeline_us']:.0f} us per call)")
    print(f"RESULT parallel_speedup_8x100ms = {f['sequential_s'] / f['parallel_s']:.2f} x faster "
          f"(the same 8 calls one after another; goal >= 6)")
    print(f"RESULT cache_hit_speedup = {f['miss_ms'] / f['hit_ms']:.2f} x faster (the same Read running: a miss)")


if __name__ == "__main__":
    main()
