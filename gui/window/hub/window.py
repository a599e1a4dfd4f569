"""`belay watch`: one window for every workspace whose agents Belay supervises.

A sidebar lists the workspaces (each with how many calls wait and how many agents run) and, under
them, every request waiting for the person in any of them; the rest of the window is the chosen
workspace's own console window (gui/window/workspace/window.py), one per workspace, each with its own
timeline, approvals, rules, changes and undo.  When an agent in a project Belay has not seen asks, a bar
across the top asks once whether to supervise it there (core/hub.py remembers the answer).

A workspace on another host joins the sidebar through Workspace › Connect to host… (`belay watch
ssh://host/path`): its console runs there (core.remote.console), its page is the same window.

Keys: Ctrl+PgDown / Ctrl+PgUp move between workspaces, Ctrl+Shift+I goes to the oldest waiting request,
Ctrl+O opens a workspace, Ctrl+Shift+O connects to one on another host.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt, Signal
from PySide6.QtGui import QCloseEvent, QShowEvent
from PySide6.QtWidgets import (
    QApplication,
    QFileDialog,
    QInputDialog,
    QLabel,
    QListView,
    QMainWindow,
    QMenu,
    QMessageBox,
    QSplitter,
    QStackedWidget,
    QSystemTrayIcon,
    QVBoxLayout,
    QWidget,
)

from core import Hub
from gui.window.chrome import actions
from gui.window.chrome.attention import Attention, titled
from gui.window.hub.models import WaitingModel, WaitingRow, WorkspaceRow, WorkspacesModel
from gui.window.hub.supervise_bar import SuperviseBar
from gui.window.kit import theme
from gui.window.kit.remembered import fit_default_size, keep_splitter, restore_geometry, save_geometry, window_settings
from gui.window.runtime.tasks import TaskSet

if TYPE_CHECKING:  # a workspace's page (and the core's models) load when one opens: the hub paints first
    from core import ApprovalRequested, ConsoleSurface, RemoteConsole
    from gui.window.workspace.window import MainWindow

Index = QModelIndex | QPersistentModelIndex
WORKSPACE = "&Workspace"
SIDEBAR_MIN = 160
"""The sidebar's narrowest, in pixels: a waiting entry reads on two or three lines, and with a workspace's page
beside it (its toolbars fold onto two lines where narrow) the window still fits 1024 pixels."""
SIDEBAR_SHARE = 5
"""The sidebar starts at a fifth of the window's width (at least SIDEBAR_MIN), until the person moves it."""
EMPTY_TEXT = ("<h3>No workspace yet</h3><p>Belay is watching for agents. A call from any project whose agent has "
              "Belay's hooks (<code>belay hooks install --user</code>) asks here whether to supervise that project; "
              "<code>belay watch --workspace DIR</code> opens one at once.</p>"
              "<p>Or open a folder now: <b>Workspace › Open…</b> (Ctrl+O).</p>")


