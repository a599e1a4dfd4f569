"""A window's menus and keys as one table: the menu bar is built from it, and so is the shortcuts sheet (F1).

Each window lists what a person can do from its menus as `WindowCommand` rows (and `Submenu` rows for a menu made
elsewhere, the theme's); `install` makes the menu bar's actions from the table and `sections` reads the same
table for the sheet, so a key in a menu is always a key on the sheet.  A row with no menu is a key the window
answers without a menu entry (? for the sheet): it is installed as a window-wide shortcut and listed too.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from PySide6.QtGui import QAction, QKeySequence, QShortcut
from PySide6.QtWidgets import QMainWindow, QMenu, QWidget

Keys = str | QKeySequence.StandardKey
"""A shortcut as Qt reads it: "Ctrl+Shift+Z", or a platform's standard key (Quit)."""
NO_MENU = ""
"""The menu of a key that has no menu entry."""


@dataclass(frozen=True)
class WindowCommand:
    """One thing a person can do: where it sits, what it says, its keys, and what it runs."""

    menu: str
    """The menu's title with its mnemonic ("&View"), or NO_MENU for a key alone."""
    text: str
    """The action's text with its mnemonic ("&Expand all"); the sheet shows it without the &."""
    run: Callable[[], object]
    """What it does (no argument; a toggled or triggered flag is not passed)."""
    keys: Keys = ""
    """Its shortcut, if any."""
    tip: str = ""
    """The tooltip: what it does, for someone hovering."""


@dataclass(frozen=True)
class Submenu:
    """A menu another module makes (the theme's), placed in a menu of the table."""

    menu: str
    make: Callable[[QWidget], QMenu]


Row = WindowCommand | Submenu


def install(window: QMainWindow, table: Sequence[Row]) -> dict[str, QAction | QShortcut]:
    """The window's menus from `table`, in its order; returns each command's action (or shortcut), by its text."""
    menus: dict[str, QMenu] = {}
    made: dict[str, QAction | QShortcut] = {}
    for row in table:
        if isinstance(row, WindowCommand) and row.menu == NO_MENU:
            shortcut = QShortcut(_sequence(row.keys), window)
            shortcut.activated.connect(row.run)
            made[row.text] = shortcut
            continue
        menu = menus.get(row.menu)
        if menu is None:
            menu = menus[row.menu] = window.menuBar().addMenu(row.menu)
        if isinstance(row, Submenu):
            menu.addMenu(row.make(window))
            continue
        action = QAction(row.text, window)
        if row.keys:
            action.setShortcut(_sequence(row.keys))
        if row.tip:
            action.setToolTip(row.tip)
        action.triggered.connect(_without_flag(row.run))
        menu.addAction(action)
        made[row.text] = action
    return made


def sections(table: Sequence[Row]) -> list[tuple[str, list[tuple[str, str]]]]:
    """(menu title, [(keys, what it does)]) for every command with keys, menus in the table's order; keys with
    no menu come last, under "Anywhere"."""
    found: dict[str, list[tuple[str, str]]] = {}
    for row in table:
        keys = key_text(row.keys) if isinstance(row, WindowCommand) and row.keys else ""
        if not keys or not isinstance(row, WindowCommand):  # a standard key the platform does not bind is none
            continue
        title = words(row.menu) if row.menu != NO_MENU else "Anywhere"
        found.setdefault(title, []).append((keys, words(row.text)))
    anywhere = found.pop("Anywhere", None)
    return [*found.items(), *([("Anywhere", anywhere)] if anywhere else [])]


def key_text(keys: Keys) -> str:
    """A shortcut as the platform writes it ("Ctrl+Q" for the standard Quit on Linux)."""
    return _sequence(keys).toString(QKeySequence.SequenceFormat.NativeText)


def words(text: str) -> str:
    """A menu text as read aloud: mnemonics gone (&& stays an &), no trailing ellipsis."""
    return text.replace("&&", "\0").replace("&", "").replace("\0", "&").removesuffix("…")


def _sequence(keys: Keys) -> QKeySequence:
    return QKeySequence(keys)


def _without_flag(run: Callable[[], object]) -> Callable[[bool], None]:
    """QAction.triggered passes `checked`; the table's commands take nothing."""
    def triggered(checked: bool = False) -> None:
        run()
    return triggered
