"""Python's cycle collector, run on the GUI thread only.

The collector runs in whichever thread happens to allocate when its
threshold is reached: in Belay that is often a worker (the journal thread,
`asyncio.to_thread`).  A cycle holding a Qt widget collected there destroys
the widget off the GUI thread, which Qt answers with warnings ("Timers
cannot be stopped from another thread") or a crash.  So automatic
collection is switched off and a timer on the GUI thread collects instead:
the young generation every second, everything every minute.
"""

from __future__ import annotations

import gc

from PySide6.QtCore import QObject, QTimer

YOUNG_EVERY_MS = 1_000
FULL_EVERY_TICKS = 60


class MainThreadCollector(QObject):
    """Owns the timer; `start` takes over collection, `stop` gives it back to Python."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._timer = QTimer(self)
        self._timer.setInterval(YOUNG_EVERY_MS)
        self._timer.timeout.connect(self._collect)
        self._ticks = 0

    def start(self) -> None:
        gc.disable()
        self._timer.start()

    def stop(self) -> None:
        self._timer.stop()
        gc.enable()
        gc.collect()

    def _collect(self) -> None:
        self._ticks += 1
        gc.collect(2 if self._ticks % FULL_EVERY_TICKS == 0 else 0)

    def __repr__(self) -> str:
        return f"<MainThreadCollector running={self._timer.isActive()} ticks={self._ticks}>"
