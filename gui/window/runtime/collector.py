"""Python's cycle collector, run on the GUI thread only, in steps short enough not to stall it.

The collector runs in whichever thread happens to allocate when its
threshold is reached: in Belay that is often a worker (the journal thread,
`asyncio.to_thread`).  A cycle holding a Qt widget collected there destroys
the widget off the GUI thread, which Qt answers with warnings ("Timers
cannot be stopped from another thread") or a crash.  So automatic
collection is switched off and a timer on the GUI thread collects instead:
the young generation twenty times a second.

A collection of everything walks every object the process tracks: with a
100,000-call timeline that is some 300,000 objects and about half a second
on the GUI thread.  So what outlives a young collection is frozen
(`gc.freeze`: moved where no collection looks), as is what start-up made
(modules, classes): each collection then walks only what the last fraction
of a second made, whatever the size of the session.  What is frozen is looked at again
only by a full collection every FULL_EVERY_TICKS (ten minutes), the one step
whose cost still grows with the session (some 400 ms at 100,000 calls): so it
waits for a quiet tick, when the window is not taking in a flood, while nobody
uses the window (another application is the active one, or no key, click or
wheel has reached Belay for IDLE_S; at the latest LATEST_TICKS after it fell
due, used or not).  Freezing keeps nothing alive: an
object whose last reference goes is freed at once as ever; only a cycle among
frozen objects (a dialog closed long after it was opened) waits for the full
collection to be freed.
"""

from __future__ import annotations

import gc
import time

from PySide6.QtCore import QEvent, QObject, Qt, QTimer
from PySide6.QtGui import QGuiApplication

YOUNG_EVERY_MS = 50
"""Often enough that the young generation stays small: under a flood of calls, what one second made took up to
24 ms to walk (bench/timeline.py at 100,000 calls), what 250 ms made still 8 to 14 ms, what 100 ms made up to
15 to 20 ms, chained with a layout and a repaint into stalls over 50 ms; what 50 ms makes, 9 to 12 ms.
What outlives a young collection is frozen at once: no walk looks at it again but the full one.  Walking it once
more first (a middle collection every 100 ms) cost as much again as the young ones, and was the longest
collection under a flood: 15 to 19 ms, where the young ones then took 9 to 11 (bench/timeline.py, three pairs)."""
FULL_EVERY_TICKS = 12_000
QUIET = 1_000
"""A full collection that is due waits for a tick that finds fewer new objects than this: under a flood each
tick finds some 7,000 (bench/timeline.py), a window at rest a few dozen."""
IDLE_S = 5.0
"""...and for the person to leave the window alone this long (if Belay is the active application): the pause
then falls where nobody is looking."""
LATEST_TICKS = 72_000
"""An hour past due, a full collection runs at the next quiet tick even if the window is in use (its cycles
would otherwise pile up for as long as someone keeps working in it)."""
_INPUT = frozenset({QEvent.Type.KeyPress, QEvent.Type.MouseButtonPress, QEvent.Type.MouseButtonDblClick,
                    QEvent.Type.Wheel, QEvent.Type.MouseMove, QEvent.Type.TouchBegin})


class _LastInput(QObject):
    """When the person last used the application: an application-wide filter, there only while a full collection
    waits (it sees every event the application delivers)."""

    def __init__(self) -> None:
        super().__init__()
        self.at = time.monotonic()  # from when it was installed: nothing is known of before

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        if event.type() in _INPUT:
            self.at = time.monotonic()
        return False


class MainThreadCollector(QObject):
    """Owns the timer; `start` takes over collection, `stop` gives it back to Python."""

    _running = 0
    """How many collectors have started and not stopped (`settle` freezes only while one runs)."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._timer = QTimer(self)
        self._timer.setInterval(YOUNG_EVERY_MS)
        self._timer.timeout.connect(self._collect)
        self._ticks = 0
        self._full_due = FULL_EVERY_TICKS
        """The tick from which the next full collection may run (at the first quiet one)."""
        self.longest = 0.0
        """The longest collection so far, in seconds (for benchmarks and logs)."""
        self._input: _LastInput | None = None
        """Watching for the person's input while a full collection is due."""

    def start(self) -> None:
        gc.disable()
        gc.freeze()  # what start-up made
        self._timer.start()
        MainThreadCollector._running += 1

    @staticmethod
    def settle() -> None:
        """Start-up is over (the window is shown): what it made is frozen as it is, without a walk (some
        100,000 objects: the first collections would otherwise take 70-100 ms each to walk them)."""
        if MainThreadCollector._running:  # no collector, nobody to unfreeze it later (a test's window)
            gc.freeze()

    def stop(self) -> None:
        if not self._timer.isActive():
            return  # never started, or stopped already: collection is Python's as it was
        MainThreadCollector._running -= 1
        self._timer.stop()
        self._unwatch()
        gc.unfreeze()
        gc.enable()
        gc.collect()

    def _collect(self) -> None:
        self._ticks += 1
        began = time.perf_counter()
        if self._ticks >= self._full_due and gc.get_count()[0] < QUIET and self._unattended():
            self._full_due = self._ticks + FULL_EVERY_TICKS
            self._unwatch()
            gc.unfreeze()
            gc.collect(2)
            gc.freeze()
        else:
            gc.collect(0)
            gc.freeze()  # what outlived it: no collection but the full one walks it again
        self.longest = max(self.longest, time.perf_counter() - began)

    def _unattended(self) -> bool:
        """Nobody is using the window: another application is active, or no input for IDLE_S (watched from the
        first tick a full collection is due); or the collection is LATEST_TICKS overdue."""
        app = QGuiApplication.instance()
        if app is None or self._ticks >= self._full_due + LATEST_TICKS:
            return True
        if QGuiApplication.applicationState() != Qt.ApplicationState.ApplicationActive:
            return True
        if self._input is None:
            self._input = _LastInput()
            app.installEventFilter(self._input)
        return time.monotonic() - self._input.at >= IDLE_S

    def _unwatch(self) -> None:
        app = QGuiApplication.instance()
        if self._input is not None and app is not None:
            app.removeEventFilter(self._input)
        self._input = None

    def __repr__(self) -> str:
        return (f"<MainThreadCollector running={self._timer.isActive()} ticks={self._ticks} full_due={self._full_due} "
                f"frozen={gc.get_freeze_count()} longest={self.longest * 1000:.1f} ms>")
