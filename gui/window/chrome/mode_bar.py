"""The policy mode: a selector for the toolbar, and the banner bypass mode keeps on screen.

Bypass lets every call run without asking (protected paths excepted), so
choosing it asks for confirmation first, in a window-modal box opened with
`open()` (never a nested `exec()` loop on the shared Qt/asyncio thread);
until the person answers, the selector keeps showing the mode in force.
While bypass is on, a red banner across the window says so, with a button
back to asking.  Both follow the console's announcements, so a mode set
elsewhere (the user's settings file, another front end) shows here too.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QMessageBox, QPushButton, QWidget

MODES = (
    ("default", "Ask every time",
     "Read-only tools and commands run; anything that changes files or runs other commands asks you."),
    ("accept_edits", "Accept edits",
     "File edits inside the workspace run without asking; commands and everything else still ask."),
    ("plan", "Read-only (plan)",
     "Only read-only tools and commands run; anything that would change something is refused."),
    ("bypass", "Bypass (never ask)",
     "Every call runs without asking, except writes to protected paths. Asks for confirmation."),
)
BANNER = ("⚠  Bypass mode: calls run without asking, except writes to protected paths "
          "(.git, .belay, .claude, shell start-up files).")
CONFIRM = ("In bypass mode agents' calls run without asking you, including commands that delete files or "
           "reach the network. Only writes to protected paths still ask.\n\n"
           "Turn bypass mode on for this session?")


class ModeSelector(QComboBox):
    """The mode in force; choosing bypass must be confirmed.

    Signals:
        mode_chosen(str): the person picked a mode (already confirmed for bypass).
    """

    mode_chosen = Signal(str)

    def __init__(self, mode: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        for key, label, tip in MODES:
            self.addItem(label, key)
            self.setItemData(self.count() - 1, tip, Qt.ItemDataRole.ToolTipRole)
        self.setObjectName("modeSelector")
        self.setToolTip("How agents' calls are approved (Ctrl+M)")
        self.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.confirmation: QMessageBox | None = None
        """The open "turn on bypass?" box, if any."""
        self._shown = ""
        self.show_mode(mode)
        self.activated.connect(self._on_activated)

    def show_mode(self, mode: str) -> None:
        """Show the mode in force (what the console says), without announcing a choice."""
        was_bypass, self._shown = self._shown == "bypass", mode
        self.setCurrentIndex(max(0, self.findData(mode)))
        if (mode == "bypass") != was_bypass:
            self.setProperty("bypass", mode == "bypass")  # red and bold by the style sheet
            self.style().unpolish(self)
            self.style().polish(self)

    def shown_mode(self) -> str:
        return self._shown

    def _on_activated(self, index: int) -> None:
        mode = str(self.itemData(index))
        if mode == "bypass" and self._shown != "bypass":
            self.show_mode(self._shown)  # not until confirmed
            self._ask_bypass()
        elif mode != self._shown:
            self.mode_chosen.emit(mode)

    def _ask_bypass(self) -> None:
        if self.confirmation is not None:
            return
        box = QMessageBox(QMessageBox.Icon.Warning, "Turn on bypass mode?", CONFIRM,
                          QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel, self)
        box.button(QMessageBox.StandardButton.Yes).setText("Turn on bypass")
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        box.finished.connect(self._on_confirmation_finished)
        self.confirmation = box
        box.open()

    def _on_confirmation_finished(self, result: int) -> None:
        box, self.confirmation = self.confirmation, None
        if box is None:
            return
        confirmed = box.clickedButton() is box.button(QMessageBox.StandardButton.Yes)
        box.deleteLater()
        if confirmed:
            self.mode_chosen.emit("bypass")

    def __repr__(self) -> str:
        return f"<ModeSelector shown={self._shown!r} asking={self.confirmation is not None}>"


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
        self.text = QLabel(BANNER)
        self.text.setWordWrap(True)
        self.leave = QPushButton("Back to asking")
        self.leave.setToolTip("Switch to “Ask every time”")
        self.leave.setCursor(Qt.CursorShape.PointingHandCursor)
        self.leave.clicked.connect(self.leave_requested)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(12, 8, 12, 8)
        layout.addWidget(self.text, 1)
        layout.addWidget(self.leave)
        self.hide()

    def show_mode(self, mode: str) -> None:
        self.setVisible(mode == "bypass")
