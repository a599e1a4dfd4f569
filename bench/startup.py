"""Cold start to first paint: `belay watch` against a bare PySide6 window, side by side.

Each run is a new interpreter (nothing imported yet, as when a person types `belay`), started by this
script, which times from the spawn until the child reports that its top-level window received its first
Paint event.  The child creates the QApplication itself and installs an event filter on it, then hands over
to what it measures (the belay child first imports what `belay` imports before Qt, in the same order: the
command line and the core; PySide6 inspects the source of every module imported after it, a cost the core
does not pay in `belay` either):
- bare: a QWidget, shown;
- belay: `gui.terminal.cli.main(["watch", ...])`, the console a bare `belay` opens (a private state and
  config directory, so no other console is disturbed and the first-run screen is not shown), which
  imports the core and the window, starts the hub and shows the window.
Runs alternate (bare, belay, bare, ...) so that a busy machine slows both alike; the median of each is
reported.  The platform is the desktop's when DISPLAY or WAYLAND_DISPLAY is set, else offscreen.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RUNS = int(os.environ.get("BELAY_BENCH_RUNS", "7"))

CHILD = r"""
import os, sys
if sys.argv[1] == "belay":  # what `belay` imports before Qt: its command line, then the core (cli.main)
    from gui.terminal.cli import main
    import core
from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QApplication, QWidget

class FirstPaint(QObject):
    def eventFilter(self, obj, event):
        if event.type() == QEvent.Type.Paint and isinstance(obj, QWidget) and obj.isWindow():
            sys.stdout.write("painted\n")
            sys.stdout.flush()
            os._exit(0)
        return False

app = QApplication(sys.argv[:1])
spy = FirstPaint()
app.installEventFilter(spy)
if sys.argv[1] == "bare":
    window = QWidget()
    window.resize(1024, 640)
    window.show()
    app.exec()
else:
    main(["watch", "--state-dir", sys.argv[2]])
sys.exit("no paint")
"""


def first_paint(kind: str, scratch: Path) -> float:
    env = {**os.environ, "BELAY_CONFIG_DIR": str(scratch / "config"), "PYTHONDONTWRITEBYTECODE": "1"}
    if not (env.get("DISPLAY") or env.get("WAYLAND_DISPLAY")):
        env["QT_QPA_PLATFORM"] = "offscreen"
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", CHILD, kind, str(scratch / "state")], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    elapsed = time.perf_counter() - start
    if "painted" not in done.stdout:
        raise SystemExit(f"{kind}: no first paint (rc {done.returncode}): {done.stderr.strip()[-600:]}")
    return elapsed


def main() -> None:
    bare: list[float] = []
    belay: list[float] = []
    with tempfile.TemporaryDirectory(prefix="belay-startup-") as tmp:
        first_paint("bare", Path(tmp))  # warm the disk cache for both: this measures imports, not the disk
        first_paint("belay", Path(tmp) / "warm")
        for run in range(RUNS):
            bare.append(first_paint("bare", Path(tmp) / f"bare{run}"))
            belay.append(first_paint("belay", Path(tmp) / f"belay{run}"))
    b, w = statistics.median(bare), statistics.median(belay)
    print(f"bare PySide6 window: median {b:.3f} s over {RUNS} runs ({min(bare):.3f}-{max(bare):.3f})")
    print(f"belay watch:         median {w:.3f} s over {RUNS} runs ({min(belay):.3f}-{max(belay):.3f})")
    print(f"RESULT startup_first_paint = {w / b:.2f} x (bare PySide6 window)")


if __name__ == "__main__":
    main()
