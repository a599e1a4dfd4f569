"""The approval panel: the call waiting for a person, its diff, and the answers.

It shows the oldest waiting request (with a count of the others), who asked (the agent and its parents), why the
policy asks, the impact, and either a highlighted diff of the pending write or, for Bash, the parsed command with
the parts that caused the question marked (`gui.window.approvals.command_card`).  Answers go straight to the
console; the panel moves on when the bridge says the request was resolved.  A deadline is shown counting down.

When more than one call waits, the inbox above (gui/window/approvals/inbox.py) lists
them all and chooses the one shown; "Approve all" answers the waiting calls
of one agent and tool at once where none of them is of high impact and a
rule could allow them.

Shortcuts, which act only while the panel (or its inbox) has the focus, so
that typing elsewhere never answers a request: Ctrl+Return approve, Ctrl+E
edit then approve, Ctrl+Shift+Return always allow (a menu of scopes: once,
session, workspace, all workspaces, with the exact rule it writes), Ctrl+D
deny (with the typed reason), Ctrl+R to the reason box (Enter there
denies), J / K the next or previous waiting call.

Nothing is answered that was not on screen (gui.window.approvals.arming):
a request can be denied once its diff or card has been drawn, and approved
(by key, button, "Approve all" or a notification) once it has been on
screen, drawn, for SEEN_S; the Approve button counts down meanwhile.  The
answer keys act on fresh presses only: held or repeating, they do nothing,
and after an answer the key must be released and pressed again.

Signals:
    edit_requested(ApprovalRequested): the person wants to edit the content first.
    waiting_changed(int): how many calls wait now (0: the panel shows its empty state).
    answered(str): an answer was sent, in words naming the request ("Approved Write notes.md (lead)").
"""

from __future__ import annotations

import html

from PySide6.QtCore import QEvent, QObject, QPoint, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QHideEvent, QKeyEvent, QKeySequence, QShortcut
from PySide6.QtWidgets import QHBoxLayout, QLabel, QLineEdit, QMenu, QPushButton, QVBoxLayout, QWidget

from core import AllowScope, ApprovalRequested, ConsoleSurface, Timeline, ToolName
from gui.window.approvals.arming import AnswerKeys, Clock, Sight
from gui.window.approvals.command_card import CommandCard
from gui.window.approvals.inbox import InboxModel, InboxView, seconds_left
from gui.window.approvals.intent import IntentView
from gui.window.approvals.text import agent_path, detail_html, why_no_preview
from gui.window.kit import theme
from gui.window.kit.fold_row import FoldingRow
from gui.window.review.view import ReviewView

EMPTY_TEXT = "Nothing is waiting for your approval."
SCOPES: tuple[tuple[AllowScope, str], ...] = (
    ("once", "Just this once"), ("session", "For this session"),
    ("workspace", "For this workspace (.belay/settings.toml)"), ("user", "For all my workspaces (user settings)"))
NO_RULE = "No rule can allow calls like this one (code run from strings, computed commands, protected paths): " \
          "it is asked every time."


