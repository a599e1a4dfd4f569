"""What a person does to one call or agent of the timeline: its context menu, undo, redo and rewind.

Undo, redo and rewind run through gui.window.undo.flow (preview, ask where needed, run, report); a Claude
session Belay launched can be interrupted or stopped from its agent's row.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, QPoint
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QMenu, QWidget

from core import AgentKey, ConsoleSurface, RunKey, RunStatus, Timeline
from gui.window.panels.details import undoable
from gui.window.timeline.view import TimelineView
from gui.window.undo.flow import UndoFlow


class CallMenu(QObject):
    """The timeline's context menus, and undo / redo / rewind of a call, for the window that owns it."""

    def __init__(self, console: ConsoleSurface, tree: TimelineView, timeline: Callable[[], Timeline],
                 undoing: UndoFlow, parent: QWidget) -> None:
        """`timeline`: the read model the tree shows now (a resync replaces it)."""
        super().__init__(parent)
        self._console, self._tree, self._timeline, self._undoing = console, tree, timeline, undoing
        self._parent = parent

    def open_at(self, point: QPoint) -> None:
        """The tree's context menu at `point`: a call's, or a launched session's agent."""
        key = self._tree.key_at(point)
        if isinstance(key, AgentKey):
            self._agent_menu(key.agent_id, point)
        elif isinstance(key, RunKey):
            self._call_menu(key.call_id, point)

    def _call_menu(self, call_id: str, point: QPoint) -> None:
        run = self._timeline().runs[call_id]
        menu = QMenu(self._parent)
        undo = menu.addAction("Undo this call")
        undo.setEnabled(undoable(run))
        undo.triggered.connect(lambda: self.undo(call_id))
        if run.undone_paths or run.git_undone:
            menu.addAction("Redo this call").triggered.connect(lambda: self.redo(call_id))
        rewind = menu.addAction("Rewind to here…")
        rewind.setToolTip("Undo every later call that changed files, newest first")
        rewind.triggered.connect(lambda: self.rewind(call_id))
        if run.status == RunStatus.RUNNING or run.status == RunStatus.BLOCKED_ON_USER:
            menu.addAction("Cancel this call").triggered.connect(lambda: self._console.cancel(call_id))
        menu.addAction("Copy call id").triggered.connect(lambda: QGuiApplication.clipboard().setText(call_id))
        _pop_up(menu, self._tree.viewport().mapToGlobal(point))

    def _agent_menu(self, agent_id: str, point: QPoint) -> None:
        """A Claude session Belay launched can be interrupted (it stops what it is doing) or stopped."""
        session = self._console.controls(agent_id)
        if session is None:
            return
        menu = QMenu(self._parent)
        menu.addAction("Interrupt Claude (stop this turn)").triggered.connect(session.interrupt)
        menu.addAction("Stop the session").triggered.connect(session.stop)
        _pop_up(menu, self._tree.viewport().mapToGlobal(point))

    def undo(self, call_id: str, paths: list[str] | None = None) -> None:
        """Undo a call (or some of its files): merged where later edits allow, else the person decides."""
        self._undoing.undo(call_id, paths)

    def redo(self, call_id: str, paths: list[str] | None = None) -> None:
        self._undoing.redo(call_id, paths)

    def rewind(self, call_id: str) -> None:
        """Preview, confirm, then undo every later call that changed files."""
        self._undoing.rewind(call_id)

    def undo_selected(self) -> None:
        """Ctrl+Z: undo the selected call, when it can be."""
        key = self._tree.current_key()
        if isinstance(key, RunKey) and undoable(self._timeline().runs[key.call_id]):
            self.undo(key.call_id)

    def redo_selected(self) -> None:
        """Ctrl+Shift+Z: redo the selected call, when some of it was undone."""
        key = self._tree.current_key()
        run = self._timeline().runs.get(key.call_id) if isinstance(key, RunKey) else None
        if run is not None and (run.undone_paths or run.git_undone):
            self.redo(run.call_id)

    def __repr__(self) -> str:
        return f"<CallMenu {self._console.where}>"


def _pop_up(menu: QMenu, at: QPoint) -> None:
    """Show a context menu that goes once it closes (its action, if one was chosen, runs first: deleteLater waits
    for the event loop), so right-clicks do not pile menus up under the window."""
    menu.aboutToHide.connect(menu.deleteLater)
    menu.popup(at)
