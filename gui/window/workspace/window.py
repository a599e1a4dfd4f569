"""The main window: timeline on the left; approval and tabs (details, changes, shells, rules) on the right.

It wires the bridge's signals to the panels and the panels' requests to the
console (undo, redo and rewind through gui.window.workspace.call_menu).  Anything
asynchronous (undo, loading diffs, rule changes, stopping a shell) runs as a
task the window owns, and questions are asked with `open()`, never a nested
`exec()`: nothing here blocks the shared Qt/asyncio thread.  The menu bar's
corner holds the policy mode; bypass mode keeps a red banner on top; the status
bar always says whether Bash commands run in a sandbox.  Its menus and keys are
one table (gui.window.workspace.commands), which the F1 sheet also lists.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QModelIndex, QObject, Qt
from PySide6.QtGui import QCloseEvent, QKeyEvent, QResizeEvent, QShowEvent
from PySide6.QtWidgets import (
    QApplication,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMainWindow,
    QPlainTextEdit,
    QPushButton,
    QSizePolicy,
    QSplitter,
    QTextEdit,
    QVBoxLayout,
    QWidget,
)

from core import (
    AgentKey,
    ApprovalRequested,
    BudgetReached,
    CallRecord,
    ConsoleSurface,
    MessageKey,
    RemoteConsole,
    RunKey,
    RunStatus,
    UndoReport,
)
from gui.window.approvals.arming import SEEN_S
from gui.window.chrome import actions
from gui.window.chrome.attention import Attention, titled
from gui.window.chrome.journal_check import check_journal
from gui.window.chrome.shortcuts_sheet import ShortcutsSheet
from gui.window.chrome.status_line import HeldIndicator, SandboxIndicator, StoreIndicator
from gui.window.kit.remembered import fit_default_size, keep_splitter, restore_geometry, save_geometry, window_settings
from gui.window.review.edit_dialog import EditDialog
from gui.window.runtime.tasks import TaskSet
from gui.window.timeline.filter import FAILED, WAITING
from gui.window.undo.dialog import UndoDialog
from gui.window.undo.flow import UndoFlow
from gui.window.undo.rewind import ask_rewind
from gui.window.workspace.call_menu import CallMenu
from gui.window.workspace.columns import ColumnFit
from gui.window.workspace.commands import commands
from gui.window.workspace.follow import Follow
from gui.window.workspace.launch import start_claude
from gui.window.workspace.parts import Parts
from gui.window.workspace.status_bar import WindowStatus

FOLDED_TEXT = "▸ Details and other tabs (folded while a request waits)"  # fits a 1024-pixel hub's column


class MainWindow(QMainWindow):
    """One console's window."""

    def __init__(self, console: ConsoleSurface, parent: QWidget | None = None) -> None:
        """`console`: this machine's, or one on another host attached to (core.remote.console)."""
        super().__init__(parent)
        self.console = console
        self._title = f"Belay — {console.where}"
        self._mode = console.mode
        self.setWindowTitle(self._title)
        self._settings = window_settings()
        fit_default_size(self, 1400, 860)
        restore_geometry(self, "console/geometry", self._settings)
        self.tasks = TaskSet(on_error=self._show_error)
        self.parts = p = Parts.made(console, self.tasks)
        self.model, self.bridge, self.tree, self.timeline_filter = p.model, p.bridge, p.tree, p.timeline_filter
        self.approvals, self.elicitations, self.details = p.approvals, p.elicitations, p.details
        self.changes, self.shells, self.rules, self.mcp, self.tabs = p.changes, p.shells, p.rules, p.mcp, p.tabs
        self.banner, self.link, self.trust, self.mode = p.banner, p.link, p.trust, p.mode
        self.columns = ColumnFit(self.tree, lambda: self.model.timeline)
        self.undoing = UndoFlow(console, self.tasks, self, report=self._show_undo_report,
                                say=self.statusBar().showMessage, confirm_rewind=lambda plan: self.confirm_rewind(plan),
                                rewound=self.show_selected)
        self.calls = CallMenu(console, self.tree, lambda: self.model.timeline, self.undoing, self)
        self.attention = Attention(self, self.tasks)
        self._lay_out()
        self.status = WindowStatus(self.statusBar(), console, self.tasks, lambda: self.model.timeline)
        self.sandbox: SandboxIndicator = self.status.sandbox
        self.held: HeldIndicator = self.status.held
        self.store: StoreIndicator | None = self.status.store
        self.show_mode(console.mode)
        self.follow = Follow(self, console, p, self.attention, self.statusBar().showMessage, self)
        self._connect()
        self.commands = commands(self, p, self.calls)
        """The menus and keys, one table: the menu bar and the F1 sheet are made from it."""
        actions.install(self, self.commands)
        for view in (self.tree, self.approvals.inbox):
            view.installEventFilter(self)  # ? there opens the sheet (see eventFilter)
        self._accessible()

    def _lay_out(self) -> None:
        """Banners on top; the timeline beside the requests and tabs; the mode in the menu bar's corner."""
        right = QWidget()
        self._right = QVBoxLayout(right)
        self._right.setContentsMargins(4, 4, 4, 0)
        self._right.addWidget(self.elicitations, 0)
        self._right.addWidget(self.approvals, 0)
        self._right.addWidget(self.tabs, 1)
        self.folded = QPushButton(FOLDED_TEXT)
        """The tabs, folded to one line while a request waits: its diff or card takes the column."""
        self.folded.setObjectName("foldedTabs")
        self.folded.setFlat(True)
        self.folded.setStyleSheet("QPushButton { padding: 0 4px; text-align: left; border: none; }")
        self.folded.setFixedHeight(self.folded.fontMetrics().height() + 2)  # one line of text, no more
        self.folded.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)  # cut, never widening
        self.folded.setToolTip("Show the tabs again, until nothing waits (click, or Ctrl+1…5)")
        self.folded.clicked.connect(self._on_folded_clicked)
        self._tabs_wanted = False
        self._right.addWidget(self.folded, 0)
        self.split = split = QSplitter(Qt.Orientation.Horizontal)
        """The timeline on the left, the approvals and tabs on the right; where the person leaves its divider
        is where it is next time."""
        split.addWidget(_stacked(self.timeline_filter, self.tree))
        split.addWidget(right)
        split.setSizes([700, 700])  # halves: at 1024 pixels the diff's bar fits one line, the timeline its Status
        keep_splitter(split, "console/split", self._settings)
        self.setCentralWidget(_stacked(self.banner, self.link, self.trust, split))
        # In the menu bar's corner, not a toolbar row: a 640-pixel window needs the height.  Kept on self:
        # PySide does not take ownership through setCornerWidget.
        self._policy = policy = QWidget(self.menuBar())
        policy.setObjectName("policyCorner")
        row = QHBoxLayout(policy)
        row.setContentsMargins(0, 0, 4, 0)
        row.addWidget(QLabel("Approval mode:"))
        row.addWidget(self.mode)
        self.menuBar().setCornerWidget(policy, Qt.Corner.TopRightCorner)

    def start_claude(self) -> None:
        """File › Start Claude Code here: a prompt, then a session launched on this workspace."""
        self.tasks.spawn(start_claude(self, self.console, self.statusBar()), "start Claude Code")

    def verify_journal(self) -> None:
        """File › Verify the journal: what `belay verify` says, read off the GUI thread."""
        self.tasks.spawn(check_journal(self, self.console.verify()), "verify the journal")

    def _accessible(self) -> None:
        """Names for assistive technology, and Tab in the order of the layout: the mode, the timeline's filter,
        the timeline, the waiting requests and their answers, then the tabs."""
        self.tree.setAccessibleName("Timeline of calls")
        self.mode.setAccessibleName("Approval mode")
        self.tabs.setAccessibleName("Details, changes, shells, rules and MCP servers")
        a = self.approvals
        f = self.timeline_filter
        order = (self.mode, f.text, f.agent, f.status, f.tool, self.tree, a.inbox, a.approve_button, a.edit_button,
                 a.always_button, a.bulk_button, a.reason, a.deny_button, self.tabs)
        for first, second in zip(order, order[1:]):
            QWidget.setTabOrder(first, second)

    def tab_list(self) -> tuple[tuple[QWidget, str, str], ...]:
        """The right-hand tabs, in the order of their Ctrl+number keys: (tab, name, tooltip)."""
        return self.parts.tab_list()

    def _connect(self) -> None:
        approvals, details, changes = self.approvals, self.details, self.changes
        self.bridge.batch_applied.connect(self.status.show_counts)
        self.elicitations.answered.connect(self._on_elicitations_answered)
        self.mcp.restart_requested.connect(self._on_mcp_restart_requested)
        approvals.edit_requested.connect(self._on_approvals_edit_requested)
        approvals.diff.focus_changed.connect(self._on_review_focus_changed)
        approvals.answered.connect(self._on_approvals_answered)
        approvals.waiting_changed.connect(self._on_approvals_waiting_changed)
        for panel in (details, changes):
            panel.undo_requested.connect(self._on_details_undo_requested)
            panel.redo_requested.connect(self._on_details_redo_requested)
        details.full_output_requested.connect(self._on_details_full_output_requested)
        self.shells.stop_requested.connect(self._on_shells_stop_requested)
        self.shells.call_chosen.connect(self._on_changes_call_chosen)
        self.bridge.conversation_changed.connect(self.parts.conversation.heard)
        self.bridge.budget_reached.connect(self._on_bridge_budget_reached)
        changes.call_chosen.connect(self._on_changes_call_chosen)
        self.mode.mode_chosen.connect(self.console.set_mode)
        self.banner.leave_requested.connect(self._on_banner_leave_requested)
        self.trust.trust_requested.connect(self._on_trust_requested)
        self.link.attach_requested.connect(self._on_link_attach_requested)
        self.attention.action_requested.connect(self._on_attention_action_requested)
        self.tree.customContextMenuRequested.connect(self.calls.open_at)
        self.tree.selectionModel().currentChanged.connect(self._on_tree_current_changed)
        self.model.rowsInserted.connect(self._on_model_rows_inserted)

    def start(self) -> None:
        """Attach to the console: snapshot, then live events."""
        self.bridge.start()
        self.follow.catch_up()
        self.mcp.show_servers(self.console.mcp_servers())
        self.status.start()
        if isinstance(self.console, RemoteConsole):
            self.console.on_error = self._show_error  # what was sent without waiting and failed there
        self.tree.expandAll()
        self.columns.reset()
        self.status.show_counts()
        if self.console.recovery_notes:
            self.statusBar().showMessage(" ".join(self.console.recovery_notes), 60_000)
            self.details.notice.setText("<br>".join(self.console.recovery_notes))

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802
        super().resizeEvent(event)
        self._fold_tabs()

    def _fold_tabs(self) -> None:
        """While a call waits the tabs fold to one line (its diff or card takes the column) unless the person
        opened them again; in focus mode they step aside; they come back when nothing waits."""
        waiting = bool(self.approvals.queue())
        if not waiting:
            self._tabs_wanted = False
        fold = waiting and not self._tabs_wanted
        self.tabs.setVisible(not (fold or self.approvals.diff.focus_button.isChecked()))
        self.folded.setVisible(fold and not self.approvals.diff.focus_button.isChecked())

    def _on_folded_clicked(self) -> None:
        self._tabs_wanted = True
        self._fold_tabs()

    def show_tab(self, tab: QWidget) -> None:
        """Ctrl+number: that tab, unfolded if a waiting request had folded the tabs."""
        self.tabs.setCurrentWidget(tab)
        self._on_folded_clicked()

    def _on_approvals_waiting_changed(self, waiting: int) -> None:
        """A waiting call takes the larger share of the right side; otherwise the details do."""
        self._right.setStretchFactor(self.approvals, 3 if waiting else 0)
        self._right.setStretchFactor(self.tabs, 2 if waiting else 1)
        self._fold_tabs()
        self.attention.set_waiting(waiting)
        self.attention.keep_only({r.call_id for r in self.approvals.queue()})
        self._show_title()

    def _on_attention_action_requested(self, call_id: str, action: str) -> None:
        """A desktop notification's button: answer the call it was about, or show it."""
        request = next((r for r in self.approvals.queue() if r.call_id == call_id), None)
        if request is None:
            self.statusBar().showMessage("That request was answered already.", 10_000)
        elif action == "approve" and request.impact.level == "low" and (
                self.approvals.may_approve(call_id) or self.attention.up_for(call_id) >= SEEN_S):
            self.console.approve(call_id, via="notification")  # it was on screen (the bubble or the window) so long
            self.statusBar().showMessage(f"Approved {request.tool} {request.summary} from the notification.", 10_000)
        elif action == "deny":
            self.console.deny(call_id, "denied from the desktop notification", via="notification")
            self.statusBar().showMessage(f"Denied {request.tool} {request.summary} from the notification.", 10_000)
        else:
            self.attention.raise_window()
            self.approvals.focus_request(call_id)
            self.select_call(call_id)

    def _on_review_focus_changed(self, on: bool) -> None:
        """Focus mode: the pending write's diff takes the whole right column (the tabs step aside)."""
        self._fold_tabs()

    # -- the timeline ----------------------------------------------------------------

    def _on_model_rows_inserted(self, parent: QModelIndex, first: int, last: int) -> None:
        """New agents widen the Call column to their names.  (They come expanded, as batches do: the view's
        `expand_new`; an agent a person closed stays closed as its calls keep coming.)"""
        keys = self.model.timeline.children(self.model.key_of(parent))[first:last + 1]
        if any(type(key) is AgentKey for key in keys):
            self.columns.fit_call_column()  # once for the lot: it measures every agent's name

    def _on_changes_call_chosen(self, call_id: str) -> None:
        self.select_call(call_id)
        self.tabs.setCurrentWidget(self.details)

    def _on_link_attach_requested(self) -> None:
        if isinstance(self.console, RemoteConsole):
            self.tasks.spawn(self.console.reattach(), f"attach again to {self.console.where}")

    def _on_elicitations_answered(self, elicitation_id: str, action: str, content: object) -> None:
        """The person answered a server's request for input: to the console (the form leaves when it ends)."""
        try:
            if not self.console.elicitations.answer(elicitation_id, action,  # type: ignore[arg-type]
                                                    content if isinstance(content, dict) else None):
                self.elicitations.remove(elicitation_id)  # it had ended already (the server gave up)
        except ValueError as e:
            self.elicitations.show_error(elicitation_id, str(e))

    def _on_mcp_restart_requested(self, name: str) -> None:
        self.tasks.spawn(self.console.restart_mcp_server(name), f"restart MCP server {name}")

    # -- the mode, the title, the banners ----------------------------------------------

    def show_mode(self, mode: str) -> None:
        """The policy mode: the selector, the bypass banner, the title."""
        self.mode.show_mode(mode)
        self.banner.show_mode(mode)
        self._mode = mode
        self._show_title()

    def _show_title(self) -> None:
        """The workspace, bypass mode when on, and how many requests wait."""
        title = f"{self._title} — BYPASS MODE" if self._mode == "bypass" else self._title
        self.setWindowTitle(titled(title, len(self.approvals.queue())))

    def _on_banner_leave_requested(self) -> None:
        self.console.set_mode("default")

    def _on_trust_requested(self) -> None:
        self.tasks.spawn(self.console.trust_workspace(), "trust this workspace")

    def open_mode_choice(self) -> None:
        """Ctrl+M: the mode selector, open."""
        self.mode.setFocus()
        self.mode.showPopup()

    # -- the panels' requests ----------------------------------------------------------

    def _on_shells_stop_requested(self, shell_id: str) -> None:
        self.tasks.spawn(self._stop_shell(shell_id), f"stop {shell_id}")

    async def _stop_shell(self, shell_id: str) -> None:
        if not await self.console.kill_shell(shell_id):
            self.shells.stop_failed(shell_id)
            self.statusBar().showMessage(f"{shell_id} had already ended.", 10_000)

    def _on_details_full_output_requested(self, call_id: str) -> None:
        self.tasks.spawn(self._show_full_output(call_id), f"full output of {call_id}")

    async def _show_full_output(self, call_id: str) -> None:
        self.details.show_full_output(call_id, await self.console.full_output(call_id))

    def _on_approvals_edit_requested(self, request: ApprovalRequested) -> None:
        dialog = EditDialog(request, self, rejected=self.approvals.diff.rejected_hunks())  # starts from the review
        dialog.approved_with_edits.connect(
            lambda call_id, edits: self.console.approve(call_id, edited=edits, via="window"))
        dialog.finished.connect(dialog.deleteLater)
        dialog.open()

    def _on_approvals_answered(self, text: str) -> None:
        self.statusBar().showMessage(text, 8_000)

    def _on_details_undo_requested(self, call_id: str, paths: list[str]) -> None:
        self.undo(call_id, paths or None)

    def _on_details_redo_requested(self, call_id: str, paths: list[str]) -> None:
        self.redo(call_id, paths or None)

    def _on_bridge_budget_reached(self, event: BudgetReached) -> None:
        held = " Its next call waits for you." if event.held else ""
        self.statusBar().showMessage(f"Budget reached: {event.message}.{held}")

    # -- the selected call ---------------------------------------------------------------

    def _on_tree_current_changed(self, current: QModelIndex, previous: QModelIndex) -> None:
        self.show_selected()

    def show_selected(self) -> None:
        """The selected row's details (and its diffs, loaded off the GUI thread)."""
        key = self.tree.current_key()
        self.details.show_key(key)
        if isinstance(key, AgentKey | MessageKey):  # the conversation page follows the agent chosen
            self.parts.conversation.show_agent(key.ident if isinstance(key, AgentKey) else
                                               self.model.timeline.messages[key.message_id].agent_id)
        if isinstance(key, RunKey):
            run = self.model.timeline.runs[key.call_id]
            if run.status == RunStatus.BLOCKED_ON_USER:
                self.approvals.focus_request(run.call_id)
            if run.changes:
                self.tasks.spawn(self._load_diffs(run.call_id), f"diffs of {run.call_id}")

    async def _load_diffs(self, call_id: str) -> None:
        diffs = await self.console.diffs_for(call_id)
        self.details.show_diffs(call_id, diffs)

    def select_call(self, call_id: str) -> None:
        """Make a call the current row (and show its details)."""
        self.tree.go_to(RunKey(call_id))

    def next_waiting(self) -> None:
        """F8: the next call waiting for approval, of those the filter shows."""
        if not self.timeline_filter.go_to_next(WAITING):
            self.statusBar().showMessage("No call shown is waiting for approval.", 5_000)

    def next_failure(self) -> None:
        """F9: the next failed (or timed out) call, of those the filter shows."""
        if not self.timeline_filter.go_to_next(FAILED):
            self.statusBar().showMessage("No call shown has failed.", 5_000)

    def undo(self, call_id: str, paths: list[str] | None = None) -> None:
        """Undo a call (or some of its files): merged where later edits allow, else the person decides."""
        self.calls.undo(call_id, paths)

    def redo(self, call_id: str, paths: list[str] | None = None) -> None:
        self.calls.redo(call_id, paths)

    def rewind(self, call_id: str) -> None:
        """Preview, confirm, then undo every later call that changed files."""
        self.calls.rewind(call_id)

    async def confirm_rewind(self, plan: list[CallRecord]) -> bool:
        """Shows what a rewind would undo and asks; tests replace it."""
        return await ask_rewind(plan, self.console.diffs_for, self)

    @property
    def undo_dialog(self) -> UndoDialog | None:
        """The last undo dialog opened (the person resolving conflicting files), for tests."""
        return self.undoing.dialog

    def _show_undo_report(self, report: UndoReport) -> None:
        self.details.show_undo_report(report)
        verb = "Redo" if report.redo else "Undo"
        self.statusBar().showMessage(report.message if report.ok else f"{verb} refused: {report.message}", 10_000)
        if report.ok and self.details.key == RunKey(report.call_id):
            self.show_selected()

    def focus_approvals(self) -> None:
        """To the waiting requests: the inbox when several wait, else the panel (its keys act only there)."""
        target = self.approvals.inbox if self.approvals.inbox.isVisible() else self.approvals
        target.setFocus(Qt.FocusReason.ShortcutFocusReason)

    # -- keys ---------------------------------------------------------------------------

    def shortcuts_sheet(self) -> ShortcutsSheet:
        return ShortcutsSheet([*actions.sections(self.commands),
                               ("Waiting requests (while they have the focus)", self.approvals.shortcuts),
                               ("A pending write's diff (while it has the focus)", self.approvals.diff.shortcuts)],
                              self)

    def show_shortcuts(self) -> None:
        """The sheet beside the window, not over it: a person may keep it open while using the keys."""
        sheet = self.shortcuts_sheet()
        sheet.finished.connect(sheet.deleteLater)
        sheet.show()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        """? in the timeline opens the shortcuts sheet (an item view would take it for type-ahead search)."""
        if event.type() == QEvent.Type.KeyPress and isinstance(event, QKeyEvent) and event.text() == "?":
            self.show_shortcuts()
            return True
        return super().eventFilter(watched, event)

    def question_mark(self) -> None:
        """? opens the sheet, except in a text field, where it is the character typed."""
        focus = QApplication.focusWidget()
        if isinstance(focus, QLineEdit):
            focus.insert("?")
        elif isinstance(focus, QPlainTextEdit | QTextEdit) and not focus.isReadOnly():
            focus.insertPlainText("?")
        else:
            self.show_shortcuts()

    def _show_error(self, message: str) -> None:
        self.statusBar().showMessage(message, 15_000)

    def show_counts(self) -> None:
        self.status.show_counts()

    def status_text(self) -> str:
        return self.status.counts.text()

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 - Qt override
        super().showEvent(event)
        if self.isWindow():
            self.attention.show_tray()  # a workspace page inside the hub window leaves the tray to it

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 - Qt override
        if self.isWindow():  # a page of the hub window leaves its size to the hub
            save_geometry(self, "console/geometry", self._settings)
        self.status.stop()
        self.bridge.stop()
        super().closeEvent(event)


def _stacked(*widgets: QWidget) -> QWidget:
    """The widgets one above the other, edge to edge; the last takes the room left."""
    column = QWidget()
    layout = QVBoxLayout(column)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.setSpacing(0)
    for widget in widgets:
        layout.addWidget(widget, 1 if widget is widgets[-1] else 0)
    return column
