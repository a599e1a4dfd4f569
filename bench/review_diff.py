"""The review diff's drawing time: a 2,000-line, 30-hunk edit from its approval request to a drawn side-by-side view.

A Python module of 2,000 lines with a function every 40 lines; the agent's version changes 30 lines spread
through it (every third change adds a line).  The diff is computed once, as the core does before asking
(`compute_diff`, reported for context), and put in an `ApprovalRequested`.  Then, on a qasync loop with the
widgets shown offscreen at 1024x640, each round times, from the call that hands the request to the view to
the moment its rows are painted:
- the review view (`gui.window.review.view`), side by side: rows built in a worker thread (syntax colours,
  changed words, enclosing functions), then only the visible rows painted;
- the baseline, in the same run: the plain unified `DiffView` the approval panel used before (HTML
  highlighted in a worker thread, then inserted in slices).
Meanwhile a 2 ms ticker on the loop records the longest gap between its ticks: the longest event-loop stall
while the view is being drawn.  The first round of each is reported apart (pygments compiles its lexer's
regular expressions on first use), then the median of the following rounds.  Python's collector runs as in
the app (`MainThreadCollector`: on the GUI thread, on a timer), not in whichever thread allocates.

Run: QT_QPA_PLATFORM=offscreen .venv/bin/python bench/review_diff.py
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("BELAY_CONFIG_DIR", tempfile.mkdtemp(prefix="belay-bench-config-"))

from PySide6.QtCore import QSettings, SignalInstance  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from core import ApprovalRequested, ProposedFile  # noqa: E402
from core.changes.diffs import compute_diff  # noqa: E402
from gui.window.review.diff_view import DiffView  # noqa: E402
from gui.window.review.view import ReviewView  # noqa: E402
from gui.window.runtime.collector import MainThreadCollector  # noqa: E402
from gui.window.runtime.loop import EventLoop  # noqa: E402

ROUNDS = 7
TICK_S = 0.002


def files() -> tuple[str, str]:
    old = [f"def function_{n}(x):\n" if n % 40 == 0 else f"    value_{n} = compute(x, {n})\n" for n in range(2000)]
    new = list(old)
    for k in reversed(range(30)):
        n = 15 + k * 66
        new[n] = f"    value_{n} = compute(x * 2, {n})  # changed\n"
        if k % 3 == 0:
            new.insert(n + 1, f"    log(value_{n})\n")
    return "".join(old), "".join(new)


class StallMeter:
    """The longest gap between ticks of a task that sleeps TICK_S on the loop."""

    def __init__(self) -> None:
        self.longest = 0.0
        self._task: asyncio.Task[None] | None = None

    async def _tick(self) -> None:
        last = time.perf_counter()
        while True:
            await asyncio.sleep(TICK_S)
            now = time.perf_counter()
            self.longest = max(self.longest, now - last - TICK_S)
            last = now

    def __enter__(self) -> StallMeter:
        self._task = asyncio.get_running_loop().create_task(self._tick(), name="stall meter")
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._task is not None
        self._task.cancel()


async def timed(show: Callable[[], None], rendered: SignalInstance) -> tuple[float, float]:
    """Seconds from `show()` to the view's `rendered` signal (sent once its rows are painted), and the longest
    loop stall meanwhile."""
    await asyncio.sleep(0.05)
    done = asyncio.Event()
    rendered.connect(done.set)
    try:
        with StallMeter() as meter:
            start = time.perf_counter()
            show()
            await done.wait()
            took = time.perf_counter() - start
            await asyncio.sleep(0.01)
    finally:
        rendered.disconnect(done.set)
    return took, meter.longest


async def main() -> None:
    old, new = files()
    start = time.perf_counter()
    diff = compute_diff("src/app.py", old.encode(), new.encode())
    diff_s = time.perf_counter() - start
    assert len(diff.hunks) == 30, len(diff.hunks)
    request = ApprovalRequested(call_id="c1", agent_id="a1", tool="Write", summary="src/app.py", reason="asks",
                                args={}, diffs=(diff,), proposed=(ProposedFile(path="src/app.py", content=new),))
    settings = QSettings(str(Path(os.environ["BELAY_CONFIG_DIR"]) / "window.ini"), QSettings.Format.IniFormat)
    review = ReviewView(dark=False, settings=settings)
    plain = DiffView(dark=False)
    for widget in (review, plain):
        widget.resize(1024, 640)
        widget.show()
    ours: list[tuple[float, float]] = []
    base: list[tuple[float, float]] = []
    for _ in range(ROUNDS):
        painted = review.canvas.painted
        ours.append(await timed(lambda: review.show_request(request), review.rendered))
        assert review.canvas.painted > painted  # its rows were painted before it said so
        assert review.split and review.total == 30
        base.append(await timed(lambda: plain.set_diffs([diff]), plain.rendered))
        review.set_diffs([])
        plain.set_diffs([])
        await asyncio.sleep(0.05)
    first_ours, first_base = ours[0], base[0]
    ours_ms = statistics.median(t for t, _ in ours[1:]) * 1000
    base_ms = statistics.median(t for t, _ in base[1:]) * 1000
    stall_ms = max(s for _, s in ours[1:]) * 1000
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    print(f"core compute_diff of the 2,000-line edit: {diff_s * 1000:.1f} ms ({len(diff.hunks)} hunks)")
    print(f"first round (cold lexer): side by side {first_ours[0] * 1000:.1f} ms, stall {first_ours[1] * 1000:.1f} ms;"
          f" unified DiffView {first_base[0] * 1000:.1f} ms, stall {first_base[1] * 1000:.1f} ms")
    print(f"RESULT side_by_side_draw = {ours_ms:.1f} ms ({ours_ms / base_ms:.2f} x the baseline: the plain unified "
          f"DiffView drawing the same diff took {base_ms:.1f} ms; median of {ROUNDS - 1} warm rounds; goal < 300 ms)")
    print(f"RESULT side_by_side_longest_stall = {stall_ms:.1f} ms (the baseline's: "
          f"{max(s for _, s in base[1:]) * 1000:.1f} ms; goal < 50 ms)")
    review.close()
    plain.close()


if __name__ == "__main__":
    app = QApplication.instance() or QApplication(sys.argv)
    collector = MainThreadCollector(app)  # as the app does: Python's collector runs on the GUI thread only
    collector.start()
    loop = EventLoop(app)
    asyncio.set_event_loop(loop)
    with loop:
        loop.run_until_complete(main())
    collector.stop()
