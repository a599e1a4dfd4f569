"""MCP servers: which are configured, whether each is ready, and a way to restart one.

The servers come from the user's settings (`[mcp.servers.<name>]`); their
tools are in the registry as `mcp__<server>__<tool>` while the server is
ready.  A server that crashed or hangs shows as failed with the reason;
Restart (or Enter on the row) asks the window to restart it.  The panel is
refreshed from `McpServerChanged` events; it holds no connection itself.

Signals:
    restart_requested(str): the person asked to restart this server.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush
from PySide6.QtWidgets import (
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from core import ServerState, ServerStatus
from gui.window.kit import theme

EMPTY = ("No MCP servers are configured. Add them to your user settings, e.g.<br><code>[mcp.servers.docs]<br>"
         "command = \"docs-server\"</code><br>Their tools then appear to agents as "
         "<code>mcp__docs__&lt;tool&gt;</code>, under the same policy and approvals.")
_COLOURS = {ServerState.READY: "success", ServerState.STARTING: "warning", ServerState.FAILED: "danger",
            ServerState.STOPPED: "muted"}
_NAME = Qt.ItemDataRole.UserRole


class McpPanel(QWidget):
    """The configured MCP servers and their states."""

    restart_requested = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.empty = QLabel(EMPTY)
        self.empty.setWordWrap(True)
        self.empty.setTextFormat(Qt.TextFormat.RichText)
        self.tree = QTreeWidget()
        self.tree.setAccessibleName("MCP servers")
        self.tree.setHeaderLabels(["Server", "State", "Tools"])
        self.tree.setRootIsDecorated(False)
        self.tree.header().setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        self.tree.itemActivated.connect(self._on_tree_item_activated)
        self.tree.currentItemChanged.connect(self._on_tree_current_changed)
        self.restart_button = QPushButton("Restart")
        self.restart_button.setToolTip("Stop the server's process (or connection) and start it again (Enter)")
        self.restart_button.setEnabled(False)
        self.restart_button.clicked.connect(self._request_restart)
        row = QHBoxLayout()
        row.addStretch(1)
        row.addWidget(self.restart_button)
        layout = QVBoxLayout(self)
        layout.addWidget(self.empty)
        layout.addWidget(self.tree, 1)
        layout.addLayout(row)
        self._servers: list[ServerStatus] = []
        self.show_servers([])
        theme.follow(self, lambda: self.show_servers(self._servers))  # the states' colours

    def show_servers(self, servers: Sequence[ServerStatus]) -> None:
        self._servers = list(servers)
        current = self._current_name()
        self.tree.clear()
        for status in servers:
            item = QTreeWidgetItem(self.tree, [status.name, status.describe(), str(status.tools)])
            item.setData(0, _NAME, status.name)
            item.setForeground(1, QBrush(theme.qcolour(_COLOURS.get(status.state, "muted"))))
            item.setToolTip(1, status.describe())
            if status.name == current:
                self.tree.setCurrentItem(item)
        self.empty.setVisible(not servers)
        self.tree.setVisible(bool(servers))
        self.restart_button.setEnabled(self._current_name() is not None)

    def states(self) -> dict[str, str]:
        """Server name -> the state shown, for tests and accessibility."""
        rows = (self.tree.topLevelItem(i) for i in range(self.tree.topLevelItemCount()))
        return {row.text(0): row.text(1) for row in rows if row is not None}

    def _current_name(self) -> str | None:
        item = self.tree.currentItem()
        return str(item.data(0, _NAME)) if item is not None else None

    def _on_tree_current_changed(self, current: QTreeWidgetItem | None, _previous: QTreeWidgetItem | None) -> None:
        self.restart_button.setEnabled(current is not None)

    def _on_tree_item_activated(self, item: QTreeWidgetItem, _column: int) -> None:
        self.restart_requested.emit(str(item.data(0, _NAME)))

    def _request_restart(self) -> None:
        name = self._current_name()
        if name is not None:
            self.restart_requested.emit(name)
