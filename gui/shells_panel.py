"""Background shells: what each is running, its live output, and a way to stop it.

Shells started by Bash calls with `run_in_background` keep running after
their call returns.  This panel lists them from the timeline read model,
shows the selected one's output as plain text (never rich text: output is
the agent's, not ours to interpret), and stops one through the console.

Signals:
    stop_requested(str): the person asked to stop this shell.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (QHBoxLayout, QLabel, QListWidget, QListWidgetItem, QPlainTextEdit, QPushButton,
                               QVBoxLayout, QWidget)

from core import Timeline

EMPTY = "No background shells. A Bash call with run_in_background starts one; it shows here while it runs."


class ShellsPanel(QWidget):
    """The list of background shells and the selected one's output."""

    stop_requested = Signal(str)

    def __init__(self, timeline: Timeline, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._timeline = timeline
        self.list = QListWidget()
        self.list.currentItemChanged.connect(self._on_current_item_changed)
        self.output = QPlainTextEdit()
        self.output.setReadOnly(True)
        self.output.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.output.setPlaceholderText(EMPTY)
        self.stop_button = QPushButton("Stop shell")
        self.stop_button.clicked.connect(self._on_stop_clicked)
        self.empty = QLabel(EMPTY)
        self.empty.setWordWrap(True)
        row = QHBoxLayout()
        row.addWidget(self.empty, 1)
        row.addWidget(self.stop_button)
        layout = QVBoxLayout(self)
        layout.addWidget(self.list, 1)
        layout.addWidget(self.output, 3)
        layout.addLayout(row)
        self.refresh()

    def set_timeline(self, timeline: Timeline) -> None:
        self._timeline = timeline
        self.refresh()

    def current_shell(self) -> str | None:
        item = self.list.currentItem()
        return item.data(Qt.ItemDataRole.UserRole) if item else None

    def refresh(self, changed: str | None = None) -> None:
        shells = self._timeline.shells
        if self.list.count() != len(shells):
            current = self.current_shell()
            self.list.clear()
            for shell in shells.values():
                item = QListWidgetItem()
                item.setData(Qt.ItemDataRole.UserRole, shell.shell_id)
                self.list.addItem(item)
                if shell.shell_id == current:
                    self.list.setCurrentItem(item)
        for row in range(self.list.count()):
            item = self.list.item(row)
            shell = shells[item.data(Qt.ItemDataRole.UserRole)]
            state = "running" if shell.running else f"exited {shell.exit_code}" if shell.exit_code is not None \
                else "stopped"
            item.setText(f"{shell.shell_id}  [{state}]  {shell.command[:100]}")
        self.empty.setVisible(not shells)
        if changed is None or changed == self.current_shell():
            self._show_output()

    def running_count(self) -> int:
        return sum(1 for s in self._timeline.shells.values() if s.running)

    def _show_output(self) -> None:
        shell = self._timeline.shells.get(self.current_shell() or "")
        self.stop_button.setEnabled(bool(shell and shell.running))
        text = shell.output if shell else ""
        if self.output.toPlainText() != text:
            self.output.setPlainText(text)
            self.output.verticalScrollBar().setValue(self.output.verticalScrollBar().maximum())

    def _on_current_item_changed(self, *_: object) -> None:
        self._show_output()

    def _on_stop_clicked(self) -> None:
        shell_id = self.current_shell()
        if shell_id:
            self.stop_requested.emit(shell_id)
