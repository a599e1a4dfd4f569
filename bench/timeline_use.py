"""The timeline while a person uses it, at 100,000 calls: folding an agent, ingest while scrolling and folding.

Two parts, each in its own process (so RSS and the collector's state are each their own):

- fold: a timeline of CALLS calls by 13 agents on three levels (`bench/timeline.py`'s session, with a batch
  of 10 in every 50 calls), shown in the window's `TimelineView` with everything expanded, at 1024x640.
  Each agent is collapsed and expanded again, ROUNDS times, each step timed from the click's call to the view
  laid out and painted (`processEvents`, then a synchronous `repaint`): what the GUI thread spends on it.  The
  figure is the worst agent's median of one collapse or one expand; the frame (16.7 ms) is the limit.  expandAll
  and collapseAll are timed the same way.
- ingest: `bench.timeline`'s flood of CALLS calls into the real `MainWindow`, untouched (the baseline) and with
  a scripted person (`Person`): every 50 ms a scroll of a page, every 200 ms an agent folded or unfolded, every
  2 s the filter set to a tool name or cleared.  Rows/s against the untouched run; the longest gap between two
  ticks of a 10 ms heartbeat (collections included); RSS after the flood.

Offscreen by default; on a real X server (xcb) when DISPLAY is set or `--xvfb` is given (which starts
`Xvfb :<n>` for the run).

Run: .venv/bin/python bench/timeline_use.py [--xvfb]
Env: BELAY_BENCH_CALLS (default 100000).
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from functools import partial
from pathlib import Path
from types import SimpleNamespace
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

CALLS = int(os.environ.get("BELAY_BENCH_CALLS", "100000"))
ROUNDS = 3
FRAME_MS = 1000 / 60
SCROLL_MS = 50
"""The scripted person scrolls a page this often, folds or unfolds an agent every FOLD_EVERY scrolls and sets or
clears the filter every FILTER_EVERY."""
FOLD_EVERY = 4
FILTER_EVERY = 40
GAP_MS = 50
RSS_MB = 200
TIMEOUT_S = 900


def built_timeline(calls: int) -> Any:
    """`bench.timeline`'s synthetic session (13 agents on three levels, a batch of 10 in every 50 calls), applied
    straight to a `Timeline`."""
    import timeline as flood

    from core import Timeline

    built, seq = Timeline(), [0]

    def publish(event: Any) -> None:
        seq[0] += 1
        built.apply(event.model_copy(update={"seq": seq[0]}))

    producer = flood.Producer(SimpleNamespace(bus=SimpleNamespace(publish=publish), session_id="bench"))
    producer.team()
    producer.calls(calls)
    producer.drain()
    return built


def python_steps_ms() -> float:
    """A million steps of a Python loop: how fast this machine runs Python now (about 50 ms quiet)."""
    start, total = time.perf_counter(), 0
    for n in range(1_000_000):
        total += n
    return (time.perf_counter() - start) * 1000


def fold(calls: int) -> dict[str, Any]:
    """Every agent collapsed and expanded ROUNDS times, expandAll and collapseAll, each to the view painted."""
    from PySide6.QtWidgets import QApplication

    from core import AgentKey
    from gui.window.runtime.collector import MainThreadCollector
    from gui.window.timeline.model import TimelineModel
    from gui.window.timeline.view import TimelineView

    app = QApplication.instance() or QApplication([])
    collector = MainThreadCollector(app)  # as the app does: the collector on the GUI thread, on a timer
    collector.start()
    model = TimelineModel(built_timeline(calls))
    view = TimelineView(model)
    view.rows.expand_new = True
    view.resize(1024, 640)
    view.show()
    MainThreadCollector.settle()

    def timed(change: Any) -> float:
        start = time.perf_counter()
        change()
        QApplication.processEvents()  # Qt's delayed layout
        view.viewport().repaint()
        return (time.perf_counter() - start) * 1000

    timed(view.expandAll)
    rows = view.rows.rowCount()
    steps: dict[str, list[float]] = {}
    for _ in range(ROUNDS):
        for agent in model.timeline.agents:
            key = AgentKey(agent)
            for expanded in (False, True):
                steps.setdefault(agent, []).append(timed(partial(view.rows.set_expanded, key, expanded)))
    whole: dict[str, list[float]] = {"collapseAll": [], "expandAll": [], "repaint": []}
    for _ in range(ROUNDS):
        for name, change in (("collapseAll", view.collapseAll), ("expandAll", view.expandAll),
                             ("repaint", lambda: None)):
            whole[name].append(timed(change))
    collector.stop()
    worst = max(steps, key=lambda agent: statistics.median(steps[agent]))
    return {"rows": rows, "worst_agent": worst, "worst_ms": statistics.median(steps[worst]),
            "worst_max_ms": max(steps[worst]), "lead_ms": statistics.median(steps["lead"]),
            **{f"{name}_ms": statistics.median(times) for name, times in whole.items()},
            "python_ms": python_steps_ms()}


class Person:
    """Someone using the window during the flood: scrolls a page every SCROLL_MS, folds or unfolds the next agent
    every FOLD_EVERY scrolls, types a tool's name in the filter (or clears it) every FILTER_EVERY."""

    def __init__(self, window: Any) -> None:
        from PySide6.QtCore import QTimer

        self.window, self.ticks, self.folds, self.filters = window, 0, 0, 0
        self.longest: dict[str, float] = {"scroll": 0.0, "fold": 0.0, "filter": 0.0}
        """The longest of each action, in ms, from the call to its return (not the layout and paint after)."""
        self._timer = QTimer()
        self._timer.setInterval(SCROLL_MS)
        self._timer.timeout.connect(self._act)

    def start(self) -> None:
        self._timer.start()

    def stop(self) -> None:
        self._timer.stop()
        bar = self.window.timeline_filter
        bar.text.setText("")
        bar.apply()

    def report(self) -> dict[str, float]:
        return self.longest

    def _timed(self, kind: str, action: Any) -> None:
        start = time.perf_counter()
        action()
        self.longest[kind] = max(self.longest[kind], (time.perf_counter() - start) * 1000)

    def _act(self) -> None:
        self.ticks += 1
        self._timed("scroll", self._scroll)
        if self.ticks % FOLD_EVERY == 0:
            self._timed("fold", self._fold)
        if self.ticks % FILTER_EVERY == 0:
            self._timed("filter", self._filter)

    def _scroll(self) -> None:
        scroll = self.window.tree.verticalScrollBar()
        scroll.setValue(scroll.value() + scroll.pageStep() if scroll.value() < scroll.maximum() else 0)

    def _fold(self) -> None:
        from core import AgentKey

        agents, rows = list(self.window.model.timeline.agents), self.window.tree.rows
        if agents:
            key = AgentKey(agents[self.folds % len(agents)])
            rows.set_expanded(key, not rows.is_expanded(key))
            self.folds += 1

    def _filter(self) -> None:
        bar = self.window.timeline_filter
        bar.text.setText("" if self.filters % 2 else "Edit")
        bar.apply()  # what the debounce timer starts
        self.filters += 1


