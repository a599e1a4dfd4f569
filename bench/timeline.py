"""Timeline ingest with the real window: rows/s, the longest event-loop stall and RSS for 100,000 calls.

A console (on a temporary workspace and state directory) publishes synthetic events on its real bus: 13
agents on three levels (a lead, 4 sub-agents spawned by its Task calls, 2 sub-sub-agents under each), the
calls spread over them, one in five inside a batch of 10, a few failed, each call queued, started and
finished while the next ones are queued (up to IN_FLIGHT running at once, so some bars are always live).
The events reach the window as they do in the app: the bus feeds the console's timeline as they are
published, the bridge drains them in batches and has the model show what came.  The producer yields to the
loop after every CHUNK calls (the pipeline publishes from the loop's thread too), and waits for room on the
bus (`EventBus.room`: while a reader has a batch's worth of events waiting) as a pipeline admitting calls would.

Two runs, each in its own process (so RSS and the collector's state are each their own):
- window: the real `MainWindow` offscreen at 1400x860, started and shown as `belay` shows it, its timeline
  on screen; Python's collector runs as in the app (`MainThreadCollector`, on the GUI thread, on a timer);
- detached (the baseline): the same console, bus, bridge and `TimelineModel`, with no view.

Figures, after a warm-up (the agents and WARM_UP calls shown first: a first call's imports are start-up,
not the flood): rows/s (rows shown by the model, batches included, over the time from the first event
published to the last row shown and painted), the same for the last 10% of the rows, the longest gap
between two ticks of a 10 ms heartbeat QTimer during the ingest (and how many gaps exceeded 50 ms), RSS
before and after (read from /proc, no collection forced).

Run: QT_QPA_PLATFORM=offscreen .venv/bin/python bench/timeline.py
Env: BELAY_BENCH_CALLS (default 100000) for a shorter run while developing.
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from core import (  # noqa: E402  (the repository on the path first)
    AgentStarted,
    BatchFinished,
    BatchStarted,
    CallFinished,
    CallQueued,
    CallStarted,
    PlanInfo,
    RunStatus,
)

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

CALLS = int(os.environ.get("BELAY_BENCH_CALLS", "100000"))
CHUNK = 50
"""Calls published per turn of the loop."""
IN_FLIGHT = 8
"""Calls started and not finished yet, at any time."""
BATCH_EVERY = 5
"""One call in this many opens a batch of BATCH_SIZE calls (of the same agent)."""
BATCH_SIZE = 10
SUBS = ("frontend", "backend", "docs", "infra")
SUB_SUBS = ("tests", "lint")
TOOLS = ("Read", "Edit", "Bash", "Grep", "Glob", "Write")
WARM_UP = 200
"""Calls shown before the measure starts (with the agents): what a first call imports is not a stall of the flood."""
HEARTBEAT_MS = 10
STALL_MS = 50
TIMEOUT_S = 600


def rss_mb() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


class Heartbeat:
    """A 10 ms timer on the GUI thread: the gaps between its ticks are how long the loop was busy."""

    def __init__(self) -> None:
        from PySide6.QtCore import Qt, QTimer

        self.gaps: list[float] = []
        self._last = 0.0
        self._timer = QTimer()
        self._timer.setTimerType(Qt.TimerType.PreciseTimer)
        self._timer.setInterval(HEARTBEAT_MS)
        self._timer.timeout.connect(self._tick)

    def start(self) -> None:
        self._last = time.perf_counter()
        self._timer.start()

    def stop(self) -> None:
        self._tick()
        self._timer.stop()

    def _tick(self) -> None:
        now = time.perf_counter()
        self.gaps.append(now - self._last)
        self._last = now


class Producer:
    """The synthetic session: agents, batches and calls as events on the console's bus."""

    def __init__(self, console: Any) -> None:
        self.bus = console.bus
        self.session = console.session_id
        self.agents: list[str] = []
        self.rows = 0
        """Rows the timeline will have: agents, batches and runs."""
        self._running: list[str] = []
        self._n = 0

    def publish(self, event: Any) -> None:
        self.bus.publish(event)

    def agent(self, agent_id: str, parent: str | None) -> None:
        spawned = None
        if parent is not None:
            spawned = f"task-{agent_id}"
            self.publish(CallQueued(call_id=spawned, agent_id=parent, tool="Task", args={"description": agent_id},
                                    summary=f"spawn {agent_id}"))
            self.publish(CallStarted(call_id=spawned))
            self.rows += 1
        self.publish(AgentStarted(agent_id=agent_id, session_id=self.session, name=agent_id,
                                  agent_kind="subagent" if parent else "claude-code", parent_id=parent,
                                  spawned_by=spawned))
        self.agents.append(agent_id)
        self.rows += 1

    def team(self) -> None:
        self.agent("lead", None)
        for sub in SUBS:
            self.agent(sub, "lead")
            for subsub in SUB_SUBS:
                self.agent(f"{sub}-{subsub}", sub)

    def calls(self, count: int) -> None:
        """`count` more calls (a batch counts its calls)."""
        done = 0
        while done < count:
            agent = self.agents[self._n % len(self.agents)]
            if self._n % (BATCH_EVERY * BATCH_SIZE) == 0 and count - done >= BATCH_SIZE:
                batch = f"batch-{self._n}"
                ids = [f"c{self._n + i}" for i in range(BATCH_SIZE)]
                self.publish(BatchStarted(batch_id=batch, agent_id=agent, name=f"batch {self._n}", size=BATCH_SIZE,
                                          plan=PlanInfo(levels=(tuple(ids),), critical_path=(ids[0],),
                                                        max_parallelism=BATCH_SIZE)))
                self.rows += 1
                for call_id in ids:
                    self.call(call_id, agent, batch)
                self.publish(BatchFinished(batch_id=batch, succeeded=BATCH_SIZE, failed=0, skipped=0, cache_hits=0,
                                           duration_s=0.1, max_running=BATCH_SIZE))
                done += BATCH_SIZE
            else:
                self.call(f"c{self._n}", agent, None)
                done += 1

    def call(self, call_id: str, agent: str, batch: str | None) -> None:
        n = self._n
        self._n += 1
        path = f"src/pkg_{n % 20}/module_{n}.py"
        self.publish(CallQueued(call_id=call_id, agent_id=agent, tool=TOOLS[n % len(TOOLS)],
                                args={"file_path": path}, summary=path, batch_id=batch))
        self.publish(CallStarted(call_id=call_id))
        self.rows += 1
        self._running.append(call_id)
        if len(self._running) > IN_FLIGHT or batch is not None:
            self.finish(self._running.pop(0))

    def finish(self, call_id: str) -> None:
        failed = hash(call_id) % 37 == 3
        self.publish(CallFinished(call_id=call_id, status=RunStatus.FAILED if failed else RunStatus.DONE,
                                  output="ok", duration_s=0.01))

    def drain(self) -> None:
        while self._running:
            self.finish(self._running.pop(0))


