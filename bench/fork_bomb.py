"""A fork bomb through the real Bash tool: how long until it is contained, and how many processes it reached.

`:(){ :|:& };:` is run as an agent's command with `[bash] max_processes`
= N (default 256), in the default sandbox, against `true` run the same way
in the same run (the baseline: what any call costs).  The wall time is the
whole call, from the tool's start until it returned with every process of
the bomb gone.  The classic bomb's first shell returns at once, so a call
may end before the bomb has filled its group: one more run keeps it going
for 2 s (`; sleep 2`) to be sure the limit is reached.  The process count is the command's pids cgroup's pids.peak
(when the limit is a cgroup), else the most tasks of the user sampled
every 2 ms, less those the user had before (approximate: other programs of
the user count, and a short-lived peak can fall between samples).

The measuring runs in a child process inside an outer limit, so that if
containment ever regressed the bomb would fill that, not the machine: a
pids cgroup of N + 96 when one can be created, else RLIMIT_NPROC of the
user's current count + 2N + 96 (which binds every user but root; as root
without a cgroup the bench refuses to run).

    .venv/bin/python bench/fork_bomb.py [N [auto|off]]    (off: the sandbox turned off, as in settings)
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.errors import ToolError  # noqa: E402
from core.ids import new_agent_id, new_call_id  # noqa: E402
from core.paths import Workspace  # noqa: E402
from core.process import limits  # noqa: E402
from core.process.limits import PidsGroup, ProcessLimit, pids_parent, user_tasks  # noqa: E402
from core.process.shells import ShellManager  # noqa: E402
from core.tools.base import ReadState, ToolContext  # noqa: E402
from core.tools.bash import BashArgs, BashSettings, BashTool  # noqa: E402

BOMB = ":(){ :|:& };:"
HELD = f"{BOMB}; sleep 2"
"""The bomb kept going by its first shell for 2 s: the classic one's shell returns at once, and the call may end
(and kill it) before it has filled its group, so the largest count is measured on this one as well."""
BASELINE_ROUNDS = 5
BOMB_ROUNDS = 3
MARGIN = 96
"""Room in the outer limit for the measuring Python (threads count) and the sandbox's own processes."""


class Sampler:
    """The most tasks this user had at once while it ran, polled in a thread (for when there is no pids.peak)."""

    def __init__(self) -> None:
        self.most, self._done = 0, threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)

    def _poll(self) -> None:
        while not self._done.is_set():
            self.most = max(self.most, user_tasks(os.getuid()))
            time.sleep(0.002)

    def __enter__(self) -> Sampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        self._thread.join()


async def timed(tool: BashTool, ctx: ToolContext, command: str) -> tuple[float, str]:
    started = time.perf_counter()
    try:
        text = (await tool.run(BashArgs(command=command, timeout=30_000), ctx)).text
    except ToolError as e:
        text = f"{e.info.kind.value}: {e.info.message}"
    return time.perf_counter() - started, text


async def settle(before: int, wait: bool) -> None:
    """Until the user has about as many tasks as before (killed processes count until they are reaped)."""
    deadline = time.monotonic() + 5
    while wait and user_tasks(os.getuid()) > before + 16 and time.monotonic() < deadline:  # noqa: ASYNC110 - /proc tells no one
        await asyncio.sleep(0.05)


