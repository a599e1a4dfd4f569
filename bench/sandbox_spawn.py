"""Spawn cost of `true` inside Belay's bubblewrap sandbox, against `true` spawned plainly, in one run.

Both are started the same way (subprocess, stdin closed, output captured),
alternating so that machine noise hits both alike.  The sandboxed argv is
the one the Bash tool builds (`core.process.sandbox.wrap`: PID namespace, read-only
root, private /tmp, workspace bind).  A third figure is the whole Bash tool
call (argv, environment, resource limits, sandbox, process-tree sweep) for
`true`, against the same plain spawn: what an agent's command pays in all.
"""

from __future__ import annotations

import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.ids import new_agent_id, new_call_id  # noqa: E402
from core.paths import Workspace  # noqa: E402
from core.process.sandbox import detect_sandbox, wrap  # noqa: E402
from core.process.shells import ShellManager  # noqa: E402
from core.tools.base import ReadState, ToolContext  # noqa: E402
from core.tools.bash import BashArgs, BashSettings, BashTool  # noqa: E402

ROUNDS = 200


def spawn_ms(argv: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, check=True)
    return (time.perf_counter() - started) * 1000


async def bash_tool_ms(workspace: Path, rounds: int) -> list[float]:
    shells = ShellManager(lambda event: None)
    tool = BashTool(BashSettings(), shells)
    ctx = ToolContext(Workspace(workspace), new_agent_id(), new_call_id(), ReadState())
    args = BashArgs(command="true")
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        await tool.run(args, ctx)
        times.append((time.perf_counter() - started) * 1000)
    await shells.aclose()
    return times


def main() -> None:
    info = detect_sandbox()
    true = subprocess.run(["which", "true"], capture_output=True, text=True).stdout.strip() or "/bin/true"
    with tempfile.TemporaryDirectory() as ws, tempfile.TemporaryDirectory() as tmp:
        sandboxed = wrap([true], workspace=Path(ws), tmp=Path(tmp), network=True, info=info)
        plain_times, sandbox_times = [], []
        for _ in range(ROUNDS):
            plain_times.append(spawn_ms([true]))
            sandbox_times.append(spawn_ms(sandboxed))
        tool_times = asyncio.run(bash_tool_ms(Path(ws), ROUNDS // 4))
    plain, boxed, tool = (statistics.median(t) for t in (plain_times, sandbox_times, tool_times))
    print(f"sandbox: {info.detail}")
    print(f"median of {ROUNDS}: plain true {plain:.2f} ms, sandboxed true {boxed:.2f} ms; "
          f"median of {ROUNDS // 4} Bash tool calls of true: {tool:.2f} ms")
    if not info.available:
        print("bubblewrap is not available here: the sandboxed figure is the plain spawn again")
    print(f"RESULT sandbox_spawn_true = {boxed / plain:.2f} x (plain spawn of true, same run)")
    print(f"RESULT bash_tool_call_true = {tool / plain:.2f} x (plain spawn of true, same run)")


if __name__ == "__main__":
    main()