def expected_rows(calls: int) -> int:
    """The rows `calls` calls make: the agents, their Task calls, the calls and their batches."""
    agents = 1 + len(SUBS) * (1 + len(SUB_SUBS))
    rows, n, done = 2 * agents - 1, 0, 0
    while done < calls:
        if n % (BATCH_EVERY * BATCH_SIZE) == 0 and calls - done >= BATCH_SIZE:
            rows, n, done = rows + 1 + BATCH_SIZE, n + BATCH_SIZE, done + BATCH_SIZE
        else:
            rows, n, done = rows + 1, n + 1, done + 1
    return rows


async def rows_shown(shown: list[int], total: int) -> None:
    """Until the model has shown `total` rows (polled: the loop keeps running meanwhile)."""
    deadline = time.monotonic() + TIMEOUT_S
    while shown[0] < total:
        if time.monotonic() > deadline:
            raise SystemExit(f"timed out: {shown[0]} of {total} rows shown")
        await asyncio.sleep(0.001)


async def ingest(kind: str, calls: int, collector: Any, person: Any = None) -> dict[str, Any]:
    """One flood; `person(window)`, when given (with the window), makes what uses the window during it (an object
    with `start` and `stop`: `bench/timeline_use.py`'s scripted person)."""
    from core import Console
    from gui.window.runtime.collector import MainThreadCollector
    from gui.window.runtime.tasks import TaskSet
    from gui.window.timeline.model import TimelineModel
    from gui.window.workspace.bridge import Bridge

    workspace = Path(tempfile.mkdtemp(prefix="belay-bench-ws-"))
    console = Console(workspace, serve=False)
    await console.open()
    window = None
    if kind == "window":
        from gui.window.workspace.window import MainWindow

        window = MainWindow(console)
        window.resize(1400, 860)
        window.start()
        window.show()
        MainThreadCollector.settle()  # as `belay` does once its window is up
        model = window.model
    else:
        model = TimelineModel()
        tasks = TaskSet()
        bridge = Bridge(console, model, tasks)
        bridge.start()
        MainThreadCollector.settle()
    shown = [0]
    marks: dict[str, float] = {}
    total = expected_rows(WARM_UP + calls)
    warm = expected_rows(WARM_UP)
    last_tenth = total - (total - warm) // 10

    def on_rows(parent: Any, first: int, last: int) -> None:
        shown[0] += last - first + 1
        if shown[0] >= last_tenth and "tenth" not in marks:
            marks["tenth"] = time.perf_counter()

    model.rowsInserted.connect(on_rows)
    await asyncio.sleep(0.3)  # the window laid out and painted
    producer = Producer(console)
    producer.team()  # the warm-up: first uses import and build what they need, once; not measured
    producer.calls(WARM_UP)
    await rows_shown(shown, warm)
    await asyncio.sleep(0.5)
    before = rss_mb()
    collector.longest = 0.0  # the collections during the ingest
    user = person(window) if person is not None and window is not None else None
    heartbeat = Heartbeat()
    heartbeat.start()
    if user is not None:
        user.start()
    start = time.perf_counter()
    published = 0
    while published < calls:
        step = min(CHUNK, calls - published)
        producer.calls(step)
        published += step
        await asyncio.sleep(0)
        await console.bus.room()  # backpressure: held while the window has a batch's worth waiting
    producer.drain()
    assert producer.rows == total, (producer.rows, total)
    await rows_shown(shown, total)
    if user is not None:
        user.stop()
    if window is not None:
        window.tree.viewport().repaint()
    end = time.perf_counter()
    heartbeat.stop()
    # From when the rows shown crossed 90% (the producer may be ahead of the window: measured on the rows side).
    tenth_start = marks.get("tenth", end)
    gaps = heartbeat.gaps
    after = rss_mb()
    result = {
        "kind": kind, "calls": calls, "rows": total - warm, "events": console.bus.last_seq,
        "seconds": end - start, "rows_per_s": (total - warm) / (end - start),
        "last_tenth_rows_per_s": (total - last_tenth) / max(end - tenth_start, 1e-6),
        "max_stall_ms": max(gaps) * 1000, "stalls_over_50ms": sum(g * 1000 > STALL_MS for g in gaps),
        "ticks": len(gaps), "rss_before_mb": before, "rss_after_mb": after,
        "longest_collection_ms": collector.longest * 1000,
        "person": user.report() if user is not None else {},
    }
    gc.unfreeze()
    began = time.perf_counter()
    gc.collect()  # what a collection of everything costs now: the collector's rare full step
    result["full_collection_ms"] = (time.perf_counter() - began) * 1000
    gc.freeze()
    if window is not None:
        await window.tasks.aclose()
    await console.close()
    if window is not None:
        window.close()
    return result


