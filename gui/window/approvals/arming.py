"""When an answer may be given: only to a request a person has seen, and only by a fresh key press.

Two guards stand between a key or a click and `Console.approve` / `deny`:

- `Sight` follows the request shown.  A new request is *unseen* until its
  diff (or its command card, or its details when it has neither) has been
  painted in the shown state; from then it counts `SEEN_S` on its clock and
  only then is it *armed*.  Denying needs the request seen; approving needs
  it armed.  Hidden again (the panel folded, the window minimised), it is
  unseen again.  The clock is a seam: tests give a fake one and call `poll`.
- `AnswerKeys` watches the answer keys (Ctrl+Return / Ctrl+Enter approve,
  Ctrl+D deny, Return in the reason box deny) for the whole application, so
  it sees their releases wherever the focus went.  A key answers only on a
  press that is not an auto-repeat and that followed the key's release: a
  key held down, or repeating, never answers, and after an answer the key
  must be released and pressed again.

Signals:
    Sight.changed: the shown request became seen, armed, or unseen again, or its countdown moved.
    AnswerKeys.pressed(str): "approve" or "deny", from a fresh press while the focus is in the panel.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtGui import QGuiApplication, QKeyEvent
from PySide6.QtWidgets import QApplication, QWidget

SEEN_S = 0.5
"""How long a request must have been on screen, fully drawn, before it can be approved."""
TICK_MS = 100
"""How often the countdown on the Approve button moves."""
APPROVE_KEYS = frozenset({Qt.Key.Key_Return, Qt.Key.Key_Enter})
DENY_KEY = Qt.Key.Key_D

Clock = Callable[[], float]


class Sight(QObject):
    """Whether the request shown has been drawn, and for how long: seen (deny may act), armed (approve may)."""

    changed = Signal()

    def __init__(self, parent: QObject | None = None, *, clock: Clock = time.monotonic,
                 seen_s: float = SEEN_S) -> None:
        super().__init__(parent)
        self.clock = clock
        self.seen_s = seen_s
        self._shown: str | None = None
        self._drawn_at: float | None = None
        """When the shown request was first painted (on `clock`); None while it is not on screen."""
        self._armed = False
        self._timer = QTimer(self)
        self._timer.setInterval(TICK_MS)
        self._timer.timeout.connect(self.poll)

    def __repr__(self) -> str:
        return f"<Sight shown={self._shown!r} seen={self.seen()} armed={self._armed} left={self.left():.2f}>"

    @property
    def shown(self) -> str | None:
        return self._shown

    def show(self, key: str | None) -> None:
        """A request (by call id; None: nothing) is now the one shown: unseen until it is drawn."""
        if key != self._shown:
            self._shown = key
            self.unsee()

    def unsee(self) -> None:
        """What is shown left the screen (or is not drawn yet): it must be drawn and looked at again."""
        was = self._drawn_at is not None or self._armed
        self._drawn_at = None
        self._armed = False
        self._timer.stop()
        if was or self._shown is not None:
            self.changed.emit()

    def drawn(self, key: str | None) -> None:
        """The request `key` was painted on screen in its shown state (repeated paints change nothing)."""
        if key is None or key != self._shown or self._drawn_at is not None:
            return
        self._drawn_at = self.clock()
        self._timer.start()
        self.changed.emit()
        self.poll()

    def poll(self) -> None:
        """Check the clock: arm once SEEN_S has passed since the drawing (the timer calls this; so may tests)."""
        if self._drawn_at is None or self._armed:
            self._timer.stop()
            return
        if self.clock() - self._drawn_at >= self.seen_s:
            self._armed = True
            self._timer.stop()
        self.changed.emit()

    def seen(self) -> bool:
        """The shown request is on screen, drawn."""
        return self._drawn_at is not None

    def armed(self) -> bool:
        """The shown request has been on screen, drawn, for SEEN_S."""
        return self._armed

    def left(self) -> float:
        """Seconds until armed (SEEN_S while not drawn; 0 once armed)."""
        if self._armed:
            return 0.0
        if self._drawn_at is None:
            return self.seen_s
        return max(self.seen_s - (self.clock() - self._drawn_at), 0.0)


class AnswerKeys(QObject):
    """The answer keys, taken only on fresh presses while the focus is inside `panel` (an application-wide
    event filter, so that releases are seen wherever the focus is)."""

    pressed = Signal(str)

    def __init__(self, panel: QWidget, reason: QWidget) -> None:
        super().__init__(panel)
        self._panel = panel
        self._reason = reason
        self._held: set[int] = set()
        """Answer keys pressed and not released since."""
        app = QApplication.instance()
        assert app is not None
        app.installEventFilter(self)  # removed by Qt when this object goes (with the panel)
        app_state = QGuiApplication.instance()
        if isinstance(app_state, QGuiApplication):
            app_state.applicationStateChanged.connect(self._on_application_state_changed)

    def __repr__(self) -> str:
        return f"<AnswerKeys held={sorted(self._held)}>"

    def held(self) -> bool:
        return bool(self._held)

    def _answer(self, event: QKeyEvent) -> str | None:
        key, mods = event.key(), event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier
        if key in APPROVE_KEYS and mods == Qt.KeyboardModifier.ControlModifier:
            return "approve"
        if key == DENY_KEY and mods == Qt.KeyboardModifier.ControlModifier:
            return "deny"
        if key in APPROVE_KEYS and mods == Qt.KeyboardModifier.NoModifier and self._reason.hasFocus():
            return "deny"  # Enter in the reason box denies with that reason
        return None

    def _focus_inside(self) -> bool:
        focus = QApplication.focusWidget()
        return focus is not None and (focus is self._panel or self._panel.isAncestorOf(focus))

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        kind = event.type()
        if kind == QEvent.Type.KeyRelease and isinstance(event, QKeyEvent):
            if not event.isAutoRepeat():
                self._held.discard(event.key())
            return False
        if kind not in (QEvent.Type.KeyPress, QEvent.Type.ShortcutOverride) or not isinstance(event, QKeyEvent):
            return False
        if not self._focus_inside() or self._answer(event) is None:
            return False
        if kind == QEvent.Type.ShortcutOverride:
            event.accept()  # the press comes to the panel as a key press, never to another shortcut
            return True
        key = event.key()
        fresh = not event.isAutoRepeat() and key not in self._held
        self._held.add(key)
        if fresh:
            answer = self._answer(event)
            assert answer is not None
            self.pressed.emit(answer)
        return True  # eaten: a repeat or a held key does nothing at all

    def _on_application_state_changed(self, state: Qt.ApplicationState) -> None:
        """Keys released in another application are never seen here: leaving it forgets them."""
        if state != Qt.ApplicationState.ApplicationActive:
            self._held.clear()