class HubWindow(QMainWindow):
    """The window of `belay watch`: every supervised workspace, and everything waiting in any of them."""

    workspace_added = Signal(object)
    """A workspace's page (MainWindow) was added."""

    def __init__(self, hub: Hub, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.hub = hub
        self.tasks = TaskSet(on_error=lambda message: self.statusBar().showMessage(message, 15_000))
        self._settings = window_settings()
        fit_default_size(self, 1400, 860)
        restore_geometry(self, "hub/geometry", self._settings)
        self.workspaces = WorkspacesModel()
        self.inbox = WaitingModel()
        self.workspace_list = QListView()
        self.workspace_list.setObjectName("workspaces")
        self.workspace_list.setModel(self.workspaces)
        self.workspace_list.setAccessibleName("Workspaces")
        self.workspace_list.setSpacing(3)
        self.workspace_list.setWordWrap(True)  # "2 waiting · 2 agents running" wraps in a narrow sidebar, not cut
        self.workspace_list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.workspace_list.selectionModel().currentChanged.connect(self._on_workspace_chosen)
        self.inbox_list = QListView()
        self.inbox_list.setObjectName("inbox")
        self.inbox_list.setModel(self.inbox)
        self.inbox_list.setAccessibleName("Waiting for you, in every workspace")
        self.inbox_list.setWordWrap(False)  # each entry two lines, whatever the sidebar's width (`_on_page_request`)
        self.inbox_list.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.inbox_list.setUniformItemSizes(True)
        self.inbox_list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.inbox_list.activated.connect(self._on_inbox_activated)
        self.inbox_list.clicked.connect(self._on_inbox_activated)
        self.inbox_label = QLabel()
        side = QWidget()
        side.setMinimumWidth(SIDEBAR_MIN)  # its labels wrap and its lists elide: a workspace's page needs the room
        self.inbox_label.setWordWrap(True)
        column = QVBoxLayout(side)
        column.setContentsMargins(6, 6, 0, 6)
        column.addWidget(QLabel("<b>Workspaces</b>"))
        column.addWidget(self.workspace_list, 2)
        column.addWidget(self.inbox_label)
        column.addWidget(self.inbox_list, 1)
        self.empty = QLabel(EMPTY_TEXT)
        self.empty.setObjectName("emptyHub")
        self.empty.setWordWrap(True)
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty.setMargin(40)
        self.pages = QStackedWidget()
        self.pages.addWidget(self.empty)
        self.bar = SuperviseBar()
        right = QWidget()
        stack = QVBoxLayout(right)
        stack.setContentsMargins(0, 0, 0, 0)
        stack.setSpacing(0)
        stack.addWidget(self.bar)
        stack.addWidget(self.pages, 1)
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(side)
        split.addWidget(right)
        split.setStretchFactor(1, 1)
        side_width = max(SIDEBAR_MIN, self.width() // SIDEBAR_SHARE)
        split.setSizes([side_width, self.width() - side_width])
        keep_splitter(split, "hub/split", self._settings)
        self.setCentralWidget(split)
        self.attention = Attention(self, self.tasks, settings=self._settings)  # the tray; pages notify
        self.attention.quiet_action.toggled.connect(self._on_attention_settings_changed)
        self.attention.sound_action.toggled.connect(self._on_attention_settings_changed)
        self.attention.quit_requested.connect(self.quit)
        self._quitting = False
        self._remotes: list[RemoteConsole] = []
        """Consoles on other hosts this window follows (the hub has this machine's)."""
        hub.ask = self.bar.ask  # type: ignore[assignment]
        hub.on_opened(self._add_page)
        self._menus()
        self._update_title()
        theme.follow(self.inbox_label, self._update_title)  # "(nothing)" is in the theme's muted colour

    def _menus(self) -> None:
        self.commands: list[actions.Row] = [
            actions.WindowCommand(WORKSPACE, "&Open…", self._on_open_action_triggered, "Ctrl+O"),
            actions.WindowCommand(WORKSPACE, "&Connect to host…", self._on_connect_action_triggered, "Ctrl+Shift+O",
                            "Follow a workspace's console on another host through your own ssh "
                            "(ssh://host/path; `belay serve` is started there if none runs)"),
            actions.WindowCommand(WORKSPACE, "&Next workspace", lambda: self._step(1), "Ctrl+PgDown"),
            actions.WindowCommand(WORKSPACE, "&Previous workspace", lambda: self._step(-1), "Ctrl+PgUp"),
            actions.WindowCommand(WORKSPACE, "Oldest &waiting request", self.show_oldest_waiting, "Ctrl+Shift+I"),
            actions.Submenu("&View", theme.theme_menu),  # before any workspace is open, too
        ]
        """The hub's menus and keys, one table (gui.window.chrome.actions)."""
        actions.install(self, self.commands)
        menu = self.menuBar().actions()[0].menu()
        assert isinstance(menu, QMenu)
        self._workspace_menu = menu
        """Put at the front of each workspace page's menu bar: the window has one menu bar, the page's."""

    # -- pages -----------------------------------------------------------------

    def _add_page(self, console: ConsoleSurface) -> MainWindow:
        from core import RemoteConsole
        from gui.window.workspace.window import MainWindow
        page = MainWindow(console)
        page.setWindowFlags(Qt.WindowType.Widget)
        bar = page.menuBar()
        bar.insertMenu(bar.actions()[0], self._workspace_menu)  # one menu bar: Workspace, then the page's own
        self.menuBar().setVisible(False)  # its View (the theme) is in the page's View too
        self.pages.addWidget(page)
        page.start()
        host = (console.reach.host or "") if isinstance(console, RemoteConsole) else None
        row = self.workspaces.add(WorkspaceRow(console.workspace.root, page, host=host, where=console.where))
        page.bridge.approval_requested.connect(lambda request, page=page: self._on_page_request(page, request))
        page.bridge.approval_resolved.connect(self._on_page_resolved)
        page.approvals.waiting_changed.connect(lambda _n, page=page: self._count(page))
        page.bridge.batch_applied.connect(lambda page=page: self._count(page))
        page.attention.set_quiet(self.attention.quiet)
        page.attention.set_sound(self.attention.sound)
        page.attention.action_requested.connect(lambda _id, action, page=page: self._on_page_attention(page, action))
        for request in page.approvals.queue():
            self._on_page_request(page, request)
        if self.pages.currentWidget() is self.empty:
            self.workspace_list.setCurrentIndex(self.workspaces.index(row, 0))
        self._count(page)
        self.workspace_added.emit(page)
        return page

    def page_of(self, root: Path) -> MainWindow | None:
        """This machine's workspace's page."""
        return next((r.page for r in self.workspaces.rows if r.root == root and r.host is None), None)

    def _on_workspace_chosen(self, current: QModelIndex, previous: QModelIndex) -> None:
        if current.isValid():
            self.pages.setCurrentWidget(self.workspaces.rows[current.row()].page)
            self._update_title()

    def _step(self, delta: int) -> None:
        count = len(self.workspaces.rows)
        if count:
            row = (self.workspace_list.currentIndex().row() + delta) % count
            self.workspace_list.setCurrentIndex(self.workspaces.index(row, 0))

    def show_page(self, page: MainWindow) -> None:
        for number, row in enumerate(self.workspaces.rows):
            if row.page is page:
                self.workspace_list.setCurrentIndex(self.workspaces.index(number, 0))

    # -- waiting requests --------------------------------------------------------

    def _on_page_request(self, page: MainWindow, request: ApprovalRequested) -> None:
        from gui.window.approvals.text import agent_path
        who = agent_path(page.model.timeline, request.agent_id)
        name = next((row.name for row in self.workspaces.rows if row.page is page), page.console.workspace.root.name)
        # Two lines, each cut at the sidebar's edge (the tooltip has it whole): who and what, then its summary.
        self.inbox.add(page, request, f"{name} · {who}: {request.tool}\n{request.summary}")
        self._count(page)

    def _on_page_resolved(self, call_id: str) -> None:
        self.inbox.remove(call_id)
        self._update_title()

    def _on_inbox_activated(self, index: QModelIndex) -> None:
        if index.isValid():
            self._go_to(self.inbox.rows[index.row()])

    def show_oldest_waiting(self) -> None:
        if self.inbox.rows:
            self._go_to(self.inbox.rows[0])

    def _go_to(self, waiting: WaitingRow) -> None:
        self.show_page(waiting.page)
        waiting.page.approvals.focus_request(waiting.request.call_id)
        waiting.page.select_call(waiting.request.call_id)

    def _count(self, page: MainWindow) -> None:
        from core import AgentStatus
        running = sum(1 for a in page.model.timeline.agents.values() if a.status is AgentStatus.RUNNING)
        self.workspaces.set_counts(page, len(page.approvals.queue()), running)
        self._update_title()

    def waiting(self) -> int:
        return len(self.inbox.rows)

    def _update_title(self) -> None:
        waiting = self.waiting()
        self.inbox_label.setText(f"<b>Waiting for you</b> ({waiting})" if waiting else
                                 f"<b>Waiting for you</b> <span style='color:{theme.colour('muted')}'>(nothing)</span>")
        current = self.pages.currentWidget()
        where = next((row.name for row in self.workspaces.rows if row.page is current), "every workspace")
        count = len(self.workspaces.rows)
        self.setWindowTitle(titled(f"Belay — {where}" + (f" · {count} workspaces" if count > 1 else ""), waiting))
        self.attention.set_waiting(waiting)

    # -- attention: the tray, and closing to it -------------------------------------

    def _on_page_attention(self, page: MainWindow, action: str) -> None:
        """A notification's Show: the page comes forward (the page itself raises the window and the call)."""
        if action == "show":
            self.show_page(page)

    def _on_attention_settings_changed(self) -> None:
        for row in self.workspaces.rows:
            row.page.attention.set_quiet(self.attention.quiet)
            row.page.attention.set_sound(self.attention.sound)

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 - Qt override
        super().showEvent(event)
        self.attention.show_tray()

    def agents_attached(self) -> int:
        """Agents running in any workspace now (what closing the window would leave unsupervised)."""
        from core import AgentStatus
        return sum(1 for row in self.workspaces.rows for agent in row.page.model.timeline.agents.values()
                   if agent.status is AgentStatus.RUNNING)

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 - Qt override
        """With agents still attached and a tray to go to, closing keeps Belay there (asked the first time)."""
        save_geometry(self, "hub/geometry", self._settings)
        if self._quitting or self.attention.tray is None or not self.agents_attached():
            super().closeEvent(event)
            return
        event.ignore()
        choice = str(self.attention.settings_value("attention/close") or "")
        if choice == "tray":
            self.to_tray()
        elif choice == "quit":
            self.quit()
        else:
            self._ask_close()

    def _ask_close(self) -> None:
        box = QMessageBox(QMessageBox.Icon.Question, "Keep Belay running?",
                          f"{self.agents_attached()} agent(s) are still attached. Keep Belay in the tray, where it "
                          "notifies you when one waits, or quit (calls still waiting are denied)?", parent=self)
        keep = box.addButton("Keep in tray", QMessageBox.ButtonRole.AcceptRole)
        box.addButton("Quit", QMessageBox.ButtonRole.DestructiveRole)
        box.setDefaultButton(keep)
        box.finished.connect(lambda _r: self._on_close_answered(box.clickedButton() is keep))
        box.open()
        self.close_question = box

    def _on_close_answered(self, keep: bool) -> None:
        self.attention.set_settings_value("attention/close", "tray" if keep else "quit")
        self.close_question.deleteLater()
        if keep:
            self.to_tray()
        else:
            self.quit()

    def to_tray(self) -> None:
        self.hide()
        if self.attention.tray is not None:
            self.attention.tray.showMessage("Belay is still supervising", "It notifies you when an agent waits; "
                                            "the tray icon brings the window back.",
                                            QSystemTrayIcon.MessageIcon.Information, 5_000)

    def quit(self) -> None:
        """Close for good.  From the tray the window is hidden, and closing a hidden window does not emit
        lastWindowClosed (what the app waits for), so it is emitted here."""
        self._quitting = True
        hidden = not self.isVisible()
        self.close()
        app = QApplication.instance()
        if hidden and isinstance(app, QApplication):
            app.lastWindowClosed.emit()

    # -- opening and closing -------------------------------------------------------

    def _on_open_action_triggered(self) -> None:
        dialog = QFileDialog(self, "Supervise a folder")
        dialog.setFileMode(QFileDialog.FileMode.Directory)
        dialog.setOption(QFileDialog.Option.ShowDirsOnly, True)
        dialog.fileSelected.connect(lambda path: self.tasks.spawn(self.open_workspace(Path(path)), "opening"))
        dialog.open()

    async def open_workspace(self, directory: Path) -> MainWindow | None:
        from core import BelayError
        try:
            console = await self.hub.open(directory)
        except BelayError as e:
            self.statusBar().showMessage(f"{directory}: {e.info.message}", 30_000)
            return None
        if console is None:
            self.statusBar().showMessage(f"Another Belay window already supervises {directory}.", 30_000)
            return None
        page = self.page_of(console.workspace.root)
        if page is not None:
            self.show_page(page)
        return page

    def _on_connect_action_triggered(self) -> None:
        dialog = QInputDialog(self)
        dialog.setWindowTitle("Connect to host")
        dialog.setLabelText("The workspace on another host, as ssh://[user@]host[:port]/path (your ssh config, keys "
                            "and jump hosts are used; Belay is started there if it does not run):")
        dialog.setTextValue("ssh://")
        dialog.textValueSelected.connect(lambda text: self.tasks.spawn(self._connect_said(text.strip()),
                                                                       f"connect to {text.strip()}"))
        dialog.open()
        self.connect_dialog = dialog

    async def _connect_said(self, target: str) -> None:
        from core import BelayError
        self.statusBar().showMessage(f"Connecting to {target}…")
        try:
            page = await self.connect_host(target)
        except BelayError as e:
            self.statusBar().showMessage(f"Could not connect to {target}: {e.info.message}", 30_000)
            return
        self.statusBar().showMessage(f"Attached to {target}.", 10_000)
        self.show_page(page)

    async def connect_host(self, target: str, *, ssh: str = "ssh", remote_belay: str = "belay") -> MainWindow:
        """Follow the console of the workspace at `target` (ssh://host/path, started there if need be) beside the
        local ones; the page it already has if it was connected to.  Raises RemoteError saying why it cannot be
        reached."""
        import shlex

        from core import RemoteConsole
        known = next((row.page for row in self.workspaces.rows if row.where == target and row.host is not None), None)
        if known is not None:
            return known
        console = await RemoteConsole.reached(target, ssh=shlex.split(ssh), remote_belay=remote_belay)
        self._remotes.append(console)
        return self._add_page(console)

    async def aclose(self) -> None:
        """Stop every page's work and close every console (calls still waiting are denied), then the window."""
        self.bar.withdraw_all()
        pages = [row.page for row in self.workspaces.rows]
        for attention in (self.attention, *(page.attention for page in pages)):
            await attention.aclose()  # their D-Bus connections and listeners
        await self.tasks.aclose()
        for page in pages:
            await page.tasks.aclose()
        for remote in self._remotes:
            await remote.close()  # detached: those consoles run on, on their hosts
        await self.hub.close()
        for page in pages:
            page.close()
        self.close()