def run_one(kind: str, calls: int, person: Any = None) -> dict[str, Any]:
    """One run in this process, on a qasync loop, the collector on the GUI thread as in the app."""
    from PySide6.QtWidgets import QApplication

    from gui.window.runtime.collector import MainThreadCollector
    from gui.window.runtime.loop import EventLoop

    app = QApplication.instance() or QApplication([])
    app.setQuitOnLastWindowClosed(False)
    collector = MainThreadCollector(app)
    collector.start()
    try:
        with asyncio.Runner(loop_factory=lambda: EventLoop(app)) as runner:
            return runner.run(ingest(kind, calls, collector, person))
    finally:
        collector.stop()


def in_child(kind: str, calls: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="belay-bench-") as tmp:
        env = {**os.environ, "BELAY_STATE_DIR": f"{tmp}/state", "BELAY_CONFIG_DIR": f"{tmp}/config",
               "QT_QPA_PLATFORM": "offscreen"}
        out = subprocess.run([sys.executable, __file__, "--one", kind, str(calls)], env=env, check=True,
                             capture_output=True, text=True, timeout=TIMEOUT_S + 60)
    line = next(line for line in out.stdout.splitlines() if line.startswith("{"))
    return json.loads(line)


def main() -> None:
    if len(sys.argv) == 4 and sys.argv[1] == "--one":
        print(json.dumps(run_one(sys.argv[2], int(sys.argv[3]))))
        return
    detached = in_child("detached", CALLS)
    window = in_child("window", CALLS)
    for r in (detached, window):
        print(f"{r['kind']}: {r['calls']} calls, {r['rows']} rows, {r['events']} events in {r['seconds']:.1f} s: "
              f"{r['rows_per_s']:,.0f} rows/s ({r['last_tenth_rows_per_s']:,.0f}/s for the last 10%); "
              f"longest stall {r['max_stall_ms']:.0f} ms, {r['stalls_over_50ms']} gaps over {STALL_MS} ms of "
              f"{r['ticks']} ticks; RSS {r['rss_before_mb']:.0f} -> {r['rss_after_mb']:.0f} MB; longest "
              f"collection on the GUI thread during the ingest {r['longest_collection_ms']:.1f} ms (a full one, "
              f"unfrozen, at the end: {r['full_collection_ms']:.0f} ms)")
    base = f"bus + bridge + model, view detached: {detached['rows_per_s']:,.0f} rows/s"
    print(f"RESULT timeline ingest, window, {CALLS} calls = {window['rows_per_s']:.0f} rows/s ({base})")
    print(f"RESULT timeline ingest, window, last 10% = {window['last_tenth_rows_per_s']:.0f} rows/s "
          f"(detached: {detached['last_tenth_rows_per_s']:,.0f} rows/s)")
    print(f"RESULT longest event-loop stall, window = {window['max_stall_ms']:.0f} ms "
          f"(detached: {detached['max_stall_ms']:.0f} ms; goal <= {STALL_MS} ms)")
    print(f"RESULT longest garbage collection on the GUI thread during the ingest, window = "
          f"{window['longest_collection_ms']:.1f} ms (a full collection of everything at the end of the run: "
          f"{window['full_collection_ms']:.0f} ms)")
    print(f"RESULT RSS after {CALLS} calls, window = {window['rss_after_mb']:.0f} MB "
          f"({window['rss_before_mb']:.0f} MB before the ingest; detached: {detached['rss_after_mb']:.0f} MB)")


if __name__ == "__main__":
    main()
