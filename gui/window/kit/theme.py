"""Belay's themes: a table of named colours per theme, and the switch that applies one.

Every colour the window draws comes from here (or from the Qt palette this
module sets), so a dark desktop never gets text meant for white paper.  The
tables are plain data: `CONTRAST_PAIRS` lists which role is drawn on which
background, and a test checks each pair against WCAG AA (4.5:1).

`ThemeSwitch` applies "light", "dark" or "system"; with "system" it follows
Qt 6's colour-scheme hint (`QStyleHints.colorScheme`) live.  Widgets that bake
colours into HTML re-render on `QEvent.PaletteChange`, which Qt sends to every
widget when the application palette changes.
"""

from __future__ import annotations

import os
import string
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from PySide6.QtCore import SLOT, QEvent, QObject, QSettings, Qt, QTimer, Signal, Slot
from PySide6.QtGui import QAction, QActionGroup, QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication, QMenu, QWidget

from gui.window.kit.contrast import contrast
from gui.window.kit.resources import resources_dir

THEME_NAMES = ("system", "light", "dark")
"""What the user can choose; "system" follows the desktop's colour scheme."""
THEME_ENV = "BELAY_THEME"
"""Overrides the saved choice (screenshots, unattended runs)."""
THEME_KEY = "appearance/theme"
PORTAL = ("org.freedesktop.portal.Desktop", "/org/freedesktop/portal/desktop", "org.freedesktop.portal.Settings")
"""The XDG desktop portal's Settings interface (service, object, interface), where Linux desktops say their scheme."""
PORTAL_SCHEMES = {1: Qt.ColorScheme.Dark, 2: Qt.ColorScheme.Light}
"""The portal's "org.freedesktop.appearance" "color-scheme" (0 no preference, 1 prefer dark, 2 prefer light)."""
PORTAL_TIMEOUT_MS = 2000


@dataclass(frozen=True)
class Theme:
    """The colours of one theme, by the role they play in the window."""

    name: str
    window_bg: str
    base_bg: str
    """Lists, text views, inputs."""
    alt_bg: str
    """Alternate rows, quiet panels."""
    border: str
    text: str
    muted: str
    """Secondary text: hints, "Asked by", counts."""
    link: str
    success: str
    warning: str
    danger: str
    running: str
    denied: str
    on_strong: str
    """Text on `approve_bg` / `deny_bg` (also the bypass banner and the sandbox-off badge)."""
    approve_bg: str
    deny_bg: str
    caution_bg: str
    """The "MEDIUM impact" badge."""
    waiting_bg: str
    waiting_border: str
    notice_bg: str
    """The trust banner and the settings problems box."""
    notice_fg: str
    notice_border: str
    info_bg: str
    """The supervise bar."""
    info_fg: str
    info_border: str
    flag_deny_fg: str
    flag_deny_bg: str
    flag_ask_fg: str
    flag_ask_bg: str
    chart_queued: str
    chart_axis: str
    undo_marker: str
    undo_now: str
    undo_base: str
    undo_undo: str

    @property
    def dark(self) -> bool:
        return contrast(self.base_bg, "#000000") < contrast(self.base_bg, "#ffffff")

    def colours(self) -> dict[str, str]:
        """Role name -> colour, for the style sheet template."""
        return {k: v for k, v in asdict(self).items() if k != "name"}


