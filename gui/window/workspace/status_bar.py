"""The workspace window's status bar: counts, a held workspace, the sandbox, whether files are watched, the store,
and where agents reach it.

Its parts are gui.window.chrome.status_line's indicators; this puts them in the bar in order, keeps them current
(the held line every second), and adds the labels that say how outside agents reach this window, and, for a
console on another host, where it runs.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer
from PySide6.QtWidgets import QLabel, QStatusBar

from core import AttachServer, Console, ConsoleSurface, RemoteConsole, Timeline
from gui.window.chrome.status_line import (
    HeldIndicator,
    RunCounts,
    SandboxIndicator,
    StoreIndicator,
    WatchIndicator,
    preview_state,
)
from gui.window.runtime.tasks import TaskSet


class WindowStatus(QObject):
    """The permanent parts of one workspace window's status bar."""

    def __init__(self, bar: QStatusBar, console: ConsoleSurface, tasks: TaskSet,
                 timeline: Callable[[], Timeline]) -> None:
        """`timeline`: the read model the window shows now (a resync replaces it)."""
        super().__init__(bar)
        self._bar, self._console, self._timeline = bar, console, timeline
        self.counts = RunCounts()
        bar.addPermanentWidget(self.counts, 1)
        self.held = HeldIndicator()
        bar.addPermanentWidget(self.held)
        self.sandbox = SandboxIndicator()
        bar.addPermanentWidget(self.sandbox)
        self.watch = WatchIndicator(console.watch_state)  # hidden while the workspace's files are watched
        bar.addPermanentWidget(self.watch)
        self.store: StoreIndicator | None = None
        if console.state_dir is not None:  # (a console on another host keeps its store there)
            self.store = StoreIndicator(console.state_dir, tasks.spawn)  # its size, how far undo reaches
            bar.addPermanentWidget(self.store)
        self._held_timer = QTimer(self)
        self._held_timer.setInterval(1000)
        self._held_timer.timeout.connect(self._show_held)
        self.show_sandbox()

    def start(self) -> None:
        """Attached: the sandbox as the console says now, who reaches it, and the held line ticking."""
        self.show_sandbox()
        console = self._console
        if isinstance(console, Console) and console.endpoint is not None:
            AttachServer(console).install(console.endpoint)  # `belay attach` may follow it from a terminal
            serving = QLabel(" ⇄ Claude Code hooks, mcp-serve ")
            serving.setToolTip(f"Outside agents reach this window through {console.endpoint.path} "
                               "(Claude Code with `belay hooks install`, MCP clients with `belay mcp-serve`); "
                               "`belay attach` follows it from a terminal")
            self._bar.addPermanentWidget(serving)
        if isinstance(console, RemoteConsole):
            there = QLabel(f" ⇄ {console.reach.host or 'attached'} ")
            there.setObjectName("remoteHost")
            there.setToolTip(f"This workspace's console runs at {console.where}: its agents' calls wait, "
                             "are undone and journaled there; this window follows it through ssh")
            self._bar.addPermanentWidget(there)
        self._held_timer.start()

    def show_sandbox(self) -> None:
        console = self._console
        self.sandbox.show_sandbox(console.sandbox, console.bash_settings.network, preview_state(console))

    def show_counts(self) -> None:
        self.counts.show_counts(self._timeline(), self._console.cache_stats())

    def _show_held(self) -> None:
        self.held.show_held(self._console.workspace_held(), asyncio.get_running_loop().time(), self._timeline())

    def stop(self) -> None:
        self._held_timer.stop()

    def __repr__(self) -> str:
        return f"<WindowStatus {self._console.where} ticking={self._held_timer.isActive()}>"
