"""What the wall adds to an outside agent's command: `true` as the agent's shell runs it, walled and not.

An agent (Claude Code, Codex) runs its command with its shell; once Belay allowed it, the command it runs is
the one Belay sent back (core.outside.wall): bubblewrap, the allow-listed environment, the limits, then bash.
Both are started the same way (`bash -c`, stdin closed, output captured), alternating so that machine noise
hits both alike.  The pids cgroup, where that is the process limit here, is made once and reused: making it
is the console's, off the agent's path, before it answers the hook.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.outside.wall import walled  # noqa: E402
from core.process.limits import detect_limit  # noqa: E402
from core.process.sandbox import credential_paths, detect_sandbox  # noqa: E402
from core.tools.bash import BashSettings  # noqa: E402

ROUNDS = 200


def _once(command: str, cwd: str) -> float:
    start = time.perf_counter()
    subprocess.run(["bash", "-c", command], cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True, check=True)
    return time.perf_counter() - start


def main() -> None:
    info = detect_sandbox()
    if not info.available:
        print(f"no wall here: {info.detail}")
        return
    with tempfile.TemporaryDirectory() as ws:
        made = walled("true", workspace=Path(ws), info=info, limit=detect_limit(256, bwrap=info.executable),
                      settings=BashSettings(), hide=credential_paths())
        assert made is not None
        try:
            plain, wall = [], []
            for _ in range(ROUNDS):
                plain.append(_once("true", ws))
                wall.append(_once(made.command, ws))
        finally:
            if made.group is not None:
                made.group.remove()
    p, w = statistics.median(plain), statistics.median(wall)
    print(f"median of {ROUNDS}: plain {p * 1000:.2f} ms, walled {w * 1000:.2f} ms")
    print(f"RESULT wall_added_ms = {(w - p) * 1000:.2f} ms (the same `true` run unwrapped by bash -c)")
    print(f"RESULT wall_ratio = {w / p:.2f}x (the same `true` run unwrapped by bash -c)")


if __name__ == "__main__":
    main()
