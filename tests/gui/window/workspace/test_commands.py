"""The workspace window's menus and keys, one table: what each menu holds, the keys that work, and the F1 sheet."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence

from core import Console
from gui.window.chrome.shortcuts_sheet import ShortcutsSheet
from gui.window.workspace.window import MainWindow
from tests.conftest import wait_until
from tests.gui.window.workspace.test_window import in_window


def test_ctrl_number_keys_switch_the_tabs_and_the_tooltips_say_so(qtbot: Any, loop: Any, workspace: Path) -> None:
    async def body(console: Console, window: MainWindow) -> None:
        window.activateWindow()
        await wait_until(window.isActiveWindow, what="the window to be active")
        for number, tab in ((4, window.rules), (3, window.shells), (2, window.changes), (1, window.details)):
            qtbot.keyClick(window.tree, Qt.Key(Qt.Key.Key_0 + number), Qt.KeyboardModifier.ControlModifier)
            assert window.tabs.currentWidget() is tab
            assert window.tabs.tabToolTip(number - 1).endswith(f"(Ctrl+{number})")
        assert "Ctrl+M" in window.mode.toolTip()

    in_window(qtbot, loop, workspace, body)


def _menus(window: MainWindow) -> dict[str, list[tuple[str, str]]]:
    """Menu title: [(entry, its keys)], as the menu bar shows them."""
    return {a.text(): [(e.text(), e.shortcut().toString()) for e in a.menu().actions() if not e.isSeparator()]
            for a in window.menuBar().actions()}


def test_the_menus_hold_every_command_the_keys_work_and_the_sheet_lists_each_key_and_question_mark(
        qtbot: Any, loop: Any, workspace: Path) -> None:
    async def body(console: Console, window: MainWindow) -> None:
        menus = _menus(window)
        assert list(menus) == ["&File", "&View", "&Call", "&Help"]
        tabs = [(text, keys) for text, keys in menus["&View"] if keys.startswith("Ctrl+") and keys[-1].isdigit()]
        assert tabs == [("Details", "Ctrl+1"), ("Changes", "Ctrl+2"), ("Background shells", "Ctrl+3"),
                        ("Rules", "Ctrl+4"), ("MCP servers", "Ctrl+5"), ("Conversation", "Ctrl+6")]
        assert ("&Undo selected call", "Ctrl+Z") in menus["&Call"] and ("&Keyboard shortcuts", "F1") in menus["&Help"]
        window.activateWindow()
        await wait_until(window.isActiveWindow, what="the window to be active")
        window.tree.setFocus()
        qtbot.keySequence(window.tree, QKeySequence("Ctrl+5"))
        assert window.tabs.currentWidget() is window.mcp
        qtbot.keySequence(window.tree, QKeySequence("Ctrl+6"))
        assert window.tabs.currentWidget() is window.parts.conversation
        qtbot.keyClick(window.tree, Qt.Key.Key_F8)  # the next waiting call: there is none
        assert window.statusBar().currentMessage() == "No call shown is waiting for approval."
        sheet = window.shortcuts_sheet()
        qtbot.addWidget(sheet)
        rows = sheet.rows()
        menu_keys = {keys for entries in menus.values() for _, keys in entries if keys}
        assert menu_keys <= {keys for _, keys, _ in rows}  # every key of every menu
        assert ("Anywhere", "?", "Keyboard shortcuts (outside a text field)") in rows
        assert [section for section, _, _ in rows][-1] == "A pending write's diff (while it has the focus)"
        sheet.close()

    in_window(qtbot, loop, workspace, body)


def test_f1_shows_the_sheet_beside_the_window_without_blocking_it(qtbot: Any, loop: Any, workspace: Path) -> None:
    async def body(console: Console, window: MainWindow) -> None:
        window.show_shortcuts()
        [sheet] = [s for s in window.findChildren(ShortcutsSheet) if s.isVisible()]
        assert sheet.windowModality() == Qt.WindowModality.NonModal and not sheet.isModal()
        sheet.reject()

    in_window(qtbot, loop, workspace, body)
