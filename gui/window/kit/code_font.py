"""The font code is drawn in: a fixed-pitch one, checked on the platform the window really runs on.

`QFontDatabase.systemFont(FixedFont)` names a family ("monospace") and
leaves the choice to the platform; on some X11 desktops (and in the
bundle, with its own fontconfig set-up) that choice is a proportional
font, and the review canvas, which places every character on a grid of
one character's width, then draws `cart = Cart()` as `cart   =Cart()`.
So the font is chosen here by its own metrics: the first family of
`FAMILIES` the platform really has whose characters all advance alike
(and which says it is fixed-pitch), then the same without that claim
(fontconfig does not mark every monospaced font so, e.g. Noto Sans Mono),
then the system's fixed font, whatever it is.
"""

from __future__ import annotations

import functools

from PySide6.QtCore import QEvent, QObject
from PySide6.QtGui import QFont, QFontDatabase, QFontInfo, QFontMetricsF
from PySide6.QtWidgets import QWidget

FAMILIES = ("DejaVu Sans Mono", "Liberation Mono", "Noto Sans Mono", "Ubuntu Mono", "Cascadia Mono", "Menlo",
            "Consolas", "Source Code Pro", "Monospace")
"""Tried in order: Debian's and Fedora's defaults first, then other desktops' (macOS, Windows)."""
PROBE = "iMW.l_ m0"
"""Characters of very different widths in a proportional font."""


def fixed_advances(font: QFont, text: str = PROBE) -> bool:
    """Whether every character of `text` advances by the same width in `font` (as the platform draws it)."""
    metrics = QFontMetricsF(font)
    widths = {round(metrics.horizontalAdvance(c), 2) for c in set(text)}
    return len(widths) == 1 and next(iter(widths)) > 0


def _candidate(family: str, size: float) -> QFont:
    font = QFont(family)
    font.setStyleHint(QFont.StyleHint.TypeWriter)
    font.setFixedPitch(True)
    if size > 0:
        font.setPointSizeF(size)
    return font


def resolve(families: tuple[str, ...] = FAMILIES) -> QFont:
    """The first of `families` that is really there and really fixed-pitch (see the module's docstring)."""
    system = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
    size = system.pointSizeF()
    candidates = [_candidate(family, size) for family in families if QFontDatabase.hasFamily(family)]
    for font in candidates:
        if QFontInfo(font).fixedPitch() and fixed_advances(font):
            return font
    for font in [*candidates, system]:
        if fixed_advances(font):
            return font
    return system  # nothing fixed-pitch on this system at all: the platform's choice is all there is


@functools.cache
def _resolved() -> QFont:
    return resolve()


def code_font() -> QFont:
    """The font for code, diffs and commands (resolved once per process; a copy each time)."""
    return QFont(_resolved())


class _CodeFontKeeper(QObject):
    """Gives a widget the code font back whenever a style sheet's polish or a parent's font replaced it."""

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        if event.type() in (QEvent.Type.FontChange, QEvent.Type.Polish) and isinstance(watched, QWidget):
            if watched.font().family() != _resolved().family():  # setting it again ends the loop here
                watched.setFont(code_font())
        return False


def keep_code_font(widget: QWidget) -> None:
    """Draw `widget`'s text in the code font, and keep it so: an application style sheet resets the font of
    some widgets (a scroll area's viewport, a text edit) to their parent's when it polishes them."""
    widget.setFont(code_font())
    widget.installEventFilter(_CodeFontKeeper(widget))


def code_family() -> str:
    """The family of `code_font`, for style sheets and rich text."""
    return QFontInfo(code_font()).family()
