"""The keyboard shortcuts sheet: every key of a window's menus, by section, read from the window's own table."""

from __future__ import annotations

from typing import Any

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QDialogButtonBox, QMainWindow

from gui.window.chrome import actions
from gui.window.chrome.actions import NO_MENU, WindowCommand
from gui.window.chrome.shortcuts_sheet import ShortcutsSheet

TABLE: list[actions.Row] = [
    WindowCommand("&File", "&Open…", lambda: None, "Ctrl+O"),
    WindowCommand("&File", "&Copy", lambda: None, QKeySequence.StandardKey.Copy),
    WindowCommand("&View", "&Next waiting call", lambda: None, "F8"),
    WindowCommand("&Help", "&Keyboard shortcuts", lambda: None, "F1"),
    WindowCommand(NO_MENU, "Keyboard shortcuts (outside a text field)", lambda: None, "?"),
]


def test_the_sheet_lists_every_key_of_the_menus_and_question_mark(qtbot: Any) -> None:
    window = QMainWindow()
    qtbot.addWidget(window)
    actions.install(window, TABLE)
    sheet = ShortcutsSheet([*actions.sections(TABLE), ("Waiting requests", [("Ctrl+Return", "Approve")])], window)
    qtbot.addWidget(sheet)
    rows = sheet.rows()
    menu_keys = {a.shortcut().toString(QKeySequence.SequenceFormat.NativeText)
                 for a in window.findChildren(QAction) if not a.shortcut().isEmpty()}
    assert menu_keys == {"Ctrl+O", "Ctrl+C", "F8", "F1"}
    assert menu_keys <= {keys for _, keys, _ in rows}  # a key in a menu is a key on the sheet
    assert ("Anywhere", "?", "Keyboard shortcuts (outside a text field)") in rows
    assert ("File", "Ctrl+O", "Open") in rows and ("Waiting requests", "Ctrl+Return", "Approve") in rows
    sections = [sheet.tree.topLevelItem(i) for i in range(sheet.tree.topLevelItemCount())]
    assert [s.text(0) for s in sections] == ["File", "View", "Help", "Anywhere", "Waiting requests"]
    assert all(s.isExpanded() and s.font(0).bold() for s in sections)  # headings, open: nothing to unfold


def test_the_sheet_opens_without_blocking_and_close_closes_it(qtbot: Any) -> None:
    sheet = ShortcutsSheet(actions.sections(TABLE))
    qtbot.addWidget(sheet)
    sheet.open()
    qtbot.waitExposed(sheet)
    assert sheet.isVisible() and sheet.windowTitle() == "Keyboard shortcuts"
    box = sheet.findChild(QDialogButtonBox)
    with qtbot.waitSignal(sheet.rejected):
        box.button(QDialogButtonBox.StandardButton.Close).click()
    assert not sheet.isVisible()
