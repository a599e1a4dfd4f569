"""Where the person leaves the window and its dividers is where they find them at the next start."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QPoint, QSettings, Qt
from PySide6.QtWidgets import QLabel, QMainWindow, QSplitter

from core import Console
from gui.window.main_window import MainWindow
from gui.window.remembered import fit_default_size, keep_splitter, restore_geometry, save_geometry
from tests.conftest import ROOT
from tests.gui.window.test_main_window import in_window

LEFT = Qt.MouseButton.LeftButton


def _drag_handle(qtbot: Any, split: QSplitter, by: int) -> None:
    """Drag the splitter's first divider `by` pixels sideways with the mouse, as a person does."""
    handle = split.handle(1)
    middle = handle.rect().center()
    qtbot.mousePress(handle, LEFT, pos=middle)
    qtbot.mouseMove(handle, middle + QPoint(by // 2, 0))
    qtbot.mouseMove(handle, middle + QPoint(by, 0))
    qtbot.mouseRelease(handle, LEFT, pos=middle + QPoint(by, 0))


def _window(settings: QSettings) -> tuple[QMainWindow, QSplitter]:
    window = QMainWindow()
    fit_default_size(window, 700, 400)
    restore_geometry(window, "test/geometry", settings)
    split = QSplitter(Qt.Orientation.Horizontal)
    split.addWidget(QLabel("left"))
    split.addWidget(QLabel("right"))
    split.setSizes([350, 350])
    keep_splitter(split, "test/split", settings)
    window.setCentralWidget(split)
    return window, split


def test_a_dragged_divider_and_the_window_size_come_back_in_the_next_window(qtbot: Any, tmp_path: Path) -> None:
    settings = QSettings(str(tmp_path / "window.ini"), QSettings.Format.IniFormat)
    first, split = _window(settings)
    qtbot.addWidget(first)
    first.show()
    qtbot.waitExposed(first)
    first.resize(640, 380)
    before = split.sizes()
    _drag_handle(qtbot, split, -120)
    dragged = split.sizes()
    assert dragged[0] < before[0] - 60, f"the drag did not move the divider: {before} -> {dragged}"
    save_geometry(first, "test/geometry", settings)
    first.close()

    second, again = _window(QSettings(str(tmp_path / "window.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(second)
    second.show()
    qtbot.waitExposed(second)
    assert (second.width(), second.height()) == (640, 380)
    assert again.sizes() == dragged


def test_a_saved_layout_that_no_longer_fits_is_ignored(qtbot: Any, tmp_path: Path) -> None:
    """A hand-edited or foreign value leaves the defaults instead of a broken layout."""
    fresh, fresh_split = _window(QSettings(str(tmp_path / "fresh.ini"), QSettings.Format.IniFormat))
    odd = QSettings(str(tmp_path / "window.ini"), QSettings.Format.IniFormat)
    odd.setValue("test/split", "not a splitter state")
    odd.setValue("test/geometry", 42)
    window, split = _window(odd)
    for each in (fresh, window):
        qtbot.addWidget(each)
        each.show()
        qtbot.waitExposed(each)
    assert split.sizes() == fresh_split.sizes()
    assert (window.width(), window.height()) == (fresh.width(), fresh.height()) == (700, 400)


FIT_CHILD = r"""
import sys
from PySide6.QtWidgets import QApplication, QMainWindow
from gui.window.remembered import fit_default_size
app = QApplication(sys.argv[:1])
window = QMainWindow()
fit_default_size(window, 1400, 860)
room = window.screen().availableGeometry()
print(app.platformName(), window.width(), window.height(), room.width(), room.height())
"""


def test_on_a_1024x640_screen_the_default_size_fits_the_screen() -> None:
    """On a real (X) screen of a small laptop the console opens inside it; offscreen it keeps its designed size."""
    if shutil.which("xvfb-run") is None:
        pytest.skip("needs xvfb-run (Debian: apt-get install xvfb; make system-deps)")
    env = {k: v for k, v in os.environ.items() if k not in ("QT_QPA_PLATFORM", "DISPLAY", "WAYLAND_DISPLAY")}
    shown = subprocess.run(["xvfb-run", "-a", "-s", "-screen 0 1024x640x24", sys.executable, "-c", FIT_CHILD],
                           cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert shown.returncode == 0, shown.stderr
    platform, width, height, room_width, room_height = shown.stdout.split()
    assert platform == "xcb" and (int(room_width), int(room_height)) == (1024, 640)
    assert (int(width), int(height)) == (1024, 640)
    offscreen = subprocess.run([sys.executable, "-c", FIT_CHILD], cwd=ROOT, capture_output=True, text=True,
                               timeout=60, env={**env, "QT_QPA_PLATFORM": "offscreen"})
    assert offscreen.stdout.split()[:3] == ["offscreen", "1400", "860"], offscreen.stderr


def test_the_console_opens_with_the_timeline_divider_where_it_was_left(qtbot: Any, loop: Any,
                                                                       workspace: Path) -> None:
    left: list[list[int]] = []

    async def drag(console: Console, window: MainWindow) -> None:
        window.resize(1300, 760)  # room to move: the offscreen screen (800 wide) opens it at its smallest
        await qtbot_wait_exposed(qtbot, window)
        before = window.split.sizes()
        _drag_handle(qtbot, window.split, -150)
        assert window.split.sizes()[0] < before[0] - 100
        left.append(window.split.sizes())

    async def reopen(console: Console, window: MainWindow) -> None:
        window.resize(1300, 760)
        await qtbot_wait_exposed(qtbot, window)
        assert window.split.sizes() == left[0]

    in_window(qtbot, loop, workspace, drag)
    in_window(qtbot, loop, workspace, reopen)


async def qtbot_wait_exposed(qtbot: Any, window: MainWindow) -> None:
    from tests.conftest import wait_until
    await wait_until(lambda: window.isVisible() and window.split.handle(1).isVisible(), what="the window")
