"""Cold start to first paint: a bare `belay` against a bare PySide6 window, side by side.

Each run is a new interpreter (nothing imported yet, as when a person types `belay`), started by this
script, which times from the spawn until the child reports that its top-level window received its first
Paint event.  The child creates the QApplication itself and installs an event filter on it, then hands over
to what it measures (the belay child first imports what `belay` imports before Qt, in the same order: the
command line and the core facade; PySide6 reads the source of every module imported after it, PYSIDE-2029):
- bare: a QWidget, shown;
- belay: `gui.terminal.cli.main([])`, what typing `belay` runs: the console (`belay watch`) with its
  first-run check, in a private state directory (BELAY_STATE_DIR) and config directory whose first-run
  screen was already seen, so no other console is disturbed.  It imports the command line, the core's
  facade and the window, opens the hub's window and shows it; the hub's socket and the rest of the core
  load after that first paint (gui/window/app.py).
Python's bytecode cache is in a scratch directory (PYTHONPYCACHEPREFIX), filled by one unmeasured run of
each, as an installed Belay has it (pip compiles on install) and a checkout after its first start; the
checkout itself gets no __pycache__.  Runs alternate (bare, belay, bare, ...) so that a busy machine slows
both alike; the median of each is reported.  The platform is the desktop's when DISPLAY or WAYLAND_DISPLAY is
set, else offscreen.
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
if sys.argv[1] == "belay":  # what `belay` imports before Qt: its command line, then the core's facade
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
    main([])
sys.exit("no paint")
"""


FIRST_RUN_MARK = "first-run-done"
"""gui.window.chrome.first_run.MARK: the first-run screen was seen (a returning user's `belay`)."""


def first_paint(kind: str, scratch: Path, pycache: Path) -> float:
    config = scratch / "config"
    config.mkdir(parents=True)
    (config / FIRST_RUN_MARK).write_text("seen\n", encoding="utf-8")
    env = {**os.environ, "BELAY_CONFIG_DIR": str(config), "BELAY_STATE_DIR": str(scratch / "state"),
           "PYTHONPYCACHEPREFIX": str(pycache)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if not (env.get("DISPLAY") or env.get("WAYLAND_DISPLAY")):
        env["QT_QPA_PLATFORM"] = "offscreen"
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", CHILD, kind], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    elapsed = time.perf_counter() - start
    if "painted" not in done.stdout:
        raise SystemExit(f"{kind}: no first paint (rc {done.returncode}): {done.stderr.strip()[-600:]}")
    return elapsed


def main() -> None:
    bare: list[float] = []
    belay: list[float] = []
    with tempfile.TemporaryDirectory(prefix="belay-startup-") as tmp:
        pycache = Path(tmp) / "pycache"
        # warm the disk and bytecode caches for both: this measures starting, not the disk or the compiler
        first_paint("bare", Path(tmp) / "warm-bare", pycache)
        first_paint("belay", Path(tmp) / "warm-belay", pycache)
        for run in range(RUNS):
            bare.append(first_paint("bare", Path(tmp) / f"bare{run}", pycache))
            belay.append(first_paint("belay", Path(tmp) / f"belay{run}", pycache))
    b, w = statistics.median(bare), statistics.median(belay)
    print(f"bare PySide6 window: median {b:.3f} s over {RUNS} runs ({min(bare):.3f}-{max(bare):.3f})")
    print(f"belay:               median {w:.3f} s over {RUNS} runs ({min(belay):.3f}-{max(belay):.3f})")
    print(f"RESULT startup_first_paint = {w / b:.2f} x (bare PySide6 window)")


if __name__ == "__main__":
    main()
