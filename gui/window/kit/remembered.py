"""Layouts kept per user: where the person left the window and its dividers, back at the next start.

A person who narrows the timeline or widens the diff once should not do it every
morning.  Window geometry and splitter positions go to the window settings
(`window_settings()`: an INI file in Belay's config directory) under a key per
place, written when a divider is dragged or the window closes and read when the
widget is built.  A saved state that no longer fits (a splitter that gained a
pane, a screen that went away) is ignored by Qt's restore functions, which then
leave the built-in defaults in place.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QByteArray, QEvent, QObject, QSettings, QTimer
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QSplitter, QWidget

from core import config_dir


def window_settings() -> QSettings:
    """Where the window's choices are kept for the person: an INI file in Belay's config directory."""
    return QSettings(str(config_dir() / "window.ini"), QSettings.Format.IniFormat)


class SplitterMemory(QObject):
    """Saves a splitter's sizes under `key` whenever the person drags one of its handles."""

    def __init__(self, splitter: QSplitter, key: str, settings: QSettings) -> None:
        super().__init__(splitter)  # lives and dies with the splitter
        self._splitter = splitter
        self._key = key
        self._settings = settings
        splitter.splitterMoved.connect(self._on_splitter_moved)

    def _on_splitter_moved(self, _pos: int, _index: int) -> None:
        self._settings.setValue(self._key, self._splitter.saveState())


def keep_splitter(splitter: QSplitter, key: str, settings: QSettings) -> SplitterMemory:
    """Put `splitter`'s handles where the person left them (if saved) and remember where they go next.

    Call after the default sizes are set: a missing or unusable saved state leaves them."""
    restore_state(settings.value(key), splitter.restoreState)
    return SplitterMemory(splitter, key, settings)


def restore_geometry(window: QWidget, key: str, settings: QSettings) -> bool:
    """Give `window` the size and place it had when it last closed; False (defaults kept) if none was saved,
    or on a screen that is no one's (see `on_a_real_screen`)."""
    return on_a_real_screen() and restore_state(settings.value(key), window.restoreGeometry)


def save_geometry(window: QWidget, key: str, settings: QSettings) -> None:
    """Remember `window`'s size and place (call when it closes), if it was on a real screen."""
    if on_a_real_screen():
        settings.setValue(key, window.saveGeometry())


def restore_state(saved: object, restore: Callable[[QByteArray], bool]) -> bool:
    """Hand a saved byte state to a Qt restore function; anything else (nothing saved, an odd value in a
    hand-edited file) is ignored."""
    if not isinstance(saved, QByteArray) or saved.isEmpty():
        return False
    return bool(restore(saved))


def on_a_real_screen() -> bool:
    """False on the offscreen platform, whose 800x800 screen is no one's: a window there (a screenshot taken
    without a display) keeps its designed size, and neither takes a person's saved size (Qt would squeeze it
    into 800x800) nor changes it."""
    return QGuiApplication.platformName() != "offscreen"


FIT_FOR_MS = 3_000
"""How long after it is first shown a window is kept inside the screen (the window manager's frame comes
later than the window, and the person's own moves afterwards are theirs)."""


class ScreenFit(QObject):
    """Keeps a top-level window, its frame included, inside its screen's available geometry while it opens.

    The size a window is given leaves out the frame the window manager adds (a title bar, borders), and the
    frame is known only once the manager has put the window up; so the window is measured again on each
    show, move and resize of its first moments, and shrunk and moved until its frame fits."""

    def __init__(self, window: QWidget) -> None:
        super().__init__(window)
        self._window = window
        window.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        kind = event.type()
        if kind == QEvent.Type.Show:
            QTimer.singleShot(FIT_FOR_MS, self.deleteLater)  # its moments are over: the person's moves stand
        if kind in (QEvent.Type.Show, QEvent.Type.Move, QEvent.Type.Resize):
            self.fit()
        return False

    def fit(self) -> None:
        window = self._window
        screen = window.screen()
        if screen is None or not window.isWindow() or not window.isVisible() or window.isMaximized() \
                or window.isFullScreen():
            return
        room, frame, inner = screen.availableGeometry(), window.frameGeometry(), window.geometry()
        extra_w, extra_h = frame.width() - inner.width(), frame.height() - inner.height()
        width = max(min(inner.width(), room.width() - extra_w), window.minimumWidth())
        height = max(min(inner.height(), room.height() - extra_h), window.minimumHeight())
        if (width, height) != (inner.width(), inner.height()):
            window.resize(width, height)
        x = max(min(frame.x(), room.x() + room.width() - (width + extra_w)), room.x())
        y = max(min(frame.y(), room.y() + room.height() - (height + extra_h)), room.y())
        if (x, y) != (frame.x(), frame.y()):
            window.move(x, y)  # a top-level's move places its frame


def fit_default_size(window: QWidget, width: int, height: int) -> None:
    """Size `window` `width` x `height`, or smaller to fit the screen it will open on (a 1024x640 laptop
    gets the whole screen, not a window whose edges are off it), and keep it, frame included, inside that
    screen's available geometry as it opens (`ScreenFit`).

    On a screen that is no one's the designed size stands."""
    screen = window.screen()
    if screen is not None and on_a_real_screen():
        room = screen.availableGeometry()
        width, height = min(width, room.width()), min(height, room.height())
        ScreenFit(window)
    window.resize(width, height)