async def measure(maximum: int, sandbox: str) -> dict[str, object]:
    """In the child: the baseline and the bomb, through one Bash tool."""
    peaks: list[int | None] = []
    remove = limits.PidsGroup.remove

    def measured_remove(group: PidsGroup) -> bool:
        peaks.append(group.peak())
        return remove(group)

    limits.PidsGroup.remove = measured_remove  # type: ignore[method-assign]  # read pids.peak before it goes
    shells = ShellManager(lambda event: None)
    tool = BashTool(BashSettings(max_processes=maximum, sandbox=sandbox), shells)  # type: ignore[arg-type]
    ctx = ToolContext(Workspace(Path(tempfile.mkdtemp(prefix="belay-bench-"))), new_agent_id(), new_call_id(),
                      ReadState())
    info = await tool.sandbox_info()
    baseline = [(await timed(tool, ctx, "true"))[0] for _ in range(BASELINE_ROUNDS)]
    before = user_tasks(os.getuid())
    shared = "RLIMIT" in info.processes  # counted per user: let one bomb's dead be reaped before the next
    with Sampler() as sampler:
        bombs = []
        for _ in range(BOMB_ROUNDS):
            bombs.append(await timed(tool, ctx, BOMB))
            await settle(before, shared)
        held = await timed(tool, ctx, HELD)
    after = await timed(tool, ctx, "echo still here")
    await shells.aclose()
    return {"sandbox": info.kind, "processes": info.processes, "baseline": baseline, "bomb": [t for t, _ in bombs],
            "said": held[1][:300], "held": held[0], "peaks": [p for p in peaks if p is not None], "user_before": before,
            "user_most": sampler.most,
            "after": after[1]}


def outer_limit(maximum: int) -> tuple[list[str], PidsGroup | None]:
    """The argv prefix that puts the child under the safety net, and the net's cgroup when it is one."""
    parent = pids_parent()
    if parent is not None:
        group = PidsGroup.create(ProcessLimit(kind="cgroup", maximum=maximum + MARGIN, parent=str(parent)))
        return group.join_argv(), group
    if os.getuid() == 0:
        sys.exit("no writable pids cgroup, and RLIMIT_NPROC does not bind root: refusing to run a fork bomb")
    mine = subprocess.run(["ps", "-u", str(os.getuid()), "--no-headers"], capture_output=True, text=True).stdout
    return ["prlimit", f"--nproc={len(mine.splitlines()) + 2 * maximum + MARGIN}", "--"], None


def main() -> None:
    if sys.argv[1:2] == ["--child"]:
        print(json.dumps(asyncio.run(measure(int(sys.argv[2]), sys.argv[3]))))
        return
    maximum = int(sys.argv[1]) if len(sys.argv) > 1 else 256
    sandbox = sys.argv[2] if len(sys.argv) > 2 else "auto"
    prefix, net = outer_limit(maximum)
    try:
        done = subprocess.run([*prefix, sys.executable, __file__, "--child", str(maximum), sandbox],
                              capture_output=True, text=True, timeout=110, stdin=subprocess.DEVNULL)
        outer_peak, outer_refused = (net.peak(), net.refused()) if net is not None else (None, 0)
    finally:
        if net is not None:
            net.remove()
    if done.returncode != 0:
        sys.exit(f"the measuring child failed:\n{done.stderr[-3000:]}")
    got = json.loads(done.stdout.splitlines()[-1])
    base, bomb = statistics.median(got["baseline"]), statistics.median(got["bomb"])
    if got["peaks"]:
        peak, source = max(got["peaks"]), "the command's pids cgroup, pids.peak"
    else:
        peak, source = got["user_most"] - got["user_before"], "your tasks, sampled, less those before the bombs"
    print(f"sandbox: {got['sandbox']}; {got['processes']}")
    print(f"median of {BASELINE_ROUNDS} calls of true: {base:.3f} s; bomb calls ({BOMB_ROUNDS}): "
          + ", ".join(f"{t:.3f} s" for t in got["bomb"]))
    print(f"the bomb held open for 2 s: call of {got['held']:.3f} s, which told the agent: "
          f"{got['said'].splitlines()[0] if got['said'] else '(nothing)'}")
    print(f"pids.peak of each command's group (true x{BASELINE_ROUNDS}, bomb x{BOMB_ROUNDS}, held bomb): "
          f"{got['peaks']}")
    print(f"after the bombs the tool still runs commands: {got['after'].strip()!r}")
    print(f"largest process count from {source}; safety net peak {outer_peak}, refused {outer_refused}"
          + (" (THE SAFETY NET HAD TO ACT: containment failed)" if outer_refused else ""))
    print(f"RESULT fork_bomb_contained = {bomb:.3f} s (true through the same Bash tool path: {base:.3f} s)")
    print(f"RESULT fork_bomb_peak_processes = {peak} processes (limit {maximum})")


if __name__ == "__main__":
    main()
