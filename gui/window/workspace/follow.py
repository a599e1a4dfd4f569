"""What the console announces, shown in a workspace window's parts: requests, finished runs, a dropped link,
shells, policy, MCP servers and their questions, files changed outside Belay.

The bridge (gui.window.workspace.bridge) turns the console's events into these signals, batched; each is a few
look-ups here, since under a flood they come thousands of times a second.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QApplication, QWidget

from core import (
    ApprovalRequested,
    ConsoleSurface,
    ElicitationRequested,
    ExternalChangesRecorded,
    LinkChanged,
    PolicyChanged,
    RollbackRefused,
    RunKey,
    ServerState,
    ServerStatus,
)
from gui.window.approvals.text import agent_path
from gui.window.chrome.attention import Attention
from gui.window.workspace.parts import Parts

Say = Callable[[str, int], None]
"""Shows a message in the status bar for some milliseconds."""


class Shows(Protocol):
    """What the window shows again when the console says so."""

    def show_selected(self) -> None:
        """The selected call's details (its run changed, or the timeline was read again)."""

    def show_mode(self, mode: str) -> None:
        """The policy mode: the selector, the bypass banner, the title."""

    def show_counts(self) -> None:
        """The status bar's counts of calls."""


class Follow(QObject):
    """Connects the bridge's signals to the parts that show them."""

    def __init__(self, window: QWidget, console: ConsoleSurface, parts: Parts, attention: Attention,
                 say: Say, shows: Shows) -> None:
        super().__init__(window)
        self._window, self._console, self._parts, self._attention = window, console, parts, attention
        self._say, self._shows = say, shows
        bridge = parts.bridge
        bridge.approval_requested.connect(self._on_approval_requested)
        bridge.approval_resolved.connect(parts.approvals.remove)
        bridge.runs_changed.connect(self._on_runs_changed)
        bridge.rollback_refused.connect(self._on_rollback_refused)
        bridge.link_changed.connect(self._on_link_changed)
        bridge.shells_changed.connect(self._on_shells_changed)
        bridge.policy_changed.connect(self._on_policy_changed)
        bridge.external_changes.connect(self._on_external_changes)
        bridge.mcp_changed.connect(self._on_mcp_changed)
        bridge.elicitation_requested.connect(self._on_elicitation_requested)
        bridge.elicitation_resolved.connect(parts.elicitations.remove)
        bridge.resynced.connect(self.catch_up)

    def catch_up(self) -> None:
        """The parts on the console's read model and state as they are now (at the start, and after a resync:
        announcements may have been lost meanwhile)."""
        parts, console = self._parts, self._console
        parts.set_timeline()
        parts.rules.set_rules(console.rules(), console.settings_problems)
        parts.trust.show_held_back(console.held_back())
        self._shows.show_mode(console.mode)
        parts.show_shell_count()
        for request in console.pending_approvals():
            parts.approvals.add(request)
        parts.elicitations.set_pending(console.elicitations.pending())

    def _on_approval_requested(self, request: ApprovalRequested) -> None:
        self._parts.approvals.add(request)
        self._attention.requested(request, agent_path(self._parts.model.timeline, request.agent_id))

    def _on_runs_changed(self, call_ids: list[str]) -> None:
        """The runs a batch of events changed (thousands a second under a flood): a few look-ups each."""
        parts = self._parts
        runs, waiting = parts.model.timeline.runs, {r.call_id for r in parts.approvals.queue()}
        changed_files = False
        for call_id in call_ids:
            run = runs.get(call_id)
            if run is None or not run.status.final:
                continue
            if call_id in waiting:
                parts.approvals.remove(call_id)  # cancelled, or its agent went away, while it waited: nothing to answer
            changed_files = changed_files or bool(run.changes or run.git_changes)
        if changed_files:
            parts.changes.refresh_soon()
        shown = parts.details.key
        if isinstance(shown, RunKey) and shown.call_id in call_ids:
            self._shows.show_selected()

    def _on_link_changed(self, event: LinkChanged) -> None:
        """The link to a console on another host dropped, came back or was given up on.  Back, its journal is the
        truth: the timeline is read again, and what no longer waits leaves the approvals."""
        parts, console = self._parts, self._console
        parts.link.show_link(event, console.where)
        parts.approvals.setEnabled(event.state == "attached")  # nothing can be answered there meanwhile
        if event.state == "attached":
            parts.model.reset(console.timeline)
            parts.tree.expandAll()
            waiting = {request.call_id for request in console.pending_approvals()}
            for request in parts.approvals.queue():
                if request.call_id not in waiting:
                    parts.approvals.remove(request.call_id)
            self.catch_up()
            parts.mcp.show_servers(console.mcp_servers())
            self._shows.show_counts()
            self._shows.show_selected()
        self._say(parts.link.text(), 15_000)

    def _on_external_changes(self, event: ExternalChangesRecorded) -> None:
        self._parts.changes.refresh_soon()
        n = len(event.changes)
        self._say(f"{n} file{'s' if n != 1 else ''} changed outside Belay ({event.note}); "
                  "recorded as yours, never undone by Belay.", 10_000)

    def _on_mcp_changed(self, status: ServerStatus) -> None:
        self._parts.mcp.show_servers(self._console.mcp_servers())
        if status.state == ServerState.FAILED:
            self._say(f"MCP server {status.name} {status.describe()}", 15_000)

    def _on_elicitation_requested(self, request: ElicitationRequested) -> None:
        elicitations = self._parts.elicitations
        elicitations.add(request)
        if elicitations.form(request.elicitation_id) is not None and not self._window.isActiveWindow() \
                and not self._attention.quiet:
            QApplication.alert(self._window.window())

    def _on_shells_changed(self, shell_id: str) -> None:
        self._parts.shells.refresh(shell_id)
        self._parts.show_shell_count()

    def _on_policy_changed(self, event: PolicyChanged) -> None:
        self._parts.rules.set_rules(event.rules, event.problems)
        self._parts.trust.show_held_back(event.held_back)
        self._shows.show_mode(event.mode)

    def _on_rollback_refused(self, event: RollbackRefused) -> None:
        self._say(f"Undo refused: {event.message}", 10_000)

    def __repr__(self) -> str:
        return f"<Follow {self._console.where}>"
