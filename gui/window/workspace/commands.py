"""The workspace window's menus and keys, as one table (gui.window.chrome.actions builds the menus and F1 sheet).

Keys: Ctrl+1 details, Ctrl+2 changes, Ctrl+3 background shells, Ctrl+4 rules, Ctrl+5 MCP servers, Ctrl+M mode,
Ctrl+Z undo and Ctrl+Shift+Z redo the selected call; Ctrl+F filters the timeline (gui.window.timeline.filter),
F8 goes to the next call waiting for approval, F9 to the next failed one; F1 (or ? outside a text field) shows
them all.
"""

from __future__ import annotations

from functools import partial
from typing import Protocol

from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QWidget

from gui.window.chrome.actions import NO_MENU, Row, Submenu, WindowCommand
from gui.window.kit.theme import theme_menu
from gui.window.workspace.call_menu import CallMenu
from gui.window.workspace.parts import Parts

FILE, VIEW, CALL, HELP = "&File", "&View", "&Call", "&Help"


class Window(Protocol):
    """What the table asks of the window itself (the rest is its parts' and its call menu's)."""

    def verify_journal(self) -> None: ...
    def start_claude(self) -> None: ...
    def close(self) -> bool: ...
    def next_waiting(self) -> None: ...
    def next_failure(self) -> None: ...
    def open_mode_choice(self) -> None: ...
    def focus_approvals(self) -> None: ...
    def show_shortcuts(self) -> None: ...
    def question_mark(self) -> None: ...
    def show_tab(self, tab: QWidget) -> None: ...


def commands(w: Window, parts: Parts, calls: CallMenu) -> list[Row]:
    """Every menu entry and key of the window `w`, in menu order."""
    tabs = [WindowCommand(VIEW, name, partial(w.show_tab, tab), f"Ctrl+{number}", tip)
            for number, (tab, name, tip) in enumerate(parts.tab_list(), 1)]
    return [
        WindowCommand(FILE, "&Start Claude Code here…", w.start_claude,
                      tip="Ask Claude Code to do something in this workspace, supervised from its first call"),
        WindowCommand(FILE, "&Verify the journal", w.verify_journal,
                tip="Check that nothing in this workspace's journal was changed outside Belay (belay verify)"),
        WindowCommand(FILE, "&Quit", w.close, QKeySequence.StandardKey.Quit),
        WindowCommand(VIEW, "&Expand all", parts.tree.expandAll, "Ctrl+Shift+X"),
        WindowCommand(VIEW, "&Find in the timeline", parts.timeline_filter.focus_text, "Ctrl+F"),
        WindowCommand(VIEW, "&Next waiting call", w.next_waiting, "F8"),
        WindowCommand(VIEW, "Next &failed call", w.next_failure, "F9"),
        *tabs,
        Submenu(VIEW, theme_menu),
        WindowCommand(VIEW, "Approval &mode", w.open_mode_choice, "Ctrl+M"),
        WindowCommand(VIEW, "Go to the &waiting requests", w.focus_approvals, "Ctrl+Shift+A"),
        WindowCommand(CALL, "&Undo selected call", calls.undo_selected, "Ctrl+Z"),
        WindowCommand(CALL, "&Redo selected call", calls.redo_selected, "Ctrl+Shift+Z"),
        WindowCommand(HELP, "&Keyboard shortcuts", w.show_shortcuts, "F1"),
        WindowCommand(NO_MENU, "Keyboard shortcuts (outside a text field)", w.question_mark, "?"),
    ]
