"""The policy mode: a selector for the toolbar, and the banner bypass mode keeps on screen.

Bypass lets every call run without asking (protected paths excepted), so
choosing it asks for confirmation, and while it is on a red banner across
the window says so, with a button back to asking.  Both follow the
console's announcements, so a mode set elsewhere shows here too.

Signals:
    mode_chosen(str): the person picked a mode (already confirmed for bypass).
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QMessageBox, QPushButton, QWidget

MODES = (("default", "Ask every time"), ("accept_edits", "Accept edits in the workspace"),
         ("plan", "Read-only (plan)"), ("bypass", "Bypass: never ask"))
BANNER = ("⚠ Bypass mode: every call runs without asking, except writes to protected paths "
          "(.git, .belay, .claude, shell start-up files).")


class ModeSelector(QComboBox):
    """The mode in force; choosing bypass must be confirmed."""

    mode_chosen = Signal(str)

    def __init__(self, mode: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        for key, label in MODES:
            self.addItem(label, key)
        self.setToolTip("How calls are approved (Ctrl+M to focus)")
        self.show_mode(mode)
        self.activated.connect(self._on_activated)

    def show_mode(self, mode: str) -> None:
        self.blockSignals(True)
        self.setCurrentIndex(max(0, self.findData(mode)))
        self.blockSignals(False)
        self._shown = mode

    def confirm_bypass(self) -> bool:
        """Asks the person; tests replace it."""
        answer = QMessageBox.warning(self, "Turn on bypass mode?",
                                     "In bypass mode agents' calls run without asking you, including commands "
                                     "that delete files or reach the network. Only writes to protected paths "
                                     "still ask.\n\nTurn it on for this session?",
                                     QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel,
                                     QMessageBox.StandardButton.Cancel)
        return answer == QMessageBox.StandardButton.Yes

    def _on_activated(self, index: int) -> None:
        mode = str(self.itemData(index))
        if mode == "bypass" and self._shown != "bypass" and not self.confirm_bypass():
            self.show_mode(self._shown)
            return
        self.mode_chosen.emit(mode)


class BypassBanner(QWidget):
    """Red, across the window, for as long as bypass mode is on.

    Signals:
        leave_requested(): the person wants to go back to asking.
    """

    leave_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("bypassBanner")
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        self.setStyleSheet("QWidget#bypassBanner { background: #cf222e; } QLabel { color: white; "
                           "font-weight: bold; }")
        self.text = QLabel(BANNER)
        self.text.setWordWrap(True)
        self.leave = QPushButton("Back to asking")
        self.leave.clicked.connect(self.leave_requested)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(10, 6, 10, 6)
        layout.addWidget(self.text, 1)
        layout.addWidget(self.leave)
        self.hide()

    def show_mode(self, mode: str) -> None:
        self.setVisible(mode == "bypass")
