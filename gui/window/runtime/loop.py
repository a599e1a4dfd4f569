"""The loop that serves Qt and asyncio on the one thread: qasync's, with a cancelled timer let go at once.

qasync runs every callback from a Qt timer: `call_later` (and so `call_soon` and `call_at`) starts one, and
its timer event runs the callback.  A handle cancelled before its time only marks itself there, and its Qt
timer stays registered until it would have fired.  Every call through the pipeline arms a timeout
(`asyncio.timeout`, 30 s for most tools) and leaves it early, so a flood of calls kept tens of thousands of
dead timers, and Qt files each new timer among them: with 50,000 waiting, a bare task dispatch on the loop
took 151 us against 45 with none.  Here a cancelled handle kills its timer.

A callback handed over from another thread (`call_soon_threadsafe`: a journal commit done, a worker's result)
runs when the loop takes the hand-over, rather than being put on a timer of its own from there: one Qt event
instead of two, for every call through the pipeline.

Everything else is qasync's, unchanged.  `belay`, the tests' loop and the benchmarks that measure the
window's loop all make theirs as `EventLoop(app)`.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Callable
from typing import Any

import qasync
from PySide6.QtCore import QObject, Qt, QTimerEvent, Signal
from PySide6.QtWidgets import QApplication


class _TimerHandle(asyncio.Handle):
    """A callback waiting for its Qt timer; cancelling it kills the timer."""

    __slots__ = ("_timers", "_timer_id")

    def __init__(self, callback: Callable[..., object], args: tuple[Any, ...], loop: asyncio.AbstractEventLoop,
                 timers: _Timers, context: contextvars.Context | None = None) -> None:
        super().__init__(callback, args, loop, context=context)
        self._timers = timers
        self._timer_id = 0

    def cancel(self) -> None:
        if not self._cancelled:
            self._timers.forget(self._timer_id)
        super().cancel()


class _Timers(QObject):
    """The Qt timers of the loop's waiting callbacks, by timer id (what qasync's own timer object does, and
    `forget`)."""

    def __init__(self) -> None:
        super().__init__()
        self._waiting: dict[int, _TimerHandle] = {}
        self._stopped = False

    def add_callback(self, handle: _TimerHandle, delay: float = 0) -> _TimerHandle:
        handle._timer_id = timer_id = self.startTimer(int(max(0.0, delay) * 1000))
        self._waiting[timer_id] = handle
        return handle

    def forget(self, timer_id: int) -> None:
        """The handle of `timer_id` was cancelled: its timer goes now, not when it would have fired."""
        if self._waiting.pop(timer_id, None) is not None:
            self.killTimer(timer_id)

    def timerEvent(self, event: QTimerEvent) -> None:  # noqa: N802 - Qt override
        timer_id = event.timerId()
        self.killTimer(timer_id)
        handle = self._waiting.pop(timer_id, None)
        if handle is not None and not self._stopped and not handle._cancelled:
            handle._run()

    @property
    def waiting(self) -> int:
        return len(self._waiting)

    def stop(self) -> None:
        self._stopped = True

    def set_debug(self, enabled: bool) -> None:
        """(qasync times its callbacks in debug mode; this loop does not.)"""


class _HandOver(QObject):
    """Callbacks handed to the loop from other threads, each run when its queued signal reaches the loop."""

    arrived = Signal(object)

    def __init__(self) -> None:
        super().__init__()
        self.arrived.connect(self._run, Qt.ConnectionType.QueuedConnection)  # queued even from the loop's thread

    @staticmethod
    def _run(handle: asyncio.Handle) -> None:
        if not handle._cancelled:
            handle._run()


class EventLoop(qasync.QEventLoop):
    """qasync's loop over the application; its timers are `_Timers`, its hand-overs `_HandOver`."""

    def __init__(self, app: QApplication) -> None:
        super().__init__(app)
        self._timer = _Timers()
        self._hand_over = _HandOver()

    def call_soon_threadsafe(self, callback: Callable[..., object], *args: Any,
                             context: contextvars.Context | None = None) -> asyncio.Handle:
        handle = asyncio.Handle(callback, args, self, context=context)
        self._hand_over.arrived.emit(handle)
        return handle

    def call_later(self, delay: float, callback: Callable[..., object], *args: Any,
                   context: contextvars.Context | None = None) -> asyncio.Handle:
        if asyncio.iscoroutinefunction(callback):  # as qasync checks
            raise TypeError("coroutines cannot be used with call_later")
        if not callable(callback):
            raise TypeError(f"callback must be callable: {type(callback).__name__}")
        return self._timer.add_callback(_TimerHandle(callback, args, self, self._timer, context), delay)

    @property
    def waiting_timers(self) -> int:
        """Callbacks waiting for their timer (a cancelled one is not among them)."""
        return self._timer.waiting
