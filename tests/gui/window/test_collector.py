"""Cycles are collected on the GUI thread while the window runs."""

from __future__ import annotations

import gc
import threading
import weakref
from typing import Any

from gui.window.collector import MainThreadCollector


class _Cycle:
    def __init__(self) -> None:
        self.me = self


def test_a_cycle_made_on_a_worker_is_freed_by_the_gui_thread(qtbot: Any) -> None:
    collector = MainThreadCollector()
    collector.start()
    try:
        assert not gc.isenabled()
        freed_on: list[str] = []
        cycle = _Cycle()
        weakref.finalize(cycle, lambda: freed_on.append(threading.current_thread().name))
        worker = threading.Thread(target=lambda: [[] for _ in range(100_000)], name="worker")
        del cycle
        worker.start()
        worker.join()
        assert freed_on == []  # the worker's allocations did not trigger a collection
        qtbot.waitUntil(lambda: bool(freed_on), timeout=3000)
        assert freed_on == [threading.main_thread().name]
    finally:
        collector.stop()
    assert gc.isenabled()
