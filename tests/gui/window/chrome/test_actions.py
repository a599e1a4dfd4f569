"""A window's menus and keys from one table: the menu bar a person opens, the keys that work, and what F1 lists."""

from __future__ import annotations

from typing import Any

from PySide6.QtGui import QAction, QKeySequence, QShortcut
from PySide6.QtWidgets import QMainWindow, QMenu, QWidget

from gui.window.chrome import actions
from gui.window.chrome.actions import NO_MENU, Submenu, WindowCommand


def _sorting_menu(parent: QWidget) -> QMenu:
    menu = QMenu("&Sort", parent)
    menu.addAction("By name")
    return menu


def _table(ran: list[str]) -> list[actions.Row]:
    return [
        WindowCommand(NO_MENU, "Keyboard shortcuts (outside a text field)", lambda: ran.append("sheet"), "?"),
        WindowCommand("&File", "&Save as…", lambda: ran.append("save"), "Ctrl+Shift+S", "Save under another name"),
        WindowCommand("&File", "&Copy", lambda: ran.append("copy"), QKeySequence.StandardKey.Copy),  # the platform's
        WindowCommand("&View", "Find && &replace", lambda: ran.append("find"), "Ctrl+H"),
        Submenu("&View", _sorting_menu),
        WindowCommand("&View", "&Refresh", lambda: ran.append("refresh")),
        WindowCommand("&File", "&Print", lambda: ran.append("print"), "Ctrl+P"),
    ]


def _window(qtbot: Any, table: list[actions.Row]) -> tuple[QMainWindow, dict[str, QAction | QShortcut]]:
    window = QMainWindow()
    qtbot.addWidget(window)
    made = actions.install(window, table)
    return window, made


def test_the_menu_bar_is_the_table_in_its_order_and_each_entry_runs_its_command(qtbot: Any) -> None:
    ran: list[str] = []
    window, made = _window(qtbot, _table(ran))
    menus = [a.menu() for a in window.menuBar().actions()]
    assert [m.title() for m in menus] == ["&File", "&View"]  # in the order the table first names them
    file, view = ([a.text() for a in m.actions()] for m in menus)
    assert file == ["&Save as…", "&Copy", "&Print"] and view == ["Find && &replace", "&Sort", "&Refresh"]
    save = made["&Save as…"]
    assert isinstance(save, QAction) and save.shortcut().toString() == "Ctrl+Shift+S"
    assert save.toolTip() == "Save under another name"
    for action in menus[0].actions():
        action.trigger()
    assert ran == ["save", "copy", "print"]
    sheet_key = made["Keyboard shortcuts (outside a text field)"]
    assert isinstance(sheet_key, QShortcut) and sheet_key.parent() is window  # a key of the window, in no menu
    assert all(a.text() != "Keyboard shortcuts (outside a text field)" for m in menus for a in m.actions())


def test_the_keys_work_in_the_window_menu_keys_and_keys_without_a_menu_alike(qtbot: Any) -> None:
    ran: list[str] = []
    window, _ = _window(qtbot, _table(ran))
    window.show()
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)  # keys reach shortcuts only in the active window
    qtbot.keySequence(window, QKeySequence("Ctrl+P"))
    qtbot.keySequence(window, QKeySequence("?"))
    assert ran == ["print", "sheet"]


def test_the_sheet_lists_every_key_by_menu_in_words_and_keys_without_a_menu_last() -> None:
    sections = actions.sections(_table([]))
    assert sections == [
        ("File", [("Ctrl+Shift+S", "Save as"), ("Ctrl+C", "Copy"), ("Ctrl+P", "Print")]),
        ("View", [("Ctrl+H", "Find & replace")]),  # Refresh has no key: not listed
        ("Anywhere", [("?", "Keyboard shortcuts (outside a text field)")]),  # first in the table, last here
    ]
    only_menus = [WindowCommand("&File", "&Quit", lambda: None, "Ctrl+Q")]
    assert actions.sections(only_menus) == [("File", [("Ctrl+Q", "Quit")])]  # no empty "Anywhere"


def test_a_standard_key_the_platform_does_not_bind_is_not_listed_with_a_blank(qapp: Any) -> None:
    """Quit has no standard binding on some platforms (the offscreen one, Windows): the sheet leaves it out
    rather than showing it with an empty keys cell."""
    unbound = next(k for k in QKeySequence.StandardKey if k != QKeySequence.StandardKey.UnknownKey
                   and not QKeySequence.keyBindings(k))  # one this platform leaves unbound (Quit, here offscreen)
    table = [WindowCommand("&File", "&Quit", lambda: None, unbound), WindowCommand("&File", "&Open…", lambda: None, "Ctrl+O")]
    assert actions.sections(table) == [("File", [("Ctrl+O", "Open")])]