class ApprovalPanel(QWidget):
    """Shows one pending approval at a time and sends the person's answer."""

    edit_requested = Signal(object)
    waiting_changed = Signal(int)
    answered = Signal(str)

    def __init__(self, console: ConsoleSurface, timeline: Timeline, parent: QWidget | None = None, *,
                 clock: Clock | None = None) -> None:
        """`clock`: what measures how long a request has been on screen (a test's fake; default monotonic)."""
        super().__init__(parent)
        self.setObjectName("approvalPanel")
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        self._console = console
        self._timeline = timeline
        self._queue: list[ApprovalRequested] = []
        """Every waiting request, in the order they were asked."""
        self._current: str | None = None
        """The call id of the request shown."""
        self._shown: str | None = None
        self.sight = Sight(self) if clock is None else Sight(self, clock=clock)
        """Whether the request shown was drawn, and for how long: it arms the answers."""
        self.sight.changed.connect(self._apply_arming)
        self.inbox_model = InboxModel(lambda agent_id: agent_path(self._timeline, agent_id), self)
        self.inbox = InboxView(self.inbox_model)
        self.inbox.chosen.connect(self.focus_request)
        self.title = QLabel(EMPTY_TEXT)
        self.title.setObjectName("approvalTitle")
        self.title.setTextFormat(Qt.TextFormat.RichText)
        self.title.setWordWrap(True)  # a long command's summary takes two lines rather than widening the window
        self.detail = QLabel()
        self.detail.setWordWrap(True)
        self.detail.setTextFormat(Qt.TextFormat.RichText)
        self.intent = IntentView()
        self.diff = ReviewView()
        self.command_card = CommandCard()
        self.diff.rendered.connect(self._on_content_drawn)
        self.diff.canvas.drawn.connect(self._on_content_drawn)
        for painted in (self.command_card.command.viewport(), self.title):
            painted.installEventFilter(self)  # their paint events say the card (or the details alone) is drawn
        self.countdown = QLabel()
        self.countdown.setObjectName("approvalCountdown")  # coloured by the style sheet (resources/styles)
        self._tick = QTimer(self)
        self._tick.setInterval(1000)
        self._tick.timeout.connect(self._on_tick_timeout)
        self.scope_menu = QMenu(self)
        self.rule_action = self.scope_menu.addAction("")
        self.rule_action.setEnabled(False)
        self.scope_menu.addSeparator()
        self.scope_actions: dict[AllowScope, QAction] = {}
        for scope, label in SCOPES:
            action = self.scope_menu.addAction(label)
            action.setData(scope)
            self.scope_actions[scope] = action
        # A bound method, not a lambda: a lambda holding `self` makes a cycle that Python's collector may
        # break on a worker thread, destroying Qt objects there.
        self.scope_menu.triggered.connect(self._on_scope_chosen)
        self.reason = QLineEdit()
        self.reason.setPlaceholderText("Reason for denying (the agent is told; Enter denies)")
        self.reason.setAccessibleName("Reason for denying")
        self.keys = AnswerKeys(self, self.reason)  # Enter in the reason box denies (a fresh press, like the others)
        self.keys.pressed.connect(self._on_keys_pressed)
        self.approve_button = QPushButton("Approve  (Ctrl+Enter)")
        self.approve_button.setObjectName("approveButton")
        self.edit_button = QPushButton("Edit && approve…")
        self.edit_button.setToolTip("Edit the content, then approve (Ctrl+E)")
        self.always_button = QPushButton("Always allow…")  # its tooltip names the rule and the keys
        self.deny_button = QPushButton("Deny  (Ctrl+D)")
        self.deny_button.setObjectName("denyButton")
        self.preview_button = QPushButton("Run in preview")
        self.preview_button.setObjectName("previewButton")
        self.bulk_button = QPushButton()
        self.bulk_button.setObjectName("bulkButton")
        for button, name in ((self.approve_button, "Approve"), (self.edit_button, "Edit and approve"),
                             (self.always_button, "Always allow"), (self.deny_button, "Deny"),
                             (self.preview_button, "Run the command in preview"),
                             (self.bulk_button, "Approve all of this agent's calls like this one")):
            button.setAccessibleName(name)
        self.approve_button.clicked.connect(self._on_approve_clicked)
        self.edit_button.clicked.connect(self.edit)
        self.always_button.clicked.connect(self.always_allow)
        self.deny_button.clicked.connect(self._on_deny_clicked)
        self.bulk_button.clicked.connect(self.approve_alike)
        self.preview_button.clicked.connect(self.run_in_preview)
        self._layout()
        self.shortcuts: list[tuple[str, str]] = []
        """(keys, what they do), for the shortcuts sheet."""
        self.shortcuts.append(("Ctrl+Return", "Approve the shown request"))  # once on screen SEEN_S
        for keys, slot, what in (("Ctrl+E", self.edit, "Edit the content, then approve"),
                                 ("Ctrl+P", self.preview_key, "Run the command in preview: see its changes first"),
                                 ("Ctrl+Shift+Return", self.always_allow, "Always allow (choose the scope)"),
                                 ("Ctrl+R", self.focus_reason, "Type a reason for denying (Enter denies)")):
            shortcut = QShortcut(QKeySequence(keys), self)
            shortcut.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
            shortcut.setAutoRepeat(False)  # a key held down does not repeat an answer
            shortcut.activated.connect(slot)
            self.shortcuts.append((keys, what))
        self.shortcuts.insert(-1, ("Ctrl+D", "Deny, with the typed reason"))
        self.shortcuts.append(("J / K", "Next / previous waiting request (in the inbox)"))
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self._show_current()

    def _layout(self) -> None:
        answers = FoldingRow([(self.approve_button, 0), (self.edit_button, 0), (self.preview_button, 0),
                              (self.always_button, 0), (None, 1), (self.bulk_button, 0)], fold_at=4)  # narrow: 2 lines
        refusal = QHBoxLayout()
        refusal.addWidget(self.reason, 1)
        refusal.addWidget(self.deny_button)
        buttons = QVBoxLayout()
        buttons.setContentsMargins(0, 0, 0, 0)
        buttons.addWidget(answers)
        buttons.addLayout(refusal)
        self._buttons = QWidget()
        self._buttons.setLayout(buttons)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 6, 8, 6)
        layout.setSpacing(3)  # a 640-pixel window: every line of spacing is a diff line less
        layout.addWidget(self.inbox)
        layout.addWidget(self.title)
        layout.addWidget(self.detail)
        layout.addWidget(self.intent)
        layout.addWidget(self.countdown)
        layout.addWidget(self.diff, 1)
        layout.addWidget(self.command_card, 1)
        layout.addWidget(self._buttons)
        theme.follow(self, self._restyle)

    # -- queue -----------------------------------------------------------------

    @property
    def current(self) -> ApprovalRequested | None:
        return next((r for r in self._queue if r.call_id == self._current), self._queue[0] if self._queue else None)

    def queue(self) -> list[ApprovalRequested]:
        """Every request waiting, in the order they were asked."""
        return list(self._queue)

    def set_timeline(self, timeline: Timeline) -> None:
        self._timeline = timeline

    def add(self, request: ApprovalRequested) -> None:
        if any(r.call_id == request.call_id for r in self._queue):
            return
        self._queue.append(request)
        self.inbox_model.add(request)
        if len(self._queue) == 1:
            self._show_current()
        else:
            self._update_title()
            self.waiting_changed.emit(len(self._queue))

    def remove(self, call_id: str) -> None:
        at = next((i for i, r in enumerate(self._queue) if r.call_id == call_id), None)
        if at is None:
            return
        was_current = self.current is not None and self.current.call_id == call_id
        del self._queue[at]
        self.inbox_model.remove(call_id)
        if was_current:
            following = self._queue[min(at, len(self._queue) - 1)] if self._queue else None
            self._current = following.call_id if following is not None else None
            self.reason.clear()
            self._show_current()
        else:
            self._update_title()
            self.waiting_changed.emit(len(self._queue))

    def focus_request(self, call_id: str) -> None:
        """Show a particular waiting call (chosen in the inbox, or selected in the timeline)."""
        if call_id != self._current and any(r.call_id == call_id for r in self._queue):
            self._current = call_id
            self._show_current()

    def step(self, delta: int) -> None:
        """Show the next (1) or previous (-1) waiting call."""
        current = self.current
        if current is not None:
            at = self._queue.index(current)
            self.focus_request(self._queue[min(max(at + delta, 0), len(self._queue) - 1)].call_id)

    def _update_title(self) -> None:
        request = self.current
        self.inbox.setVisible(len(self._queue) > 1)
        if request is None:
            self.title.setText(f"<span style='color:{theme.colour('muted')}'>{EMPTY_TEXT}</span>")
            return
        place = self._queue.index(request) + 1
        more = f" &nbsp;<span style='color:{theme.colour('muted')}'>({place} of {len(self._queue)} waiting)</span>" \
            if len(self._queue) > 1 else ""
        self.title.setText(f"<b>{html.escape(request.tool)}</b> · {html.escape(request.summary)}{more}")
        self._update_bulk(request)

    def _show_current(self) -> None:
        request = self.current
        shown = request.call_id if request is not None else None
        self._shown = shown
        self._current = shown
        self.sight.show(shown)  # a different request: unseen until drawn, then SEEN_S until armed
        self._update_title()
        self.inbox.show_current(shown)
        self.reason.setEnabled(request is not None)
        bash = request is not None and request.tool == ToolName.BASH and not request.diffs  # a preview shows its diffs
        self.diff.setVisible(request is not None and not bash and bool(request.diffs))  # a Read has none
        self.command_card.setVisible(bash)
        self._buttons.setVisible(request is not None)
        self.setProperty("waiting", request is not None)
        self.style().unpolish(self)
        self.style().polish(self)
        self.waiting_changed.emit(len(self._queue))
        self.edit_button.setEnabled(request is not None and any(p.content is not None for p in request.proposed))
        self._start_countdown(request)
        self.intent.show_intent(request.intent if request is not None else None)
        if request is None:
            self.detail.setText("Calls that change files or run commands wait here until you approve or deny them.")
            self.diff.set_diffs([])
            self._apply_arming()
            return
        self.detail.setText(self._detail_html(request))
        preview = request.tool == ToolName.BASH and bool(request.diffs)  # the command ran: its changes are chosen from
        self.deny_button.setText("Discard  (Ctrl+D)" if preview else "Deny  (Ctrl+D)")
        self.edit_button.setText("Edit && apply…" if preview else "Edit && approve…")
        self.edit_button.setVisible(not bash)  # a command has no content to edit; it may run in preview instead
        self.preview_button.setVisible(bash)
        why_not = self._no_preview(request)
        self.preview_button.setToolTip(why_not or "Run it in a private layer over the workspace, then choose which "
                                       "of its changes land (Ctrl+P)")
        suggestion = request.suggested_rule
        self.always_button.setToolTip(f"Adds the allow rule {suggestion} (Ctrl+Shift+Enter)" if suggestion else NO_RULE)
        self.rule_action.setText(f"Rule: {suggestion}" if suggestion else "")
        if bash:
            self.command_card.show_request(request)
        else:
            self.diff.show_request(request)
        self._apply_arming()

    def _restyle(self) -> None:
        """The theme changed: the title and the details carry its colours."""
        self._update_title()
        request = self.current
        if request is not None:
            self.detail.setText(self._detail_html(request))
            self.intent.show_intent(request.intent)

    def _detail_html(self, request: ApprovalRequested) -> str:
        return detail_html(request, self._timeline)

    # -- seen, then armed ------------------------------------------------------------

    def _on_content_drawn(self) -> None:
        """A paint of the diff, the card or the title: the shown request is drawn once what shows it is."""
        request = self.current
        if request is None or not self.isVisible() or self.window().isMinimized():
            return
        if self.command_card.isVisible():
            drawn = self.command_card.request is request
        elif self.diff.isVisible():
            drawn = self.diff.shown_call == request.call_id and self.diff.is_rendered()
        else:
            drawn = True  # no diff, no card (a Read): the title and details are all there is to see
        if drawn:
            self.sight.drawn(request.call_id)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        if event.type() == QEvent.Type.Paint:
            self._on_content_drawn()  # the paint that follows at once puts it on screen
        return super().eventFilter(watched, event)

    def hideEvent(self, event: QHideEvent) -> None:  # noqa: N802 - Qt override
        super().hideEvent(event)
        self.sight.unsee()  # off screen (folded, minimised): it must be drawn and looked at again

    def _apply_arming(self) -> None:
        """The answers as the sight allows: deny once drawn, the rest once armed; Approve counts down."""
        request = self.current
        seen = request is not None and self.sight.seen()
        armed = request is not None and self.sight.armed()
        verb = "Apply" if request is not None and request.tool == ToolName.BASH and request.diffs else "Approve"
        self.approve_button.setText(f"{verb}  (Ctrl+Enter)" if armed or request is None else
                                    f"{verb} in {self.sight.left():.1f} s" if seen else f"{verb} · showing…")
        self.approve_button.setEnabled(armed)
        self.deny_button.setEnabled(seen)
        self.edit_button.setEnabled(armed and request is not None and any(p.content is not None
                                                                          for p in request.proposed))
        self.always_button.setEnabled(armed and request is not None and request.suggested_rule is not None)
        self.preview_button.setEnabled(armed and request is not None and self._no_preview(request) is None)
        self.bulk_button.setEnabled(armed)

    def may_approve(self, call_id: str) -> bool:
        """Whether `call_id` is the request shown and has been on screen, drawn, for SEEN_S."""
        return self._current == call_id and self.sight.armed()

    def _armed(self) -> bool:
        return self.current is not None and self.sight.armed()

    # -- approving alike --------------------------------------------------------------

    def alike(self, request: ApprovalRequested) -> list[ApprovalRequested]:
        """The waiting calls "Approve all" would answer with `request`: the same agent and tool, none of high
        impact, each one a rule could allow (so nothing asked every time on principle), none with changes the
        person rejected."""
        if request.impact.level == "high" or request.suggested_rule is None:
            return []
        same = [r for r in self._queue if r.agent_id == request.agent_id and r.tool == request.tool]
        if len(same) < 2 or any(r.impact.level == "high" or r.suggested_rule is None
                                or self.diff.has_rejections(r.call_id) for r in same):
            return []  # nothing decided on principle, and nothing the person is reviewing hunk by hunk
        return same

    def _update_bulk(self, request: ApprovalRequested) -> None:
        same = self.alike(request)
        self.bulk_button.setVisible(bool(same))
        if same:
            agent = self._timeline.agents.get(request.agent_id)
            name = agent.name if agent is not None else request.agent_id
            self.bulk_button.setText(f"Approve all {len(same)} {request.tool} of {name}")
            self.bulk_button.setToolTip("\n".join(f"{r.tool} {r.summary}" for r in same))
            self.bulk_button.setEnabled(self._armed())  # Approve all answers with the request shown

    def approve_alike(self) -> None:
        request = self.current
        if request is None or not self._armed():
            return
        same = self.alike(request)
        for each in same:
            self._console.approve(each.call_id, via="window")
        if same:
            self.answered.emit(f"Approved {len(same)} {request.tool} calls of "
                               f"{agent_path(self._timeline, request.agent_id)}")

    # -- countdown ------------------------------------------------------------------

    def _start_countdown(self, request: ApprovalRequested | None) -> None:
        timed = request is not None and request.timeout_s is not None
        self.countdown.setVisible(timed)
        if self._queue:
            self._tick.start()
        else:
            self._tick.stop()
        self._update_countdown()

    def _on_tick_timeout(self) -> None:
        self._update_countdown()
        self.inbox_model.tick()

    def _update_countdown(self) -> None:
        request = self.current
        left = seconds_left(request) if request is not None else None
        if request is None or left is None:
            return
        then = "allowed" if request.on_timeout == "allow" else "denied"
        self.countdown.setText(f"⏱ Unanswered, this call is {then} in {left} s")

    # -- answers -----------------------------------------------------------------

    def _said(self, verb: str, request: ApprovalRequested) -> None:
        self.answered.emit(f"{verb} {request.tool} {request.summary} "
                           f"({agent_path(self._timeline, request.agent_id)})")

    def _on_keys_pressed(self, answer: str) -> None:
        """A fresh press of an answer key (gui.window.approvals.arming.AnswerKeys)."""
        if answer == "approve":
            self._on_approve_clicked()
        else:
            self._on_deny_clicked()

    def _on_approve_clicked(self) -> None:
        if self._armed():
            self.approve()

    def _on_deny_clicked(self) -> None:
        if self.current is not None and self.sight.seen():
            self.deny()

    def approve(self) -> None:
        request = self.current
        if request is not None:
            hunks = self.diff.accepted_hunks() if request.tool != ToolName.BASH or request.diffs else None
            if hunks is None:
                self._console.approve(request.call_id, via="window")
                self._said("Approved", request)
                return
            # Approved in part: the typed reason says why the rejected changes were left out (the agent is told).
            self._console.approve(request.call_id, hunks=hunks, reason=self.reason.text(), via="window")
            self._said(f"Approved {self.diff.total - len(self.diff.rejected())} of {self.diff.total} changes of",
                       request)

    def preview_key(self) -> None:
        if self._armed() and self.preview_button.isVisible() and self.preview_button.isEnabled():
            self.run_in_preview()

    def run_in_preview(self) -> None:
        """Approve the command to run in a private layer: its changes come back here before they land."""
        request = self.current
        if request is not None and self._no_preview(request) is None:
            self._console.approve(request.call_id, preview=True, via="window")
            self._said("Ran in preview", request)

    def _no_preview(self, request: ApprovalRequested) -> str | None:
        return why_no_preview(request, self._console.previews)

    def always_allow(self) -> None:
        """Offer the scopes for the suggested rule (the menu says which rule)."""
        if self.current is not None and self.always_button.isEnabled():
            self.scope_menu.popup(self.always_button.mapToGlobal(QPoint(0, self.always_button.height())))

    def _on_scope_chosen(self, action: QAction) -> None:
        scope = next((scope for scope, _ in SCOPES if scope == action.data()), None)  # None: the rule's own line
        if scope is not None:
            self.always_allow_at(scope)

    def always_allow_at(self, scope: AllowScope) -> None:
        request = self.current
        if request is not None and request.suggested_rule is not None:
            self._console.always_allow(request.call_id, scope=scope, via="window")
            self._said(f"Allowed ({request.suggested_rule}, {scope})", request)

    def deny(self) -> None:
        request = self.current
        if request is not None:
            self._console.deny(request.call_id, self.reason.text(), via="window")
            self._said("Denied", request)

    def focus_reason(self) -> None:
        if self.current is not None:
            self.reason.setFocus(Qt.FocusReason.ShortcutFocusReason)

    def edit(self) -> None:
        if self.current is not None and self.edit_button.isEnabled():
            self.edit_requested.emit(self.current)

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 - Qt override
        step = {Qt.Key.Key_J: 1, Qt.Key.Key_K: -1}.get(Qt.Key(event.key()))
        if step is not None and not event.modifiers():
            self.step(step)
            return
        super().keyPressEvent(event)

    def __repr__(self) -> str:
        return f"<ApprovalPanel waiting={[r.call_id for r in self._queue]}>"
