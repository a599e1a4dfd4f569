"""The approval panel: the call waiting for a person, its diff, and the answers.

It shows the oldest waiting request (with a count of the others), who asked
(the agent and its parents), why the policy asks, and a highlighted diff of
the pending write.  Answers go straight to the console; the panel moves on
when the bridge says the request was resolved.

Shortcuts: Ctrl+Return approve, Ctrl+E edit then approve, Ctrl+Shift+Return
always allow this tool for the session, Ctrl+D deny (with the typed reason).

Signals:
    edit_requested(ApprovalRequested): the person wants to edit the content first.
    waiting_changed(int): how many calls wait now (0: the panel shows its empty state).
"""

from __future__ import annotations

import html

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import QHBoxLayout, QLabel, QLineEdit, QPushButton, QVBoxLayout, QWidget

from core import ApprovalRequested, Console, Timeline
from gui.diff_view import DiffView

EMPTY_TEXT = "Nothing is waiting for your approval."


def agent_path(timeline: Timeline, agent_id: str) -> str:
    """'demo-agent › docs-writer': the asking agent with its parents."""
    names: list[str] = []
    seen: set[str] = set()
    current: str | None = agent_id
    while current and current in timeline.agents and current not in seen:
        seen.add(current)
        node = timeline.agents[current]
        names.append(node.name)
        current = node.parent_id
    return " › ".join(reversed(names)) or agent_id


class ApprovalPanel(QWidget):
    """Shows one pending approval at a time and sends the person's answer."""

    edit_requested = Signal(object)
    waiting_changed = Signal(int)

    def __init__(self, console: Console, timeline: Timeline, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("approvalPanel")
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        self._console = console
        self._timeline = timeline
        self._queue: list[ApprovalRequested] = []
        self.title = QLabel(EMPTY_TEXT)
        self.title.setObjectName("approvalTitle")
        self.title.setTextFormat(Qt.TextFormat.RichText)
        self.detail = QLabel()
        self.detail.setWordWrap(True)
        self.detail.setTextFormat(Qt.TextFormat.RichText)
        self.diff = DiffView()
        self.reason = QLineEdit()
        self.reason.setPlaceholderText("Reason for denying (the agent is told)")
        self.reason.returnPressed.connect(self.deny)
        self.approve_button = QPushButton("Approve  (Ctrl+Enter)")
        self.approve_button.setObjectName("approveButton")
        self.edit_button = QPushButton("Edit && approve…  (Ctrl+E)")
        self.always_button = QPushButton("Always allow for this session")
        self.deny_button = QPushButton("Deny  (Ctrl+D)")
        self.deny_button.setObjectName("denyButton")
        self.approve_button.clicked.connect(self.approve)
        self.edit_button.clicked.connect(self.edit)
        self.always_button.clicked.connect(self.always_allow)
        self.deny_button.clicked.connect(self.deny)
        self._layout()
        for keys, slot in (("Ctrl+Return", self.approve), ("Ctrl+Enter", self.approve),
                           ("Ctrl+E", self.edit), ("Ctrl+Shift+Return", self.always_allow),
                           ("Ctrl+D", self.deny)):
            shortcut = QShortcut(QKeySequence(keys), self)
            shortcut.setContext(Qt.ShortcutContext.WindowShortcut)
            shortcut.activated.connect(slot)
        self._show_current()

    def _layout(self) -> None:
        answers = QHBoxLayout()
        for button in (self.approve_button, self.edit_button, self.always_button):
            answers.addWidget(button)
        answers.addStretch(1)
        refusal = QHBoxLayout()
        refusal.addWidget(self.reason, 1)
        refusal.addWidget(self.deny_button)
        buttons = QVBoxLayout()
        buttons.setContentsMargins(0, 0, 0, 0)
        buttons.addLayout(answers)
        buttons.addLayout(refusal)
        self._buttons = QWidget()
        self._buttons.setLayout(buttons)
        layout = QVBoxLayout(self)
        layout.addWidget(self.title)
        layout.addWidget(self.detail)
        layout.addWidget(self.diff, 1)
        layout.addWidget(self._buttons)

    # -- queue -----------------------------------------------------------------

    @property
    def current(self) -> ApprovalRequested | None:
        return self._queue[0] if self._queue else None

    def set_timeline(self, timeline: Timeline) -> None:
        self._timeline = timeline

    def add(self, request: ApprovalRequested) -> None:
        if any(r.call_id == request.call_id for r in self._queue):
            return
        self._queue.append(request)
        if len(self._queue) == 1:
            self._show_current()
        else:
            self._update_title()
            self.waiting_changed.emit(len(self._queue))

    def remove(self, call_id: str) -> None:
        was_current = self.current is not None and self.current.call_id == call_id
        self._queue = [r for r in self._queue if r.call_id != call_id]
        if was_current:
            self.reason.clear()
            self._show_current()
        else:
            self._update_title()
            self.waiting_changed.emit(len(self._queue))

    def focus_request(self, call_id: str) -> None:
        """Bring a particular waiting call to the front (selected in the timeline)."""
        for i, request in enumerate(self._queue):
            if request.call_id == call_id and i:
                self._queue.insert(0, self._queue.pop(i))
                self._show_current()

    def _update_title(self) -> None:
        request = self.current
        if request is None:
            self.title.setText(f"<span style='color:#6e7781'>{EMPTY_TEXT}</span>")
            return
        more = f" &nbsp;<span style='color:#6e7781'>(1 of {len(self._queue)} waiting)</span>" \
            if len(self._queue) > 1 else ""
        self.title.setText(f"<b>{html.escape(request.tool)}</b> · {html.escape(request.summary)}{more}")

    def _show_current(self) -> None:
        request = self.current
        self._update_title()
        for button in (self.approve_button, self.edit_button, self.always_button, self.deny_button):
            button.setEnabled(request is not None)
        self.reason.setEnabled(request is not None)
        self.diff.setVisible(request is not None)
        self._buttons.setVisible(request is not None)
        self.setProperty("waiting", request is not None)
        self.style().unpolish(self)
        self.style().polish(self)
        self.waiting_changed.emit(len(self._queue))
        self.edit_button.setEnabled(request is not None and any(p.content is not None for p in request.proposed))
        if request is None:
            self.detail.setText("Calls that change files wait here until you approve or deny them.")
            self.always_button.setText("Always allow for this session")
            self.diff.set_diffs([])
            return
        who = html.escape(agent_path(self._timeline, request.agent_id))
        self.detail.setText(f"Asked by <b>{who}</b> — {html.escape(request.reason)}.")
        self.always_button.setText(f"Always allow {request.tool} this session  (Ctrl+Shift+Enter)")
        self.diff.set_diffs(list(request.diffs))

    # -- answers -----------------------------------------------------------------

    def approve(self) -> None:
        if self.current is not None:
            self._console.approve(self.current.call_id)

    def always_allow(self) -> None:
        if self.current is not None:
            self._console.always_allow(self.current.call_id)

    def deny(self) -> None:
        if self.current is not None:
            self._console.deny(self.current.call_id, self.reason.text())

    def edit(self) -> None:
        if self.current is not None and self.edit_button.isEnabled():
            self.edit_requested.emit(self.current)

    def __repr__(self) -> str:
        return f"<ApprovalPanel waiting={[r.call_id for r in self._queue]}>"
