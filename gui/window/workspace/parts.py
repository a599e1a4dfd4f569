"""The parts of one workspace's window, made together: the timeline and its bridge, the approvals, the tabs,
the banners and the mode selector.  The window lays them out and wires them (gui.window.workspace.window)."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QTabWidget, QWidget

from core import ConsoleSurface
from gui.window.approvals.elicitation_form import ElicitationPanel
from gui.window.approvals.panel import ApprovalPanel
from gui.window.chrome.link_banner import LinkBanner
from gui.window.chrome.mode_bar import BypassBanner, ModeSelector
from gui.window.chrome.trust_banner import TrustBanner
from gui.window.panels.conversation import ConversationPage
from gui.window.panels.details import DetailsPane
from gui.window.panels.mcp import McpPanel
from gui.window.panels.rules_view import RulesView
from gui.window.panels.shells import ShellsPanel
from gui.window.runtime.tasks import TaskSet
from gui.window.timeline.filter import TimelineFilter
from gui.window.timeline.model import TimelineModel
from gui.window.timeline.view import TimelineView
from gui.window.undo.changes_view import ChangesView
from gui.window.workspace.bridge import Bridge

TABS = (("Details", "The selected call: arguments, output, changes and undo"),
        ("Changes", "Every file changed in this workspace, and by which calls"),
        ("Background shells", "Shells started by Bash calls that keep running; stop them here"),
        ("Rules", "The rules in force: add, remove, edit, dry-run"),
        ("MCP servers", "The MCP servers in your settings, their state, and restart"),
        ("Conversation", "What an agent said between its calls (prompts, words, reasoning) and what it cost"))
"""The right-hand tabs' names and tooltips, in the order of their Ctrl+number keys."""


@dataclass(frozen=True)
class Parts:
    """One workspace window's widgets and models (each documented where it is defined)."""

    model: TimelineModel
    bridge: Bridge
    tree: TimelineView
    timeline_filter: TimelineFilter
    approvals: ApprovalPanel
    elicitations: ElicitationPanel
    details: DetailsPane
    changes: ChangesView
    shells: ShellsPanel
    rules: RulesView
    mcp: McpPanel
    conversation: ConversationPage
    tabs: QTabWidget
    banner: BypassBanner
    link: LinkBanner
    trust: TrustBanner
    mode: ModeSelector

    @classmethod
    def made(cls, console: ConsoleSurface, tasks: TaskSet) -> Parts:
        model = TimelineModel()
        tree = TimelineView(model)
        tree.rows.expand_new = True  # agents and batches come open: a person follows the work as it comes
        tree.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        timeline = model.timeline
        parts = cls(model=model, bridge=Bridge(console, model, tasks), tree=tree,
                    timeline_filter=TimelineFilter(tree, model), approvals=ApprovalPanel(console, timeline),
                    elicitations=ElicitationPanel(),
                    details=DetailsPane(timeline, records=console.call_record, tasks=tasks,
                                        undo_preview=console.undo_preview),
                    changes=ChangesView(timeline), shells=ShellsPanel(timeline), rules=RulesView(console, tasks),
                    mcp=McpPanel(), conversation=ConversationPage(timeline, tasks, note=console.note),
                    tabs=QTabWidget(),
                    banner=BypassBanner(), link=LinkBanner(), trust=TrustBanner(), mode=ModeSelector(console.mode))
        for number, (tab, name, tip) in enumerate(parts.tab_list(), 1):
            parts.tabs.addTab(tab, name)
            parts.tabs.setTabToolTip(number - 1, f"{tip} (Ctrl+{number})")
        return parts

    def tab_list(self) -> tuple[tuple[QWidget, str, str], ...]:
        """(tab, name, tooltip) for the right-hand tabs, in the order of their Ctrl+number keys."""
        tabs = (self.details, self.changes, self.shells, self.rules, self.mcp, self.conversation)
        return tuple((tab, name, tip) for tab, (name, tip) in zip(tabs, TABS, strict=True))

    def set_timeline(self) -> None:
        """The panels on the model's read model (at the start, and when it was read again)."""
        for panel in (self.approvals, self.details, self.shells, self.changes, self.conversation):
            panel.set_timeline(self.model.timeline)

    def show_shell_count(self) -> None:
        running = self.shells.running_count()
        self.tabs.setTabText(self.tabs.indexOf(self.shells),
                             f"Background shells ({running} running)" if running else "Background shells")
