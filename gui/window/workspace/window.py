"""The main window: timeline on the left; approval and tabs (details, changes, shells, rules) on the right.

It wires the bridge's signals to the panels and the panels' requests to the
console (undo, redo and rewind through gui.window.undo.flow).  Anything
asynchronous (undo, loading diffs, rule changes, stopping a shell) runs as a
task the window owns, and questions are asked with `open()`, never a nested
`exec()`: nothing here blocks the shared Qt/asyncio thread.  The toolbar
holds the policy mode; bypass mode keeps a red banner on top; the status
bar always says whether Bash commands run in a sandbox.

Keys: Ctrl+1 details, Ctrl+2 changes, Ctrl+3 background shells, Ctrl+4 rules, Ctrl+5 MCP servers, Ctrl+M mode,
Ctrl+Z undo and Ctrl+Shift+Z redo the selected call; Ctrl+F filters the timeline (gui.window.timeline.filter),
F8 goes to the next call waiting for approval, F9 to the next failed one.
"""

from __future__ import annotations

import asyncio

from PySide6.QtCore import QEvent, QModelIndex, QObject, QPoint, Qt, QTimer, Signal
from PySide6.QtGui import (
    QAction,
    QCloseEvent,
    QGuiApplication,
    QKeyEvent,
    QKeySequence,
    QResizeEvent,
    QShortcut,
    QShowEvent,
)
from PySide6.QtWidgets import (
    QApplication,
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QLineEdit,
    QMainWindow,
    QMenu,
    QPlainTextEdit,
    QSplitter,
    QTabWidget,
    QTextEdit,
    QVBoxLayout,
    QWidget,
)

from core import (
    AgentKey,
    ApprovalRequested,
    AttachServer,
    CallRecord,
    ConsoleSurface,
    ElicitationRequested,
    ExternalChangesRecorded,
    LinkChanged,
    PolicyChanged,
    RemoteConsole,
    RollbackRefused,
    RunKey,
    RunStatus,
    ServerState,
    ServerStatus,
    SessionEnd,
    UndoReport,
)
from gui.window.approvals.elicitation_form import ElicitationPanel
from gui.window.approvals.panel import ApprovalPanel
from gui.window.approvals.text import agent_path
from gui.window.chrome.attention import Attention, titled
from gui.window.chrome.journal_check import check_journal
from gui.window.chrome.link_banner import LinkBanner
from gui.window.chrome.mode_bar import BypassBanner, ModeSelector
from gui.window.chrome.shortcuts_sheet import ShortcutsSheet, menu_shortcuts
from gui.window.chrome.status_line import HeldIndicator, RunCounts, SandboxIndicator, StoreIndicator, preview_state
from gui.window.chrome.trust_banner import TrustBanner
from gui.window.kit.remembered import fit_default_size, keep_splitter, restore_geometry, save_geometry, window_settings
from gui.window.kit.theme import theme_menu
from gui.window.panels.details import DetailsPane, undoable
from gui.window.panels.mcp import McpPanel
from gui.window.panels.rules_view import RulesView
from gui.window.panels.shells import ShellsPanel
from gui.window.review.edit_dialog import EditDialog
from gui.window.runtime.tasks import TaskSet
from gui.window.timeline.filter import FAILED, WAITING, TimelineFilter, call_column_width
from gui.window.timeline.gantt import COLUMN_WIDTH
from gui.window.timeline.model import STATUS_COLUMN, TIMELINE_COLUMN, TimelineModel
from gui.window.timeline.view import TimelineView
from gui.window.undo.changes_view import ChangesView
from gui.window.undo.dialog import UndoDialog
from gui.window.undo.flow import UndoFlow, ask_rewind
from gui.window.workspace.bridge import Bridge

SHORT_WINDOW = 800
"""Below this height a waiting request hides the tabs (its diff needs the room)."""
SUMMARY_COLUMN = 1
MIN_SUMMARY = 120