LIGHT = Theme(
    name="light", window_bg="#f6f8fa", base_bg="#ffffff", alt_bg="#f6f8fa", border="#d0d7de",
    text="#1f2328", muted="#59636e", link="#0969da",
    success="#1a7f37", warning="#845600", danger="#cf222e", running="#0969da", denied="#8250df",
    on_strong="#ffffff", approve_bg="#1a7f37", deny_bg="#cf222e", caution_bg="#845600",
    waiting_bg="#fff8e1", waiting_border="#d4a72c",
    notice_bg="#fff8c5", notice_fg="#3b2300", notice_border="#d4a72c",
    info_bg="#ddf4ff", info_fg="#0a3069", info_border="#54aeff",
    flag_deny_fg="#a40e26", flag_deny_bg="#ffebe9", flag_ask_fg="#7d4e00", flag_ask_bg="#fff1c2",
    chart_queued="#afb8c1", chart_axis="#d8dee4",
    undo_marker="#d0d7de", undo_now="#b6e3ff", undo_base="#e6e6e6", undo_undo="#aceebb",
)
DARK = Theme(
    name="dark", window_bg="#161b22", base_bg="#0d1117", alt_bg="#161b22", border="#3d444d",
    text="#e6edf3", muted="#9198a1", link="#4493f8",
    success="#3fb950", warning="#d29922", danger="#f85149", running="#4493f8", denied="#ab7df8",
    on_strong="#ffffff", approve_bg="#1f7a34", deny_bg="#b62324", caution_bg="#7d4e00",
    waiting_bg="#272115", waiting_border="#9e6a03",
    notice_bg="#2e2611", notice_fg="#f2cc60", notice_border="#9e6a03",
    info_bg="#0c2d6b", info_fg="#cae8ff", info_border="#1f6feb",
    flag_deny_fg="#ffa198", flag_deny_bg="#490202", flag_ask_fg="#f2cc60", flag_ask_bg="#3b2300",
    chart_queued="#656c76", chart_axis="#3d444d",
    undo_marker="#3d444d", undo_now="#0c2d6b", undo_base="#30363d", undo_undo="#1b4721",
)
THEMES = {theme.name: theme for theme in (LIGHT, DARK)}

_TEXT_ROLES = ("text", "muted", "link", "success", "warning", "danger", "running", "denied")
CONTRAST_PAIRS: tuple[tuple[str, str], ...] = (
    *((role, bg) for role in _TEXT_ROLES for bg in ("window_bg", "base_bg", "alt_bg")),
    *((role, "waiting_bg") for role in ("text", "muted", "warning", "danger", "success")),
    ("on_strong", "approve_bg"), ("on_strong", "deny_bg"), ("on_strong", "caution_bg"),
    ("notice_fg", "notice_bg"), ("info_fg", "info_bg"),
    ("flag_deny_fg", "flag_deny_bg"), ("flag_ask_fg", "flag_ask_bg"),
    ("text", "undo_marker"), ("text", "undo_now"), ("text", "undo_base"), ("text", "undo_undo"),
)
"""(foreground role, background role) for every place the window draws text on a colour."""

def current() -> Theme:
    """The theme the window shows now: the one whose base colour the application palette has.

    Read from the palette rather than kept beside it, so the two cannot disagree (light when no theme
    was applied, as in a bare QApplication)."""
    if QGuiApplication.instance() is None:
        return LIGHT
    base = QGuiApplication.palette().color(QPalette.ColorRole.Base).name()
    return DARK if base == DARK.base_bg else LIGHT


def style_sheet(theme: Theme) -> str:
    """The application style sheet: the template in resources/styles with `theme`'s colours."""
    path = resources_dir() / "styles" / "belay.qss"
    if not path.exists():
        return ""
    return string.Template(path.read_text(encoding="utf-8")).substitute(theme.colours())


def palette(theme: Theme) -> QPalette:
    """A Qt palette with `theme`'s colours, so unstyled widgets agree with the style sheet."""
    p = QPalette()
    roles = {
        QPalette.ColorRole.Window: theme.window_bg, QPalette.ColorRole.WindowText: theme.text,
        QPalette.ColorRole.Base: theme.base_bg, QPalette.ColorRole.AlternateBase: theme.alt_bg,
        QPalette.ColorRole.Text: theme.text, QPalette.ColorRole.Button: theme.alt_bg,
        QPalette.ColorRole.ButtonText: theme.text, QPalette.ColorRole.ToolTipBase: theme.base_bg,
        QPalette.ColorRole.ToolTipText: theme.text, QPalette.ColorRole.PlaceholderText: theme.muted,
        QPalette.ColorRole.Link: theme.link, QPalette.ColorRole.Highlight: theme.link,
        QPalette.ColorRole.HighlightedText: theme.on_strong, QPalette.ColorRole.BrightText: theme.on_strong,
    }
    for role, colour in roles.items():
        p.setColor(role, QColor(colour))
    for role in (QPalette.ColorRole.WindowText, QPalette.ColorRole.Text, QPalette.ColorRole.ButtonText):
        p.setColor(QPalette.ColorGroup.Disabled, role, QColor(theme.muted))
    return p


