"""The keyboard shortcuts sheet (F1, or ? outside a text field), made from the window's own actions.

Every menu action with a shortcut is listed under its menu, and the approval panel adds the keys it
handles itself (its shortcuts list): the sheet is read from what the window does, so it cannot drift
from it.
"""

from __future__ import annotations

from collections.abc import Iterable

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QMenuBar, QTreeWidget, QTreeWidgetItem, QVBoxLayout, QWidget


def menu_shortcuts(menu_bar: QMenuBar) -> list[tuple[str, list[tuple[str, str]]]]:
    """(menu title, [(keys, what the action does)]) for every menu action that has a shortcut."""
    sections = []
    for menu_action in menu_bar.actions():
        menu = menu_action.menu()
        if menu is None:
            continue
        rows = [(_keys(a), _words(a)) for a in menu.actions() if isinstance(a, QAction) and not a.shortcut().isEmpty()]
        if rows:
            sections.append((_words(menu_action), rows))
    return sections


def _keys(action: QAction) -> str:
    return ", ".join(s.toString(QKeySequence.SequenceFormat.NativeText) for s in action.shortcuts())


def _words(action: QAction) -> str:
    return action.text().replace("&&", "\0").replace("&", "").replace("\0", "&").removesuffix("…")


class ShortcutsSheet(QDialog):
    """A non-modal list of the window's keys, by section."""

    def __init__(self, sections: Iterable[tuple[str, Iterable[tuple[str, str]]]],
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Keyboard shortcuts")
        self.resize(560, 520)
        self.tree = QTreeWidget()
        self.tree.setObjectName("shortcuts")
        self.tree.setAccessibleName("Keyboard shortcuts")
        self.tree.setHeaderLabels(["Keys", "What they do"])
        self.tree.setRootIsDecorated(False)
        for title, rows in sections:
            section = QTreeWidgetItem(self.tree, [title, ""])
            font = section.font(0)
            font.setBold(True)
            section.setFont(0, font)
            for keys, what in rows:
                QTreeWidgetItem(section, [keys, what])
        self.tree.expandAll()
        self.tree.resizeColumnToContents(0)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.tree)
        layout.addWidget(buttons)

    def rows(self) -> list[tuple[str, str, str]]:
        """(section, keys, what) for every key listed."""
        found = []
        for i in range(self.tree.topLevelItemCount()):
            section = self.tree.topLevelItem(i)
            for j in range(section.childCount()):
                child = section.child(j)
                found.append((section.text(0), child.text(0), child.text(1)))
        return found
