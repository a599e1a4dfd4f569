"""The conversation page: one agent's prompts, words and reasoning among its calls, and what it cost.

The timeline shows what each agent said as rows among its calls; this page reads one agent's whole side of the
story at once, as text (gui.window.panels.conversation_text writes it).  It follows the agent chosen here, or
the one whose row (or message) is selected in the timeline (`show_agent`), and is written again, at most
every `REDRAW_MS` and only while it is shown, when that agent's transcript brought something new (`heard`).
The price table (Belay's dated defaults under the person's `prices.toml`) is read once, off the GUI thread.

Below the text, the person writes a note to the shown agent (`note`: the console's, core.outside.notes): a
hooked Claude Code agent reads it with its next call; the page says whether it could be sent.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from PySide6.QtCore import QTimer
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QLineEdit, QPushButton, QTextBrowser, QVBoxLayout, QWidget

from core import PriceTable, Timeline, config_dir, load_prices
from gui.window.approvals.text import agent_path
from gui.window.kit import theme
from gui.window.panels.conversation_text import conversation_html
from gui.window.runtime.tasks import TaskSet

REDRAW_MS = 250
"""New words are shown at most this often (a page is rewritten whole)."""
NOT_SENT = ("Not sent: a note reaches only a Claude Code session still running under Belay's hooks "
            "(or launched by Belay).")

SendNote = Callable[[str, str], Awaitable[bool]]
"""(agent id, text) -> whether the agent will get it (core.Console.note)."""


class ConversationPage(QWidget):
    """An agent chooser above the chosen agent's conversation."""

    def __init__(self, timeline: Timeline, tasks: TaskSet | None = None, parent: QWidget | None = None, *,
                 note: SendNote | None = None) -> None:
        super().__init__(parent)
        self._timeline, self._tasks, self._note = timeline, tasks, note
        self.prices: PriceTable | None = None
        self.agent = QComboBox()
        self.agent.setAccessibleName("Whose conversation")
        self.agent.currentIndexChanged.connect(self._on_agent_current_index_changed)
        self.text = QTextBrowser()
        self.text.setObjectName("conversationText")
        self.text.setAccessibleName("The agent's conversation")
        self.text.setOpenLinks(False)
        row = QHBoxLayout()
        row.addWidget(QLabel("Agent:"))
        row.addWidget(self.agent, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(row)
        layout.addWidget(self.text, 1)
        self.note = QLineEdit()
        self.note.setPlaceholderText("A note to this agent: it reads it with its next call (a session Belay "
                                     "launched that waits for you: its next message)")
        self.note.setAccessibleName("A note to the agent")
        self.send = QPushButton("Send note")
        self.send.setToolTip("Journaled now, shown here as yours, and given to the agent once, with its next call")
        self.note_state = QLabel()
        self.note_state.setWordWrap(True)
        self.note.textChanged.connect(self._on_note_text_changed)
        self.note.returnPressed.connect(self.send_note)
        self.send.clicked.connect(self.send_note)
        if note is not None and tasks is not None:
            writing = QHBoxLayout()
            writing.addWidget(self.note, 1)
            writing.addWidget(self.send)
            layout.addLayout(writing)
            layout.addWidget(self.note_state)
        self.send.setEnabled(False)
        self._redraw = QTimer(self)
        self._redraw.setSingleShot(True)
        self._redraw.setInterval(REDRAW_MS)
        self._redraw.timeout.connect(self.redraw)
        self._stale = True
        """Something changed while the page was hidden: written when shown."""
        if tasks is not None:
            tasks.spawn(self._read_prices(), "read the price table")
        self.set_timeline(timeline)
        theme.follow(self, self.redraw)  # the page's text carries the theme's colours

    async def _read_prices(self) -> None:
        self.prices = await asyncio.to_thread(load_prices, config_dir())
        self.redraw()

    def set_timeline(self, timeline: Timeline) -> None:
        self._timeline = timeline
        self._fill()
        self.redraw()

    @property
    def shown_agent(self) -> str | None:
        agent = self.agent.currentData()
        return agent if isinstance(agent, str) else None

    def show_agent(self, agent_id: str) -> None:
        """Follow this agent (the timeline's selection is its row or one of its messages)."""
        if agent_id not in self._timeline.agents:
            return
        if self.agent.findData(agent_id) < 0:
            self._fill()
        self.agent.setCurrentIndex(self.agent.findData(agent_id))

    def heard(self, agent_id: str) -> None:
        """An agent's transcript brought something: a new agent is listed, the shown one's page redrawn soon."""
        if self.agent.findData(agent_id) < 0:
            self._fill()
        if agent_id == self.shown_agent or self.shown_agent is None:
            if not self._redraw.isActive():
                self._redraw.start()

    def redraw(self) -> None:
        """The page written again (a hidden page only once it is shown: a page is some milliseconds of HTML)."""
        if not self.isVisible():
            self._stale = True
            return
        self._stale = False
        agent = self.shown_agent
        bar = self.text.verticalScrollBar()
        at_end = bar.value() >= bar.maximum() - 4
        self.text.setHtml(conversation_html(self._timeline, agent or "", self.prices))
        if at_end:
            bar.setValue(bar.maximum())  # following the end, as a chat does; reading earlier words is left alone

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802
        super().showEvent(event)
        if self._stale:
            self.redraw()

    def _fill(self) -> None:
        """Every agent, those that said something first (a session's agent before its sub-agents)."""
        chosen = self.shown_agent
        timeline = self._timeline
        talking = {m.agent_id for m in timeline.messages.values()}
        agents = sorted(timeline.agents, key=lambda a: (a not in talking, timeline.agents[a].started_at))
        self.agent.blockSignals(True)
        try:
            self.agent.clear()
            for agent_id in agents:
                self.agent.addItem(agent_path(timeline, agent_id), agent_id)
            at = self.agent.findData(chosen) if chosen is not None else 0
            self.agent.setCurrentIndex(max(at, 0))
        finally:
            self.agent.blockSignals(False)

    def _on_agent_current_index_changed(self, _: int) -> None:
        self._on_note_text_changed(self.note.text())
        self.redraw()

    def _on_note_text_changed(self, text: str) -> None:
        self.send.setEnabled(bool(text.strip()) and self.shown_agent is not None)

    def send_note(self) -> None:
        """The note written to the shown agent (the field is emptied once the console has taken it)."""
        agent, text = self.shown_agent, self.note.text().strip()
        if agent is None or not text or self._note is None or self._tasks is None:
            return
        self.send.setEnabled(False)
        self._tasks.spawn(self._send(agent, text), f"a note to {agent}")

    async def _send(self, agent: str, text: str) -> None:
        assert self._note is not None
        try:
            sent = await self._note(agent, text)
        finally:
            self._on_note_text_changed(self.note.text())
        if sent:
            self.note.clear()
        self.note_state.setText("Sent: it goes with the agent's next call." if sent else NOT_SENT)

    def __repr__(self) -> str:
        return f"<ConversationPage agent={self.shown_agent} agents={self.agent.count()}>"