def saved_choice(settings: QSettings) -> str:
    """The theme to start with: $BELAY_THEME, else the user's saved choice, else "system"."""
    choice = os.environ.get(THEME_ENV) or str(settings.value(THEME_KEY, "system"))
    return choice if choice in THEME_NAMES else "system"


class ThemeSwitch(QObject):
    """Applies a theme choice to the application and, for "system", follows the desktop.

    Signals:
        changed(str): the theme now shown ("light" or "dark") changed.
    """

    changed = Signal(str)

    def __init__(self, app: QApplication, choice: str = "system", settings: QSettings | None = None) -> None:
        super().__init__(app)
        self.setObjectName("themeSwitch")
        self._app = app
        self._settings = settings
        self._choice = choice if choice in THEME_NAMES else "system"
        self._desktop = Qt.ColorScheme.Unknown
        """The desktop's latest word on its scheme: Qt's hint or the XDG portal, whichever spoke last."""
        app.styleHints().colorSchemeChanged.connect(self._on_color_scheme_changed)
        self._hear_the_portal()

    @staticmethod
    def of(app: QApplication) -> ThemeSwitch | None:
        """The switch installed on `app`, if any."""
        return app.findChild(ThemeSwitch, "themeSwitch")

    def __repr__(self) -> str:
        return f"<ThemeSwitch choice={self._choice} shown={current().name}>"

    @property
    def choice(self) -> str:
        return self._choice

    def set_choice(self, choice: str) -> None:
        """Show "light", "dark" or "system" (following the desktop from now on)."""
        if choice not in THEME_NAMES:
            raise ValueError(f"unknown theme {choice!r}; choose one of {', '.join(THEME_NAMES)}")
        self._choice = choice
        if self._settings is not None:
            self._settings.setValue(THEME_KEY, choice)
            self._settings.sync()
        self.apply()

    def resolved(self) -> Theme:
        if self._choice == "system":
            return DARK if self.desktop_scheme() == Qt.ColorScheme.Dark else LIGHT
        return THEMES[self._choice]

    def desktop_scheme(self) -> Qt.ColorScheme:
        """The colour scheme the desktop asks for (Unknown when it does not say)."""
        if self._desktop != Qt.ColorScheme.Unknown:
            return self._desktop
        return self._app.styleHints().colorScheme()

    def apply(self) -> None:
        """Set the palette and style sheet of the chosen theme (a no-op when already shown)."""
        theme = self.resolved()
        first = not self._app.styleSheet()
        if theme is current() and not first:
            return
        self._app.setPalette(palette(theme))
        self._app.setStyleSheet(style_sheet(theme))
        self.changed.emit(theme.name)

    def _on_color_scheme_changed(self, scheme: Qt.ColorScheme) -> None:
        self._desktop = scheme
        if self._choice == "system":
            self.apply()

    def _hear_the_portal(self) -> None:
        """On a Linux desktop, hear the XDG desktop portal's colour scheme as well as Qt's hint.

        Qt's gtk3 platform theme (the one Qt 6.11 uses on GNOME, Xfce, MATE or Cinnamon when GTK 3 is
        installed) drops the portal's answer at start-up: on a dark desktop its hint says Light until the
        desktop changes again (tests/gui/window/kit/test_theme_follow.py).  So ask the portal once and listen to
        its SettingChanged, as Qt's own themes do, asynchronously on Qt's loop; without a session bus or a
        portal nothing happens and Qt's hint alone counts."""
        if not sys.platform.startswith("linux") or QGuiApplication.platformName() in ("offscreen", "minimal"):
            return
        from PySide6.QtDBus import QDBusConnection, QDBusMessage, QDBusPendingCallWatcher

        bus = QDBusConnection.sessionBus()
        if not bus.isConnected():
            return
        service, path, interface = PORTAL
        slot = SLOT("_on_portal_setting_changed(QString,QString,QDBusVariant)")  # a str (bytes fail at run time)
        bus.connect("", path, interface, "SettingChanged", self, slot)  # type: ignore[call-overload]  # stubs: bytes
        ask = QDBusMessage.createMethodCall(service, path, interface, "Read")  # Read: in every portal version
        ask.setArguments(["org.freedesktop.appearance", "color-scheme"])
        watcher = QDBusPendingCallWatcher(bus.asyncCall(ask, PORTAL_TIMEOUT_MS), self)
        watcher.finished.connect(self._on_portal_answer)

    def _on_portal_answer(self, watcher: Any) -> None:
        reply = watcher.reply()
        watcher.deleteLater()
        if reply.type() == reply.MessageType.ReplyMessage and reply.arguments():
            self._portal_said(reply.arguments()[0])

    @Slot(str, str, "QDBusVariant")
    def _on_portal_setting_changed(self, namespace: str, key: str, value: Any) -> None:
        if (namespace, key) == ("org.freedesktop.appearance", "color-scheme"):
            self._portal_said(value)

    def _portal_said(self, value: Any) -> None:
        while hasattr(value, "variant"):  # a QDBusVariant (Read wraps the value in two)
            value = value.variant()
        self._desktop = PORTAL_SCHEMES.get(value, Qt.ColorScheme.Unknown) if isinstance(value, int) else \
            Qt.ColorScheme.Unknown
        if self._choice == "system":
            self.apply()


