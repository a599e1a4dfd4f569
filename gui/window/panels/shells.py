"""Background shells: what each is running, its live output, and a way to stop it.

Shells started by Bash calls with `run_in_background` keep running after
their call returns.  This panel lists them from the timeline read model,
shows the selected one's output as plain text (never rich text: output is
the agent's, not ours to interpret), and asks the window to stop one or to
show the call that started it.  New output is appended rather than the
whole text replaced, and the view follows the end only if it was already
there, so reading earlier lines is not interrupted.

Signals:
    stop_requested(str): the person asked to stop this shell.
    call_chosen(str): the person wants to see the call (by id) that started this shell.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QTextCursor
from PySide6.QtWidgets import (
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from core import ShellNode, Timeline
from gui.window.kit import theme
from gui.window.kit.code_font import keep_code_font

EMPTY = ("No background shells. A Bash call with <code>run_in_background</code> (a dev server, a watcher) "
         "starts one; it is listed here with its output while it runs, and you can stop it.")
_SHELL = Qt.ItemDataRole.UserRole
_STATES = {"running": "running", "exited": "muted", "failed": "danger",
           "stopped": "denied"}


def shell_state(shell: ShellNode) -> tuple[str, str]:
    """(state, label): running, exited (code 0), failed (another code), or stopped (killed)."""
    if shell.running:
        return "running", "running"
    if shell.exit_code is None:
        return "stopped", "stopped"
    return ("exited", "exited 0") if shell.exit_code == 0 else ("failed", f"exited {shell.exit_code}")


class ShellsPanel(QWidget):
    """The list of background shells and the selected one's output."""

    stop_requested = Signal(str)
    call_chosen = Signal(str)

    def __init__(self, timeline: Timeline, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._timeline = timeline
        self._items: dict[str, QTreeWidgetItem] = {}
        self._stopping: set[str] = set()
        self._shown: tuple[str, str] = ("", "")
        self.list = QTreeWidget()
        self.list.setAccessibleName("Background shells")
        self.list.setObjectName("shellList")
        self.list.setHeaderLabels(["Shell", "State", "WindowCommand"])
        self.list.setRootIsDecorated(False)
        self.list.setUniformRowHeights(True)
        self.list.header().setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        self.list.currentItemChanged.connect(self._on_list_current_item_changed)
        self.list.itemActivated.connect(self._on_list_item_activated)
        self.output = QPlainTextEdit()
        self.output.setReadOnly(True)
        keep_code_font(self.output)
        self.output.setPlaceholderText("No output yet.")
        self.stop_button = QPushButton("Stop shell")
        self.stop_button.setToolTip("Stop the selected shell and every process it started")
        self.stop_button.clicked.connect(self._on_stop_clicked)
        self.call_button = QPushButton("Show its call")
        self.call_button.setToolTip("Select the Bash call that started this shell (or double-click it)")
        self.call_button.clicked.connect(self._on_call_clicked)
        self.empty = QLabel(EMPTY)
        self.empty.setWordWrap(True)
        self.empty.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.empty.setContentsMargins(4, 8, 4, 8)
        self._layout()
        self.refresh()

    def _layout(self) -> None:
        self.split = QSplitter(Qt.Orientation.Vertical)
        self.split.addWidget(self.list)
        self.split.addWidget(self.output)
        self.split.setSizes([140, 420])
        buttons = QHBoxLayout()
        buttons.addWidget(self.call_button)
        buttons.addStretch(1)
        buttons.addWidget(self.stop_button)
        layout = QVBoxLayout(self)
        layout.addWidget(self.empty)
        layout.addWidget(self.split, 1)
        layout.addLayout(buttons)
        theme.follow(self, self.refresh)  # the states' colours

    def set_timeline(self, timeline: Timeline) -> None:
        """A new read model (after a resync): rebuild from it."""
        self._timeline = timeline
        self.list.clear()
        self._items.clear()
        self._shown = ("", "")
        self.refresh()

    def current_shell(self) -> str | None:
        item = self.list.currentItem()
        return item.data(0, _SHELL) if item else None

    def refresh(self, changed: str | None = None) -> None:
        """Redraw the shells' rows (or one shell's), and the output if it is the selected shell's."""
        shells = self._timeline.shells
        for shell in shells.values():
            if changed is None or shell.shell_id == changed:
                self._show_row(shell)
        last = self.list.topLevelItem(self.list.topLevelItemCount() - 1)  # None when there is none
        if self.list.currentItem() is None and last is not None:
            self.list.setCurrentItem(last)
        has_shells = bool(shells)
        self.empty.setVisible(not has_shells)
        self.split.setVisible(has_shells)
        self.call_button.setVisible(has_shells)
        self.stop_button.setVisible(has_shells)
        if changed is None or changed == self.current_shell():
            self._show_output()

    def _show_row(self, shell: ShellNode) -> None:
        item = self._items.get(shell.shell_id)
        if item is None:
            item = QTreeWidgetItem([shell.shell_id, "", shell.command.splitlines()[0] if shell.command else ""])
            item.setData(0, _SHELL, shell.shell_id)
            item.setToolTip(2, shell.command)
            self._items[shell.shell_id] = item
            self.list.addTopLevelItem(item)
            self.list.resizeColumnToContents(0)
        state, label = shell_state(shell)
        if shell.running and shell.shell_id in self._stopping:
            label = "stopping…"
        elif not shell.running:
            self._stopping.discard(shell.shell_id)
        item.setText(1, label)
        item.setForeground(1, QBrush(theme.qcolour(_STATES[state])))

    def running_count(self) -> int:
        return sum(1 for s in self._timeline.shells.values() if s.running)

    def _show_output(self) -> None:
        shell = self._timeline.shells.get(self.current_shell() or "")
        self.stop_button.setEnabled(bool(shell and shell.running and shell.shell_id not in self._stopping))
        self.call_button.setEnabled(shell is not None)
        shell_id, text = (shell.shell_id, shell.output) if shell else ("", "")
        if (shell_id, text) == self._shown:
            return
        bar = self.output.verticalScrollBar()
        following = bar.value() >= bar.maximum() - 2
        old_id, old_text = self._shown
        if shell_id == old_id and old_text and text.startswith(old_text):
            cursor = QTextCursor(self.output.document())
            cursor.movePosition(QTextCursor.MoveOperation.End)
            cursor.insertText(text[len(old_text):])
        else:
            self.output.setPlainText(text)
            following = True
        self._shown = (shell_id, text)
        if following:
            bar.setValue(bar.maximum())

    def _on_list_current_item_changed(self, *_: object) -> None:
        self._show_output()

    def _on_list_item_activated(self, item: QTreeWidgetItem, column: int) -> None:
        self._on_call_clicked()

    def _on_stop_clicked(self) -> None:
        shell_id = self.current_shell()
        if shell_id and shell_id not in self._stopping:
            self._stopping.add(shell_id)
            self.refresh(shell_id)
            self.stop_requested.emit(shell_id)

    def stop_failed(self, shell_id: str) -> None:
        """The stop did not happen (the shell had already ended): offer it again if it still runs."""
        self._stopping.discard(shell_id)
        self.refresh(shell_id)

    def _on_call_clicked(self) -> None:
        shell = self._timeline.shells.get(self.current_shell() or "")
        if shell is not None:
            self.call_chosen.emit(shell.call_id)

    def __repr__(self) -> str:
        return f"<ShellsPanel shells={len(self._timeline.shells)} current={self.current_shell()!r}>"