class ResizeWatch(QObject):
    """Lives on a widget and says when it was resized (it dies with the widget: no filter outlives its target).

    Signals:
        resized: the watched widget's size changed.
    """

    resized = Signal()

    def __init__(self, watched: QWidget) -> None:
        super().__init__(watched)
        watched.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        if event.type() == QEvent.Type.Resize:
            self.resized.emit()
        return False


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
        self.model = TimelineModel()
        self.bridge = Bridge(console, self.model, self.tasks)
        self.tree = TimelineView(self.model)
        self.tree.rows.expand_new = True  # agents and batches come open: a person follows the work as it comes
        self.timeline_filter = TimelineFilter(self.tree, self.model)
        self.tree.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.tree.customContextMenuRequested.connect(self._on_tree_context_menu)
        self.tree.selectionModel().currentChanged.connect(self._on_tree_current_changed)
        self.model.rowsInserted.connect(self._on_model_rows_inserted)
        self.approvals = ApprovalPanel(console, self.model.timeline)
        self.elicitations = ElicitationPanel()
        self.details = DetailsPane(self.model.timeline, records=console.call_record, tasks=self.tasks,
                                   undo_preview=console.undo_preview)
        self.shells = ShellsPanel(self.model.timeline)
        self.rules = RulesView(console, self.tasks)
        self.mcp = McpPanel()
        self.changes = ChangesView(self.model.timeline)
        self.undoing = UndoFlow(console, self.tasks, self, report=self._show_undo_report,
                                say=self.statusBar().showMessage, confirm_rewind=lambda plan: self.confirm_rewind(plan),
                                rewound=self._show_selected)
        self.tabs = QTabWidget()
        for number, (tab, name, tip) in enumerate(self._tab_list(), 1):
            self.tabs.addTab(tab, name)
            self.tabs.setTabToolTip(number - 1, f"{tip} (Ctrl+{number})")
        right = QWidget()
        self._right = QVBoxLayout(right)
        self._right.setContentsMargins(4, 4, 4, 0)
        self._right.addWidget(self.elicitations, 0)
        self._right.addWidget(self.approvals, 0)
        self._right.addWidget(self.tabs, 1)
        self.approvals.waiting_changed.connect(self._on_approvals_waiting_changed)
        self.attention = Attention(self, self.tasks)
        self.attention.action_requested.connect(self._on_attention_action_requested)
        self.split = split = QSplitter(Qt.Orientation.Horizontal)
        """The timeline on the left, the approvals and tabs on the right; where the person leaves its divider
        is where it is next time."""
        timeline = QWidget()
        stacked = QVBoxLayout(timeline)
        stacked.setContentsMargins(0, 0, 0, 0)
        stacked.setSpacing(0)
        stacked.addWidget(self.timeline_filter)
        stacked.addWidget(self.tree, 1)
        split.addWidget(timeline)
        split.addWidget(right)
        split.setSizes([790, 610])  # wide enough for the Timeline column
        keep_splitter(split, "console/split", self._settings)
        self.banner = BypassBanner()
        self.link = LinkBanner()
        self.link.attach_requested.connect(self._on_link_attach_requested)
        central = QWidget()
        column = QVBoxLayout(central)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(0)
        column.addWidget(self.banner)
        column.addWidget(self.link)
        self.trust = TrustBanner()
        column.addWidget(self.trust)
        column.addWidget(split, 1)
        self.setCentralWidget(central)
        self.mode = ModeSelector(console.mode)
        # In the menu bar's corner, not a toolbar row: a 640-pixel window needs the height.  Kept on self:
        # PySide does not take ownership through setCornerWidget.
        self._policy = policy = QWidget(self.menuBar())
        policy.setObjectName("policyCorner")
        row = QHBoxLayout(policy)
        row.setContentsMargins(0, 0, 4, 0)
        row.addWidget(QLabel("Approval mode:"))
        row.addWidget(self.mode)
        self.menuBar().setCornerWidget(policy, Qt.Corner.TopRightCorner)
        self.sandbox = SandboxIndicator()
        self._status = RunCounts()
        self.statusBar().addPermanentWidget(self._status, 1)
        self.held = HeldIndicator()
        self.statusBar().addPermanentWidget(self.held)
        self._fit_soon = QTimer(self)
        self._fit_soon.setSingleShot(True)
        self._fit_soon.setInterval(0)
        self._fit_soon.timeout.connect(self._fit_status_column)
        ResizeWatch(self.tree.viewport()).resized.connect(self._fit_soon.start)  # a narrower timeline
        self._held_timer = QTimer(self)
        self._held_timer.setInterval(1000)
        self._held_timer.timeout.connect(self._show_held)
        self.statusBar().addPermanentWidget(self.sandbox)
        self.store: StoreIndicator | None = None
        if console.state_dir is not None:  # (a console on another host keeps its store there)
            self.store = StoreIndicator(console.state_dir, self.tasks.spawn)  # its size, how far undo reaches
            self.statusBar().addPermanentWidget(self.store)
        self.sandbox.show_sandbox(console.sandbox, console.bash_settings.network, preview_state(console))
        self._show_mode(console.mode)
        self._connect()
        self._menus()
        self._accessible()

    def _verify_journal(self) -> None:
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

    def _tab_list(self) -> tuple[tuple[QWidget, str, str], ...]:
        """The right-hand tabs, in the order of their Ctrl+number keys."""
        return ((self.details, "Details", "The selected call: arguments, output, changes and undo"),
                (self.changes, "Changes", "Every file changed in this workspace, and by which calls"),
                (self.shells, "Background shells", "Shells started by Bash calls that keep running; stop them here"),
                (self.rules, "Rules", "The rules in force: add, remove, edit, dry-run"),
                (self.mcp, "MCP servers", "The MCP servers in your settings, their state, and restart"))

    def _connect(self) -> None:
        self.bridge.approval_requested.connect(self._on_bridge_approval_requested)
        self.bridge.approval_resolved.connect(self.approvals.remove)
        self.bridge.runs_changed.connect(self._on_bridge_runs_changed)
        self.bridge.rollback_refused.connect(self._on_bridge_rollback_refused)
        self.bridge.batch_applied.connect(self._update_status)
        self.bridge.resynced.connect(self._on_bridge_resynced)
        self.bridge.link_changed.connect(self._on_bridge_link_changed)
        self.bridge.shells_changed.connect(self._on_bridge_shells_changed)
        self.bridge.policy_changed.connect(self._on_bridge_policy_changed)
        self.bridge.external_changes.connect(self._on_bridge_external_changes)
        self.bridge.mcp_changed.connect(self._on_bridge_mcp_changed)
        self.bridge.elicitation_requested.connect(self._on_bridge_elicitation_requested)
        self.bridge.elicitation_resolved.connect(self.elicitations.remove)
        self.elicitations.answered.connect(self._on_elicitations_answered)
        self.mcp.restart_requested.connect(self._on_mcp_restart_requested)
        self.approvals.edit_requested.connect(self._on_approvals_edit_requested)
        self.approvals.diff.focus_changed.connect(self._on_review_focus_changed)
        self.approvals.answered.connect(self._on_approvals_answered)
        self.details.undo_requested.connect(self._on_details_undo_requested)
        self.details.redo_requested.connect(self._on_details_redo_requested)
        self.changes.undo_requested.connect(self._on_details_undo_requested)
        self.changes.redo_requested.connect(self._on_details_redo_requested)
        self.details.full_output_requested.connect(self._on_details_full_output_requested)
        self.shells.stop_requested.connect(self._on_shells_stop_requested)
        self.shells.call_chosen.connect(self._on_shells_call_chosen)
        self.changes.call_chosen.connect(self._on_changes_call_chosen)
        self.mode.mode_chosen.connect(self.console.set_mode)
        self.banner.leave_requested.connect(self._on_banner_leave_requested)
        self.trust.trust_requested.connect(self._on_trust_requested)

    def _menus(self) -> None:
        file_menu = self.menuBar().addMenu("&File")
        verify = QAction("&Verify the journal", self)
        verify.setToolTip("Check that nothing in this workspace's journal was changed outside Belay (belay verify)")
        verify.triggered.connect(self._verify_journal)
        file_menu.addAction(verify)
        quit_action = QAction("&Quit", self)
        quit_action.setShortcut(QKeySequence.StandardKey.Quit)
        quit_action.triggered.connect(self.close)
        file_menu.addAction(quit_action)
        view = self.menuBar().addMenu("&View")
        expand = QAction("&Expand all", self)
        expand.setShortcut("Ctrl+Shift+X")
        expand.triggered.connect(self.tree.expandAll)
        view.addAction(expand)
        for text, keys, slot in (("&Find in the timeline", "Ctrl+F", self.timeline_filter.focus_text),
                                 ("&Next waiting call", "F8", self.next_waiting),
                                 ("Next &failed call", "F9", self.next_failure)):
            action = QAction(text, self)
            action.setShortcut(keys)
            action.triggered.connect(slot)
            view.addAction(action)
        for number, (tab, name, tip) in enumerate(self._tab_list(), 1):
            action = QAction(name, self)
            action.setShortcut(f"Ctrl+{number}")
            action.setToolTip(tip)
            action.setData(tab)
            action.triggered.connect(self._on_tab_action_triggered)
            view.addAction(action)
        view.addMenu(theme_menu(self))
        mode = QAction("Approval &mode", self)
        mode.setShortcut("Ctrl+M")
        mode.triggered.connect(self._on_mode_action_triggered)
        view.addAction(mode)
        waiting = QAction("Go to the &waiting requests", self)
        waiting.setShortcut("Ctrl+Shift+A")
        waiting.triggered.connect(self.focus_approvals)
        view.addAction(waiting)
        call = self.menuBar().addMenu("&Call")
        undo = QAction("&Undo selected call", self)
        undo.setShortcut("Ctrl+Z")
        undo.triggered.connect(self._undo_selected)
        call.addAction(undo)
        redo = QAction("&Redo selected call", self)
        redo.setShortcut("Ctrl+Shift+Z")
        redo.triggered.connect(self._redo_selected)
        call.addAction(redo)
        help_menu = self.menuBar().addMenu("&Help")
        keys = QAction("&Keyboard shortcuts", self)
        keys.setShortcut("F1")
        keys.triggered.connect(self.show_shortcuts)
        help_menu.addAction(keys)
        question = QShortcut(QKeySequence("?"), self)
        question.activated.connect(self._on_question_activated)
        for view in (self.tree, self.approvals.inbox):
            view.installEventFilter(self)

    def start(self) -> None:
        """Attach to the console: snapshot, then live events."""
        self.bridge.start()
        self.approvals.set_timeline(self.model.timeline)
        self.details.set_timeline(self.model.timeline)
        self.shells.set_timeline(self.model.timeline)
        self.changes.set_timeline(self.model.timeline)
        self.rules.set_rules(self.console.rules(), self.console.settings_problems)
        self.trust.show_held_back(self.console.held_back())
        self.mcp.show_servers(self.console.mcp_servers())
        self._show_mode(self.console.mode)
        self.sandbox.show_sandbox(self.console.sandbox, self.console.bash_settings.network, preview_state(self.console))
        if self.console.endpoint is not None:
            AttachServer(self.console).install(self.console.endpoint)  # `belay attach` may follow it from a terminal
            serving = QLabel(" ⇄ Claude Code hooks, mcp-serve ")
            serving.setToolTip(f"Outside agents reach this window through {self.console.endpoint.path} "
                               "(Claude Code with `belay hooks install`, MCP clients with `belay mcp-serve`); "
                               "`belay attach` follows it from a terminal")
            self.statusBar().addPermanentWidget(serving)
        if isinstance(self.console, RemoteConsole):
            self.console.on_error = self._show_error  # what was sent without waiting and failed there
            there = QLabel(f" ⇄ {self.console.reach.host or 'attached'} ")
            there.setObjectName("remoteHost")
            there.setToolTip(f"This workspace's console runs at {self.console.where}: its agents' calls wait, "
                             "are undone and journaled there; this window follows it through ssh")
            self.statusBar().addPermanentWidget(there)
        self._show_shell_count()
        self._held_timer.start()
        for request in self.console.pending_approvals():
            self.approvals.add(request)
        self.elicitations.set_pending(self.console.elicitations.pending())
        self.tree.expandAll()
        self._resize_columns()
        self._update_status()
        if self.console.recovery_notes:
            self.statusBar().showMessage(" ".join(self.console.recovery_notes), 60_000)
            self.details.notice.setText("<br>".join(self.console.recovery_notes))

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802
        super().resizeEvent(event)
        self._fold_tabs()

    def _fold_tabs(self) -> None:
        """The tabs step aside in focus mode, and on a short window (a 1024x640 laptop) while a call waits:
        its diff needs the room; they come back when nothing waits."""
        fold = bool(self.approvals.queue()) and self.height() < SHORT_WINDOW
        self.tabs.setVisible(not (fold or self.approvals.diff.focus_button.isChecked()))

    def _fit_status_column(self) -> None:
        """Narrow the Summary column (not below `MIN_SUMMARY`) so the Status column is seen without scrolling."""
        status_end = self.tree.header().sectionPosition(STATUS_COLUMN) + self.tree.columnWidth(STATUS_COLUMN)
        over = status_end - self.tree.viewport().width()
        summary = self.tree.columnWidth(SUMMARY_COLUMN)
        if over > 0 and summary > MIN_SUMMARY:
            self.tree.setColumnWidth(SUMMARY_COLUMN, max(MIN_SUMMARY, summary - over))

    def _resize_columns(self) -> None:
        for column, width in enumerate((150, 215, 190, 56, 64)):  # Summary: room for "201 calls · 1 waiting · 9 failed"
            self.tree.setColumnWidth(column, width)
        self.tree.setColumnWidth(TIMELINE_COLUMN, COLUMN_WIDTH)
        self._fit_call_column()

    def _fit_call_column(self) -> None:
        """Wide enough for the deepest agent's name; never narrower than the person made it."""
        self.tree.setColumnWidth(0, max(self.tree.columnWidth(0), call_column_width(self.tree, self.model.timeline)))
        self._fit_soon.start()

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
        elif action == "approve" and request.impact.level == "low":
            self.console.approve(call_id, via="notification")
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

    # -- slots ---------------------------------------------------------------------

    def _on_model_rows_inserted(self, parent: QModelIndex, first: int, last: int) -> None:
        """New agents widen the Call column to their names.  (They come expanded, as batches do: the view's
        `expand_new`; an agent a person closed stays closed as its calls keep coming.)"""
        keys = self.model.timeline.children(self.model.key_of(parent))[first:last + 1]
        if any(type(key) is AgentKey for key in keys):
            self._fit_call_column()  # once for the lot: it measures every agent's name

    def _on_bridge_approval_requested(self, request: ApprovalRequested) -> None:
        self.approvals.add(request)
        self.attention.requested(request, agent_path(self.model.timeline, request.agent_id))

    def _on_changes_call_chosen(self, call_id: str) -> None:
        self.select_call(call_id)
        self.tabs.setCurrentWidget(self.details)

    def _on_shells_call_chosen(self, call_id: str) -> None:
        self._on_changes_call_chosen(call_id)

    def _on_bridge_runs_changed(self, call_ids: list[str]) -> None:
        """The runs a batch of events changed (thousands a second under a flood): a few look-ups each."""
        runs, waiting = self.model.timeline.runs, {r.call_id for r in self.approvals.queue()}
        changed_files = False
        for call_id in call_ids:
            run = runs.get(call_id)
            if run is None or not run.status.final:
                continue
            if call_id in waiting:
                self.approvals.remove(call_id)  # cancelled, or its agent went away, while it waited: nothing to answer
            changed_files = changed_files or bool(run.changes or run.git_changes)
        if changed_files:
            self.changes.refresh_soon()
        shown = self.details.key
        if isinstance(shown, RunKey) and shown.call_id in call_ids:
            self._show_selected()

    def _on_bridge_resynced(self) -> None:
        self.approvals.set_timeline(self.model.timeline)
        self.details.set_timeline(self.model.timeline)
        self.shells.set_timeline(self.model.timeline)
        self.changes.set_timeline(self.model.timeline)
        self.rules.set_rules(self.console.rules(), self.console.settings_problems)  # announcements may be lost
        self.trust.show_held_back(self.console.held_back())
        self._show_mode(self.console.mode)
        self._show_shell_count()
        for request in self.console.pending_approvals():
            self.approvals.add(request)
        self.elicitations.set_pending(self.console.elicitations.pending())

    def _on_bridge_link_changed(self, event: LinkChanged) -> None:
        """The link to a console on another host dropped, came back or was given up on.  Back, its journal is the
        truth: the timeline is read again, and what no longer waits leaves the approvals."""
        self.link.show_link(event, self.console.where)
        self.approvals.setEnabled(event.state == "attached")  # nothing can be answered there meanwhile
        if event.state == "attached":
            self.model.reset(self.console.timeline)
            self.tree.expandAll()
            waiting = {request.call_id for request in self.console.pending_approvals()}
            for request in self.approvals.queue():
                if request.call_id not in waiting:
                    self.approvals.remove(request.call_id)
            self._on_bridge_resynced()
            self.mcp.show_servers(self.console.mcp_servers())
            self._update_status()
            self._show_selected()
        self.statusBar().showMessage(self.link.text(), 15_000)

    def _on_link_attach_requested(self) -> None:
        if isinstance(self.console, RemoteConsole):
            self.tasks.spawn(self.console.reattach(), f"attach again to {self.console.where}")

    def _on_bridge_external_changes(self, event: ExternalChangesRecorded) -> None:
        self.changes.refresh_soon()
        n = len(event.changes)
        self.statusBar().showMessage(f"{n} file{'s' if n != 1 else ''} changed outside Belay ({event.note}); "
                                     "recorded as yours, never undone by Belay.", 10_000)

    def _on_bridge_mcp_changed(self, status: ServerStatus) -> None:
        self.mcp.show_servers(self.console.mcp_servers())
        if status.state == ServerState.FAILED:
            self.statusBar().showMessage(f"MCP server {status.name} {status.describe()}", 15_000)

    def _on_bridge_elicitation_requested(self, request: ElicitationRequested) -> None:
        self.elicitations.add(request)
        if self.elicitations.form(request.elicitation_id) is not None and not self.isActiveWindow() \
                and not self.attention.quiet:
            QApplication.alert(self.window())

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

    async def ask_prompt(self) -> str | None:
        """What to ask Claude, from a box that does not block the shared loop (None: cancelled)."""
        dialog = QInputDialog(self)
        dialog.setWindowTitle("Start Claude Code")
        dialog.setLabelText(f"What should Claude do in {self.console.workspace.root}?")
        dialog.setOption(QInputDialog.InputDialogOption.UsePlainTextEditForTextInput)
        done: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        dialog.finished.connect(lambda result: done.done() or done.set_result(result))
        dialog.open()
        try:
            if await done != QInputDialog.DialogCode.Accepted:
                return None
            return dialog.textValue().strip() or None
        finally:
            dialog.deleteLater()

    def session_ended(self, task: asyncio.Task[SessionEnd]) -> None:
        """A launched Claude session finished (or failed to run): say so."""
        if task.cancelled():
            return
        error = task.exception()
        message = f"Claude could not run: {error}" if error else f"Claude finished: {task.result().summary}"
        self.statusBar().showMessage(message, 60_000)

    def _on_bridge_shells_changed(self, shell_id: str) -> None:
        self.shells.refresh(shell_id)
        self._show_shell_count()

    def _show_shell_count(self) -> None:
        running = self.shells.running_count()
        self.tabs.setTabText(self.tabs.indexOf(self.shells),
                             f"Background shells ({running} running)" if running else "Background shells")

    def _on_bridge_policy_changed(self, event: PolicyChanged) -> None:
        self.rules.set_rules(event.rules, event.problems)
        self.trust.show_held_back(event.held_back)
        self._show_mode(event.mode)

    def _show_mode(self, mode: str) -> None:
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

    def _on_tab_action_triggered(self) -> None:
        action = self.sender()
        if isinstance(action, QAction):
            self.tabs.setCurrentWidget(action.data())

    def _on_mode_action_triggered(self) -> None:
        self.mode.setFocus()
        self.mode.showPopup()

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

    def _on_bridge_rollback_refused(self, event: RollbackRefused) -> None:
        self.statusBar().showMessage(f"Undo refused: {event.message}", 10_000)

    def _on_approvals_edit_requested(self, request: ApprovalRequested) -> None:
        dialog = EditDialog(request, self, rejected=self.approvals.diff.rejected_hunks())  # starts from the review
        dialog.approved_with_edits.connect(
            lambda call_id, edits: self.console.approve(call_id, edited=edits, via="window"))
        dialog.finished.connect(dialog.deleteLater)
        dialog.open()

    def _on_tree_current_changed(self, current: QModelIndex, previous: QModelIndex) -> None:
        self._show_selected()

    def _show_selected(self) -> None:
        key = self.tree.current_key()
        self.details.show_key(key)
        if isinstance(key, RunKey):
            run = self.model.timeline.runs[key.call_id]
            if run.status == RunStatus.BLOCKED_ON_USER:
                self.approvals.focus_request(run.call_id)
            if run.changes:
                self.tasks.spawn(self._load_diffs(run.call_id), f"diffs of {run.call_id}")

    async def _load_diffs(self, call_id: str) -> None:
        diffs = await self.console.diffs_for(call_id)
        self.details.show_diffs(call_id, diffs)

    def _on_tree_context_menu(self, point: QPoint) -> None:
        key = self.tree.key_at(point)
        if isinstance(key, AgentKey):
            self._agent_menu(key.agent_id, point)
            return
        if not isinstance(key, RunKey):
            return
        run = self.model.timeline.runs[key.call_id]
        menu = QMenu(self)
        undo = menu.addAction("Undo this call")
        undo.setEnabled(undoable(run))
        undo.triggered.connect(lambda: self.undo(run.call_id))
        if run.undone_paths or run.git_undone:
            menu.addAction("Redo this call").triggered.connect(lambda: self.redo(run.call_id))
        rewind = menu.addAction("Rewind to here…")
        rewind.setToolTip("Undo every later call that changed files, newest first")
        rewind.setData(run.call_id)
        rewind.triggered.connect(self._on_rewind_action_triggered)
        if run.status == RunStatus.RUNNING or run.status == RunStatus.BLOCKED_ON_USER:
            menu.addAction("Cancel this call").triggered.connect(lambda: self.console.cancel(run.call_id))
        menu.addAction("Copy call id").triggered.connect(
            lambda: QGuiApplication.clipboard().setText(run.call_id))
        menu.popup(self.tree.viewport().mapToGlobal(point))

    def _agent_menu(self, agent_id: str, point: QPoint) -> None:
        """A Claude session Belay launched can be interrupted (it stops what it is doing) or stopped."""
        session = self.console.controls(agent_id)
        if session is None:
            return
        menu = QMenu(self)
        menu.addAction("Interrupt Claude (stop this turn)").triggered.connect(session.interrupt)
        menu.addAction("Stop the session").triggered.connect(session.stop)
        menu.popup(self.tree.viewport().mapToGlobal(point))

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

    def _on_rewind_action_triggered(self) -> None:
        action = self.sender()
        if isinstance(action, QAction):
            self.rewind(str(action.data()))

    def rewind(self, call_id: str) -> None:
        """Preview, confirm, then undo every later call that changed files."""
        self.undoing.rewind(call_id)

    async def confirm_rewind(self, plan: list[CallRecord]) -> bool:
        """Shows what a rewind would undo and asks; tests replace it."""
        return await ask_rewind(plan, self)

    def _undo_selected(self) -> None:
        key = self.tree.current_key()
        if isinstance(key, RunKey) and undoable(self.model.timeline.runs[key.call_id]):
            self.undo(key.call_id)

    def _redo_selected(self) -> None:
        key = self.tree.current_key()
        run = self.model.timeline.runs.get(key.call_id) if isinstance(key, RunKey) else None
        if run is not None and (run.undone_paths or run.git_undone):
            self.redo(run.call_id)

    def _on_details_undo_requested(self, call_id: str, paths: list[str]) -> None:
        self.undo(call_id, paths or None)

    def _on_details_redo_requested(self, call_id: str, paths: list[str]) -> None:
        self.redo(call_id, paths or None)

    def undo(self, call_id: str, paths: list[str] | None = None) -> None:
        """Undo a call (or some of its files): merged where later edits allow, else the person decides."""
        self.undoing.undo(call_id, paths)

    def redo(self, call_id: str, paths: list[str] | None = None) -> None:
        self.undoing.redo(call_id, paths)

    @property
    def undo_dialog(self) -> UndoDialog | None:
        """The last undo dialog opened (the person resolving conflicting files), for tests."""
        return self.undoing.dialog

    def _show_undo_report(self, report: UndoReport) -> None:
        self.details.show_undo_report(report)
        verb = "Redo" if report.redo else "Undo"
        self.statusBar().showMessage(report.message if report.ok else f"{verb} refused: {report.message}", 10_000)
        if report.ok and self.details.key == RunKey(report.call_id):
            self._show_selected()

    def _on_approvals_answered(self, text: str) -> None:
        self.statusBar().showMessage(text, 8_000)

    def focus_approvals(self) -> None:
        """To the waiting requests: the inbox when several wait, else the panel (its keys act only there)."""
        target = self.approvals.inbox if self.approvals.inbox.isVisible() else self.approvals
        target.setFocus(Qt.FocusReason.ShortcutFocusReason)

    def shortcuts_sheet(self) -> ShortcutsSheet:
        return ShortcutsSheet([*menu_shortcuts(self.menuBar()),
                               ("Waiting requests (while they have the focus)", self.approvals.shortcuts),
                               ("A pending write's diff (while it has the focus)", self.approvals.diff.shortcuts)],
                              self)

    def show_shortcuts(self) -> None:
        sheet = self.shortcuts_sheet()
        sheet.finished.connect(sheet.deleteLater)
        sheet.open()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        """? in the timeline opens the shortcuts sheet (an item view would take it for type-ahead search)."""
        if event.type() == QEvent.Type.KeyPress and isinstance(event, QKeyEvent) and event.text() == "?":
            self.show_shortcuts()
            return True
        return super().eventFilter(watched, event)

    def _on_question_activated(self) -> None:
        """? opens the sheet, except in a text field, where it is the character typed."""
        focus = QApplication.focusWidget()
        if isinstance(focus, QLineEdit):
            focus.insert("?")
        elif isinstance(focus, QPlainTextEdit | QTextEdit) and not focus.isReadOnly():
            focus.insertPlainText("?")
        else:
            self.show_shortcuts()

    def _show_held(self) -> None:
        self.held.show_held(self.console.workspace_held(), asyncio.get_running_loop().time(), self.model.timeline)

    def _update_status(self) -> None:
        self._status.show_counts(self.model.timeline, self.console.cache_stats())

    def _show_error(self, message: str) -> None:
        self.statusBar().showMessage(message, 15_000)

    def status_text(self) -> str:
        return self._status.text()

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 - Qt override
        super().showEvent(event)
        if self.isWindow():
            self.attention.show_tray()  # a workspace page inside the hub window leaves the tray to it

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 - Qt override
        if self.isWindow():  # a page of the hub window leaves its size to the hub
            save_geometry(self, "console/geometry", self._settings)
        self._held_timer.stop()
        self.bridge.stop()
        super().closeEvent(event)