class _Follower(QObject):
    """Calls `rerender` once the palette of `widget` has changed (after Qt's restyle, never inside it)."""

    def __init__(self, widget: QWidget, rerender: Callable[[], None]) -> None:
        super().__init__(widget)
        self._rerender = rerender
        self._soon = QTimer(self)
        self._soon.setSingleShot(True)
        self._soon.setInterval(0)
        self._soon.timeout.connect(self._on_soon_timeout)
        widget.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        if event.type() == QEvent.Type.PaletteChange:
            self._soon.start()  # several changes in a row: one re-render
        return False

    def _on_soon_timeout(self) -> None:
        self._rerender()


def follow(widget: QWidget, rerender: Callable[[], None]) -> None:
    """Re-render `widget`'s text when the theme changes: for text that carries theme colours in its HTML or
    item brushes, which Qt's own repaint does not recolour.  `rerender` shows the same content again."""
    _Follower(widget, rerender)


def colour(role: str) -> str:
    """The current theme's colour for `role` ("#rrggbb"), e.g. colour("muted")."""
    return str(getattr(current(), role))


def qcolour(role: str) -> QColor:
    """`colour(role)` as a QColor, for models and painters."""
    return QColor(colour(role))


class PaletteColours:
    """Theme colours as QColors for a painter that draws many cells: each looked up once per palette (a
    theme switch gives the widgets a new palette), not once per cell.  The colours are shared: not to be
    changed."""

    def __init__(self) -> None:
        self._key = -1
        self._found: dict[str, QColor] = {}

    def get(self, palette: QPalette, role: str) -> QColor:
        key = palette.cacheKey()
        if key != self._key:
            self._key, self._found = key, {}
        found = self._found.get(role)
        if found is None:
            found = self._found[role] = qcolour(role)
        return found


CHOICES = (("system", "Follow the &system"), ("light", "&Light"), ("dark", "&Dark"))


def theme_menu(parent: QWidget) -> QMenu:
    """View > Theme: follow the system, light or dark (checked: the choice in force; it is kept per user)."""
    menu = QMenu("&Theme", parent)
    group = QActionGroup(menu)
    app = QApplication.instance()
    switch = ThemeSwitch.of(app) if isinstance(app, QApplication) else None
    for key, label in CHOICES:
        action = menu.addAction(label)
        action.setCheckable(True)
        action.setData(key)
        action.setChecked(key == (switch.choice if switch else "system"))
        group.addAction(action)
    group.triggered.connect(_on_theme_chosen)
    return menu


def _on_theme_chosen(action: QAction) -> None:
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    switch = ThemeSwitch.of(app)
    if switch is None:  # a window made without `belay`'s start-up (tests, embedding)
        from gui.window.kit.remembered import window_settings
        switch = ThemeSwitch(app, "system", window_settings())
    switch.set_choice(str(action.data()))