def child(args: list[str], display: dict[str, str]) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="belay-bench-") as tmp:
        env = {**os.environ, "BELAY_STATE_DIR": f"{tmp}/state", "BELAY_CONFIG_DIR": f"{tmp}/config", **display}
        out = subprocess.run([sys.executable, __file__, "--one", *args], env=env, check=True, capture_output=True,
                             text=True, timeout=TIMEOUT_S)
    return json.loads(next(line for line in out.stdout.splitlines() if line.startswith("{")))


def one(args: list[str]) -> dict[str, Any]:
    if args[0] == "fold":
        return fold(int(args[1]))
    import timeline as flood

    return flood.run_one("window", int(args[1]), Person if args[0] == "interacting" else None)


def xvfb() -> tuple[subprocess.Popen[bytes] | None, dict[str, str]]:
    """The display the children use: a new Xvfb with --xvfb, the one in DISPLAY, else offscreen."""
    if "--xvfb" in sys.argv:
        if shutil.which("Xvfb") is None:
            raise SystemExit("--xvfb: no Xvfb on the PATH")
        number = 90 + os.getpid() % 100
        log = open(Path(tempfile.gettempdir()) / f"belay-bench-xvfb-{number}.log", "wb")  # noqa: SIM115
        server = subprocess.Popen(["Xvfb", f":{number}", "-screen", "0", "1600x1000x24", "-nolisten", "tcp"],
                                  stdout=log, stderr=log)
        time.sleep(1.0)
        return server, {"DISPLAY": f":{number}", "QT_QPA_PLATFORM": "xcb"}
    if os.environ.get("DISPLAY"):
        return None, {"QT_QPA_PLATFORM": "xcb"}
    return None, {"QT_QPA_PLATFORM": "offscreen"}


