"""The bar that says a console on another host is out of reach: attaching again, or given up on.

A window attached over ssh (core.remote.console) follows a console whose journal is the truth: while the
link is down nothing is lost there (calls that need a person wait, or are denied after their rule's timeout),
and the window cannot answer or undo.  This bar says so, in amber under the toolbar; once given up on, its
button attaches again.  It hides when the link is back.
"""

from __future__ import annotations

import html

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QWidget

from core import LinkChanged


class LinkBanner(QWidget):
    """Amber, across the window, while the console on the other host is out of reach.

    Signals:
        attach_requested(): the person asks to attach again (after it was given up on).
    """

    attach_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("linkBanner")
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        self.label = QLabel()
        self.label.setWordWrap(True)
        self.label.setTextFormat(Qt.TextFormat.RichText)
        self.again = QPushButton("&Attach again")
        self.again.setToolTip("Reach the console on that host again through ssh (it starts one there if none runs)")
        self.again.clicked.connect(self._on_again_clicked)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(12, 6, 12, 6)
        layout.addWidget(self.label, 1)
        layout.addWidget(self.again)
        self._plain = ""
        self.hide()

    def show_link(self, event: LinkChanged, where: str) -> None:
        if event.state == "attached":
            self._plain = f"Attached again to {where}: the timeline is read again from its journal."
            self.hide()
            return
        if event.state == "reattaching":
            self._plain = f"The link to {where} dropped ({event.detail}); attaching again…"
            head = "The link to the console dropped; attaching again…"
        else:
            self._plain = f"Gave up reaching {where}: {event.detail}"
            head = "The console is out of reach."
        self.label.setText(f"<b>{html.escape(head)}</b> {html.escape(where)}: {html.escape(event.detail)}. Nothing "
                           "is lost there: calls that need you wait (or are denied after their rule's timeout).")
        self.again.setVisible(event.state == "lost")
        self.again.setEnabled(True)
        self.show()

    def text(self) -> str:
        """What the status line says of the link's last change."""
        return self._plain

    def _on_again_clicked(self) -> None:
        self.again.setEnabled(False)  # until the next change says how it went
        self.attach_requested.emit()
