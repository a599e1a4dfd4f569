"""Cycles are collected on the GUI thread while the window runs."""

from __future__ import annotations

import gc
import threading
import weakref
from typing import Any

from gui.window.runtime.collector import MainThreadCollector


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


def test_what_outlives_a_young_collection_is_walked_again_only_by_the_rare_full_one(qtbot: Any,
                                                                                   monkeypatch: Any) -> None:
    from gui.window.runtime import collector as module

    monkeypatch.setattr(module, "IDLE_S", 0.0)  # nobody at the window (an earlier test's may be the active one)
    collector = MainThreadCollector()
    collector.start()
    try:
        session = [[n] for n in range(200_000)]  # a long session's objects, alive
        old = _Cycle()
        freed: list[bool] = []
        weakref.finalize(old, lambda: freed.append(True))
        collector._collect()  # a young collection: survivors frozen
        del old  # garbage now, but among the frozen objects
        walked = len(gc.get_objects())  # what the next collections walk (frozen objects are not)
        assert walked < 100_000 and gc.get_freeze_count() >= len(session)
        collector._collect()  # young
        assert not freed
        collector._full_due = collector._ticks + 1
        collector._collect()  # the full one
        assert freed and len(session) == 200_000 and gc.get_freeze_count() >= len(session)
    finally:
        collector.stop()
    assert gc.isenabled() and gc.get_freeze_count() == 0


def test_a_full_collection_that_falls_due_under_a_flood_waits_for_a_quiet_tick(qtbot: Any, monkeypatch: Any) -> None:
    """At 100,000 calls a full collection takes some 400 ms: a flood would feel it as a stall."""
    from gui.window.runtime import collector as module

    monkeypatch.setattr(module, "IDLE_S", 0.0)  # nobody at the window (an earlier test's may be the active one)
    collector = MainThreadCollector()
    collector.start()
    try:
        old = _Cycle()
        freed: list[bool] = []
        weakref.finalize(old, lambda: freed.append(True))
        collector._collect()  # frozen
        del old
        collector._full_due = collector._ticks + 1
        flood = [[n] for n in range(module.QUIET * 2)]  # what a tick finds under a flood
        collector._collect()
        assert not freed  # due, and put off
        del flood
        collector._collect()  # the flood is over: a quiet tick
        assert freed and collector._full_due > collector._ticks
    finally:
        collector.stop()


def test_once_settled_what_start_up_made_is_not_walked_and_later_cycles_are_still_freed(qtbot: Any) -> None:
    collector = MainThreadCollector()
    collector.start()
    try:
        window_parts = [[n] for n in range(100_000)]  # what opening the window made, alive
        MainThreadCollector.settle()
        assert len(gc.get_objects()) < 50_000  # the next collections do not walk them
        freed: list[bool] = []
        later = _Cycle()
        weakref.finalize(later, lambda: freed.append(True))
        del later
        qtbot.waitUntil(lambda: bool(freed), timeout=3000)  # the young collection, on its timer
        assert len(window_parts) == 100_000
    finally:
        collector.stop()


def test_a_full_collection_waits_while_the_person_uses_the_window(qtbot: Any, monkeypatch: Any) -> None:
    """Its pause (some 400 ms at 100,000 calls) falls where nobody is looking: after a few idle seconds, or while
    another application is active; an hour overdue, it runs all the same."""
    from PySide6.QtCore import QEvent, QPoint, QPointF, Qt
    from PySide6.QtGui import QGuiApplication, QWheelEvent
    from PySide6.QtWidgets import QApplication, QWidget

    from gui.window.runtime import collector as module

    monkeypatch.setattr(module, "IDLE_S", 0.2)
    window = QWidget()
    qtbot.addWidget(window)
    window.show()
    window.activateWindow()
    qtbot.waitUntil(lambda: QGuiApplication.applicationState() == Qt.ApplicationState.ApplicationActive)

    def scroll() -> None:  # a person's input, as Qt delivers it
        QApplication.sendEvent(window, QWheelEvent(QPointF(5, 5), QPointF(5, 5), QPoint(0, 0), QPoint(0, 120),
                                                   Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier,
                                                   Qt.ScrollPhase.NoScrollPhase, False))

    collector = MainThreadCollector()
    collector.start()
    try:
        freed: list[str] = []

        def garbage(name: str) -> None:
            cycle = _Cycle()
            weakref.finalize(cycle, lambda: freed.append(name))
            collector._collect()  # frozen: only a full collection frees it
            del cycle

        garbage("used")
        collector._full_due = collector._ticks + 1
        for _ in range(3):  # due, quiet, but the window is in use
            scroll()
            collector._collect()
            qtbot.wait(100)
        assert freed == []
        qtbot.wait(250)  # left alone past IDLE_S
        collector._collect()
        assert freed == ["used"]

        garbage("overdue")
        collector._full_due = collector._ticks + 1
        scroll()
        collector._collect()
        assert freed == ["used"]
        collector._ticks += module.LATEST_TICKS
        collector._collect()
        assert freed == ["used", "overdue"]
        assert collector._input is None  # the application-wide filter is there only while one waits
    finally:
        collector.stop()
    assert QEvent.Type.Wheel in module._INPUT
