"""Commands in layers: what a preview costs over a plain sandboxed command, and what running a batch's commands
side by side (each in a layer of its own) gains over one at a time.

Everything runs through a real console on a temporary copy of the demo workspace, with the real sandbox and
real overlay layers; an answerer approves each request the moment it is published (on the loop, from the
bus), so the figures are Belay's cost, not a person's.

1. Preview overhead, measured alternately (ROUNDS each, medians): the same command with `[bash] effects =
   "apply"` (sandboxed, its changes captured by comparing the workspace) and with `"preview"` (a layer, its
   change set read, the preview asked and approved, the files applied through the durable write path):
   `true`, and a command writing FILES files.
2. Eight independent commands that each write a file and sleep SLEEP_S, as one batch: each in its own layer,
   side by side (today), against the same batch with layers turned off (one author at a time: one after
   another, as before layers).

Run: .venv/bin/python bench/effects.py
"""

from __future__ import annotations

import asyncio
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core import ApprovalRequested, BatchCall, Console, RunStatus  # noqa: E402
from core.process import overlay  # noqa: E402
from core.tasks import spawn  # noqa: E402
from core.tools.bash import BashSettings  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
ROUNDS = 15
FILES = 100
COMMANDS = 8
SLEEP_S = 0.3
WRITE_FILES = f"mkdir -p out && for i in $(seq {FILES}); do echo line $i > out/f$i.txt; done"


def _workspace(parent: Path, name: str) -> Path:
    ws = Path(tempfile.mkdtemp(prefix=f"{name}-", dir=parent)) / "ws"
    shutil.copytree(ROOT / "resources" / "demo" / "workspace", ws)
    return ws


async def _answering(console: Console) -> Callable[[], Awaitable[None]]:
    """Approve every request as soon as it is published; returns what stops the answerer."""
    console.register_approver("bench")
    sub = console.subscribe()

    async def answer() -> None:
        while batch := await sub.next_batch():
            for event in batch:
                if isinstance(event, ApprovalRequested):
                    console.approve(event.call_id, by="auto-approver")

    task = spawn(answer(), "answer every approval")

    async def stop() -> None:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        sub.close()
    return stop


async def _timed_calls(parent: Path, effects: str, command: str, rounds: int, undo: str) -> list[float]:
    """Seconds per call of `command`, each followed by `undo` (outside the timing) so every call does the same."""
    ws = _workspace(parent, effects)
    times = []
    async with Console(ws, bash=BashSettings(effects=effects)) as console:  # type: ignore[arg-type]
        stop = await _answering(console)
        agent = await console.start_agent("bench", "scripted")
        for _ in range(rounds + 1):
            began = time.perf_counter()
            outcome = await console.call(agent, "Bash", {"command": command})
            took = time.perf_counter() - began
            assert outcome.status == RunStatus.DONE, outcome.text
            times.append(took)
            if undo:
                await console.call(agent, "Bash", {"command": undo})
        await stop()
    return times[1:]  # the first call imports and probes: not the steady cost


async def _overhead(parent: Path, command: str, undo: str = "") -> tuple[float, float]:
    plain: list[float] = []
    previewed: list[float] = []
    for _ in range(3):  # alternate, in thirds, so a drift of the machine falls on both sides
        plain += await _timed_calls(parent, "apply", command, ROUNDS // 3, undo)
        previewed += await _timed_calls(parent, "preview", command, ROUNDS // 3, undo)
    return statistics.median(plain), statistics.median(previewed)


async def _batch(parent: Path, layers: bool) -> tuple[float, int]:
    ws = _workspace(parent, "batch")
    calls = [BatchCall(id=f"c{n}", tool="Bash", args={"command": f"sleep {SLEEP_S}; echo {n} > made_{n}.txt"})
             for n in range(COMMANDS)]
    supported = overlay.overlay_support()
    if not layers:
        overlay.overlay_support = lambda: overlay.OverlaySupport(False, "turned off by the benchmark")  # type: ignore
        _forget_probes()
    try:
        async with Console(ws) as console:
            stop = await _answering(console)
            agent = await console.start_agent("bench", "scripted")
            began = time.perf_counter()
            report = await console.run_batch(agent, calls, concurrency=COMMANDS)
            took = time.perf_counter() - began
            await stop()
        assert report.ok, report
        assert all((ws / f"made_{n}.txt").read_text() == f"{n}\n" for n in range(COMMANDS))
        return took, report.max_running
    finally:
        overlay.overlay_support = _PROBE  # type: ignore[assignment]
        _forget_probes()
        assert overlay.overlay_support() == supported


_PROBE = overlay.overlay_support


def _forget_probes() -> None:
    """The modules that took `overlay_support` by name see the one in force now."""
    import core.console
    import core.orchestration.runner
    import core.run.pipeline
    for module in (core.console, core.orchestration.runner, core.run.pipeline):
        module.overlay_support = overlay.overlay_support  # type: ignore[attr-defined]


async def main() -> None:
    support = overlay.overlay_support()
    if not support.available:
        raise SystemExit(f"no layers here: {support.detail}")
    with tempfile.TemporaryDirectory(prefix="belay-bench-effects-") as tmp:
        os.environ["BELAY_STATE_DIR"] = f"{tmp}/state"
        os.environ["BELAY_CONFIG_DIR"] = f"{tmp}/config"
        parent = Path(tmp)
        plain_true, preview_true = await _overhead(parent, "true")
        plain_files, preview_files = await _overhead(parent, WRITE_FILES, undo="rm -rf out")
        side_by_side, running = await _batch(parent, layers=True)
        in_turn, running_before = await _batch(parent, layers=False)
    print(f"true: plain {plain_true * 1000:.0f} ms, previewed {preview_true * 1000:.0f} ms (medians of {ROUNDS})")
    print(f"{FILES} files: plain {plain_files * 1000:.0f} ms, previewed {preview_files * 1000:.0f} ms")
    print(f"{COMMANDS} commands of {SLEEP_S} s: side by side {side_by_side:.2f} s (max running {running}), "
          f"one at a time {in_turn:.2f} s (max running {running_before})")
    print(f"RESULT previewed `true` = {preview_true / plain_true:.2f} x (a plain sandboxed `true`: "
          f"{plain_true * 1000:.0f} ms)")
    print(f"RESULT previewed {FILES}-file command = {preview_files / plain_files:.2f} x (the plain sandboxed command: "
          f"{plain_files * 1000:.0f} ms)")
    print(f"RESULT {COMMANDS} independent commands side by side = {in_turn / side_by_side:.1f} x faster "
          f"(one at a time, without layers: {in_turn:.2f} s)")


if __name__ == "__main__":
    asyncio.run(main())

