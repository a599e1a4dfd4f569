"""The approval panel: the call waiting for a person, its diff, and the answers.

It shows the oldest waiting request (with a count of the others), who asked
(the agent and its parents), why the policy asks, the impact, and either a
highlighted diff of the pending write or, for Bash, the parsed command with
the parts that caused the question marked (`gui.window.command_card`).  Answers go
straight to the console; the panel moves on when the bridge says the
request was resolved.  A request with a deadline shows it counting down.

Shortcuts: Ctrl+Return approve, Ctrl+E edit then approve, Ctrl+Shift+Return
always allow (a menu of scopes: once, session, workspace, all workspaces,
with the exact rule it writes), Ctrl+D deny (with the typed reason).

Signals:
    edit_requested(ApprovalRequested): the person wants to edit the content first.
    waiting_changed(int): how many calls wait now (0: the panel shows its empty state).
"""

from __future__ import annotations

import html
import time

from PySide6.QtCore import QPoint, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QKeySequence, QShortcut
from PySide6.QtWidgets import QHBoxLayout, QLabel, QLineEdit, QMenu, QPushButton, QVBoxLayout, QWidget

from core import ApprovalRequested, Console, Timeline
from gui.window.command_card import CommandCard, impact_html
from gui.window.review_view import ReviewView

EMPTY_TEXT = "Nothing is waiting for your approval."
SCOPES = (("once", "Just this once"), ("session", "For this session"),
          ("workspace", "For this workspace (.belay/settings.toml)"),
          ("user", "For all my workspaces (user settings)"))
NO_RULE = "No rule can allow calls like this one (code run from strings, computed commands, protected paths): " \
          "it is asked every time."


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
        self.diff = ReviewView()
        self.command_card = CommandCard()
        self.countdown = QLabel()
        self.countdown.setStyleSheet("color:#9a6700; font-weight:bold")
        self._deadline: float | None = None
        self._tick = QTimer(self)
        self._tick.setInterval(1000)
        self._tick.timeout.connect(self._update_countdown)
        self.scope_menu = QMenu(self)
        self.rule_action = self.scope_menu.addAction("")
        self.rule_action.setEnabled(False)
        self.scope_menu.addSeparator()
        self.scope_actions: dict[str, QAction] = {}
        for scope, label in SCOPES:
            action = self.scope_menu.addAction(label)
            action.setData(scope)
            self.scope_actions[scope] = action
        # A bound method, not a lambda: a lambda holding `self` makes a cycle that Python's collector may
        # break on a worker thread, destroying Qt objects there.
        self.scope_menu.triggered.connect(self._on_scope_chosen)
        self.reason = QLineEdit()
        self.reason.setPlaceholderText("Reason for denying (the agent is told)")
        self.reason.returnPressed.connect(self.deny)
        self.approve_button = QPushButton("Approve  (Ctrl+Enter)")
        self.approve_button.setObjectName("approveButton")
        self.edit_button = QPushButton("Edit && approve…  (Ctrl+E)")
        self.always_button = QPushButton("Always allow…  (Ctrl+Shift+Enter)")
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
        layout.addWidget(self.countdown)
        layout.addWidget(self.diff, 1)
        layout.addWidget(self.command_card, 1)
        layout.addWidget(self._buttons)

    # -- queue -----------------------------------------------------------------

    @property
    def current(self) -> ApprovalRequested | None:
        return self._queue[0] if self._queue else None

    def queue(self) -> list[ApprovalRequested]:
        """Every request waiting, the one shown first."""
        return list(self._queue)

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
        bash = request is not None and request.tool == "Bash"
        self.diff.setVisible(request is not None and not bash)
        self.command_card.setVisible(bash)
        self._buttons.setVisible(request is not None)
        self.setProperty("waiting", request is not None)
        self.style().unpolish(self)
        self.style().polish(self)
        self.waiting_changed.emit(len(self._queue))
        self.edit_button.setEnabled(request is not None and any(p.content is not None for p in request.proposed))
        self._start_countdown(request)
        if request is None:
            self.detail.setText("Calls that change files or run commands wait here until you approve or deny them.")
            self.diff.set_diffs([])
            return
        who = html.escape(agent_path(self._timeline, request.agent_id))
        rule = f" <span style='color:#6e7781'>(rule {html.escape(request.rule)})</span>" if request.rule else ""
        impact = "" if request.tool == "Bash" else f"<br>{impact_html(request.impact)}"
        self.detail.setText(f"Asked by <b>{who}</b> — {html.escape(request.reason)}{rule}{impact}")
        suggestion = request.suggested_rule
        self.always_button.setEnabled(suggestion is not None)
        self.always_button.setToolTip(f"Adds the allow rule {suggestion}" if suggestion else NO_RULE)
        self.rule_action.setText(f"Rule: {suggestion}" if suggestion else "")
        if request.tool == "Bash":
            self.command_card.show_request(request)
        else:
            self.diff.show_request(request)

    def _start_countdown(self, request: ApprovalRequested | None) -> None:
        self._deadline = time.monotonic() + request.timeout_s if request is not None and request.timeout_s else None
        self.countdown.setVisible(self._deadline is not None)
        if self._deadline is None:
            self._tick.stop()
            return
        self._update_countdown()
        self._tick.start()

    def _update_countdown(self) -> None:
        request = self.current
        if request is None or self._deadline is None:
            self._tick.stop()
            return
        left = max(0, round(self._deadline - time.monotonic()))
        then = "allowed" if request.on_timeout == "allow" else "denied"
        self.countdown.setText(f"⏱ Unanswered, this call is {then} in {left} s")

    # -- answers -----------------------------------------------------------------

    def approve(self) -> None:
        request = self.current
        if request is not None:
            hunks = self.diff.accepted_hunks() if request.tool != "Bash" else None
            if hunks is None:
                self._console.approve(request.call_id)
                return
            # Approved in part: the typed reason says why the rejected changes were left out (the agent is told).
            self._console.approve(request.call_id, hunks=hunks, reason=self.reason.text())

    def always_allow(self) -> None:
        """Offer the scopes for the suggested rule (the menu says which rule)."""
        if self.current is not None and self.always_button.isEnabled():
            self.scope_menu.popup(self.always_button.mapToGlobal(QPoint(0, self.always_button.height())))

    def _on_scope_chosen(self, action: QAction) -> None:
        if action.data():
            self.always_allow_at(str(action.data()))

    def always_allow_at(self, scope: str) -> None:
        if self.current is not None and self.current.suggested_rule is not None:
            self._console.always_allow(self.current.call_id, scope=scope)

    def deny(self) -> None:
        if self.current is not None:
            self._console.deny(self.current.call_id, self.reason.text())

    def edit(self) -> None:
        if self.current is not None and self.edit_button.isEnabled():
            self.edit_requested.emit(self.current)

    def __repr__(self) -> str:
        return f"<ApprovalPanel waiting={[r.call_id for r in self._queue]}>"
