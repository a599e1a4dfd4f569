"""The bar across the hub that asks whether to supervise an agent in a project Belay has not seen (once: the hub
remembers the answer, core/hub.py)."""

from __future__ import annotations

import asyncio
import html
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QWidget


class SuperviseBar(QWidget):
    """Across the top while an agent in an unseen project waits for the person to say whether to supervise it."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("superviseBar")
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        self.text = QLabel()
        self.text.setWordWrap(True)
        self.text.setTextFormat(Qt.TextFormat.RichText)
        self.supervise = QPushButton("&Supervise it")
        self.supervise.setToolTip("Open this folder as a workspace: its agents' calls go through Belay (remembered)")
        self.refuse = QPushButton("&Not this one")
        self.refuse.setToolTip("Refuse this folder's agent calls, telling the agent why (remembered)")
        self.supervise.clicked.connect(lambda: self._answer("supervise"))
        self.refuse.clicked.connect(lambda: self._answer("refuse"))
        layout = QHBoxLayout(self)
        layout.setContentsMargins(12, 6, 12, 6)
        layout.addWidget(self.text, 1)
        layout.addWidget(self.supervise)
        layout.addWidget(self.refuse)
        self._asks: list[tuple[Path, str, asyncio.Future[str | None]]] = []
        self.hide()

    async def ask(self, directory: Path, agent: str) -> str | None:
        """The person's answer for `directory` (None when the window closes first)."""
        future: asyncio.Future[str | None] = asyncio.get_running_loop().create_future()
        self._asks.append((directory, agent, future))
        self._show_first()
        try:
            return await future
        finally:
            self._asks = [a for a in self._asks if a[2] is not future]
            self._show_first()

    def _show_first(self) -> None:
        if not self._asks:
            self.hide()
            return
        directory, agent, _ = self._asks[0]
        more = f" ({len(self._asks) - 1} more asking)" if len(self._asks) > 1 else ""
        self.text.setText(f"<b>{html.escape(agent)} wants to work in {html.escape(str(directory))}.</b> Supervise "
                          f"it in Belay? Its calls wait until you answer{html.escape(more)}.")
        self.show()

    def _answer(self, answer: str) -> None:
        if self._asks and not self._asks[0][2].done():
            self._asks[0][2].set_result(answer)

    def withdraw_all(self) -> None:
        for _, _, future in self._asks:
            if not future.done():
                future.set_result(None)

    def __repr__(self) -> str:
        return f"<SuperviseBar asking={len(self._asks)}>"
