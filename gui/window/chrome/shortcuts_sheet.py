"""The keyboard shortcuts sheet (F1, or ? outside a text field), made from the window's own table of keys.

Every command of the window's table (gui.window.chrome.actions) that has keys is listed under its menu, and
the approval panel adds the keys it handles itself (its shortcuts list): the menus and the sheet are made
from the same table, so they cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Iterable

from PySide6.QtWidgets import QDialog, QDialogButtonBox, QTreeWidget, QTreeWidgetItem, QVBoxLayout, QWidget


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
        found: list[tuple[str, str, str]] = []
        for i in range(self.tree.topLevelItemCount()):
            section = self.tree.topLevelItem(i)
            if section is None:
                continue
            for j in range(section.childCount()):
                child = section.child(j)
                if child is not None:
                    found.append((section.text(0), child.text(0), child.text(1)))
        return found