def main() -> None:
    if len(sys.argv) >= 4 and sys.argv[1] == "--one":
        print(json.dumps(one(sys.argv[2:4])))
        return
    server, display = xvfb()
    try:
        folds = child(["fold", str(CALLS)], display)
        untouched = child(["window", str(CALLS)], display)
        used = child(["interacting", str(CALLS)], display)
    finally:
        if server is not None:
            server.terminate()
            server.wait()
    where = f"{display['QT_QPA_PLATFORM']}{' ' + display['DISPLAY'] if 'DISPLAY' in display else ''}"
    print(f"platform {where}; load {os.getloadavg()[0]:.1f}; a million Python steps took {folds['python_ms']:.0f} ms "
          "in the fold run (about 50 ms on a quiet machine)")
    print(f"fold: {folds['rows']} rows shown; one collapse or expand, median: the lead {folds['lead_ms']:.1f} ms, the "
          f"worst agent ({folds['worst_agent']}) {folds['worst_ms']:.1f} ms (max {folds['worst_max_ms']:.1f}); "
          f"expandAll {folds['expandAll_ms']:.1f} ms, collapseAll {folds['collapseAll_ms']:.1f} ms; a repaint "
          f"alone {folds['repaint_ms']:.1f} ms (each to the view laid out and painted)")
    for r, name in ((untouched, "untouched"), (used, "interacting")):
        print(f"{name}: {r['rows']} rows in {r['seconds']:.1f} s: {r['rows_per_s']:,.0f} rows/s; longest gap "
              f"{r['max_stall_ms']:.0f} ms ({r['stalls_over_50ms']} over {GAP_MS} ms of {r['ticks']} ticks); longest "
              f"collection {r['longest_collection_ms']:.1f} ms; RSS {r['rss_before_mb']:.0f} -> "
              f"{r['rss_after_mb']:.0f} MB" + "".join(f"; longest {kind} {ms:.0f} ms" for kind, ms in
                                                      r["person"].items()))
    print(f"RESULT fold at 100k = {folds['worst_ms']:.1f} ms (one 60 Hz frame, {FRAME_MS:.1f} ms; the worst agent's "
          f"median collapse or expand at {CALLS} calls, a repaint alone {folds['repaint_ms']:.1f} ms, expandAll "
          f"{folds['expandAll_ms']:.1f} ms)")
    print(f"RESULT ingest while interacting = {used['rows_per_s'] / untouched['rows_per_s']:.2f} (untouched window, "
          f"{untouched['rows_per_s']:,.0f} rows/s; goal >= 0.9)")
    print(f"RESULT longest gui gap = {used['max_stall_ms']:.0f} ms (a 10 ms heartbeat while interacting, collections "
          f"included; untouched: {untouched['max_stall_ms']:.0f} ms; goal <= {GAP_MS} ms)")
    print(f"RESULT rss at 100k = {used['rss_after_mb']:.0f} MB (after {CALLS} calls while interacting; untouched: "
          f"{untouched['rss_after_mb']:.0f} MB; goal <= {RSS_MB} MB)")


if __name__ == "__main__":
    main()
