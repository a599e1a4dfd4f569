"""The bar that says a workspace's settings file wants to loosen the rules, and lets the person trust it.

A cloned repository's `.belay/settings.toml` may allow its own commands or
switch to a looser mode; the console holds those back until the person
trusts the workspace (deny and ask rules apply at once).  This bar lists
what is held back, in amber under the toolbar, with one button to trust
the workspace; it hides once nothing is held back.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QWidget

SHOWN = 4
"""Held-back settings listed by name; the rest are counted."""


class TrustBanner(QWidget):
    """Amber, across the window, while the workspace's own settings wait for trust.

    Signals:
        trust_requested(): the person trusts this workspace.
    """

    trust_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("trustBanner")
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        self.text = QLabel()
        self.text.setWordWrap(True)
        self.text.setTextFormat(Qt.TextFormat.RichText)
        self.trust = QPushButton("&Trust this workspace")
        self.trust.setToolTip("Let this workspace's .belay/settings.toml allow calls and set the mode "
                              "(remembered for this folder)")
        self.trust.clicked.connect(self.trust_requested)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(12, 6, 12, 6)
        layout.addWidget(self.text, 1)
        layout.addWidget(self.trust)
        self.hide()

    def show_held_back(self, held: Sequence[str]) -> None:
        if not held:
            self.hide()
            return
        named = ", ".join(html.escape(h) for h in held[:SHOWN])
        more = f" and {len(held) - SHOWN} more" if len(held) > SHOWN else ""
        self.text.setText("<b>This workspace's .belay/settings.toml is not trusted yet.</b> Its deny and ask rules "
                          f"apply; what it would loosen waits for you: {named}{more}.")
        self.setToolTip("\n".join(held))
        self.show()
