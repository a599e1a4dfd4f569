"""The changes view: every file changed in this workspace, and by whom.

One row per file, most changed first, with what changed it beneath, newest
first: the calls (tool, what it ran, how the file changed, whether that is
undone) and edits made outside Belay (your editor, a build), which are
shown but never attributed to an agent.  Shell side effects appear like any
other change, so a Bash call that rewrote 312 files shows under each of
them.  Paths the ignore rules exclude are marked: they were not stored and
cannot be restored.  Git references an agent moved (commits, resets) are
listed at the end.

Choosing a call row asks the window to select that call (its diff, its
undo); its context menu undoes or redoes just that file's change.  Rebuilt
from the timeline read model when a run finishes or is undone (once per
burst of such runs, `refresh_soon`, and at once when the tab is shown);
nothing here touches the disk.

Signals:
    call_chosen(str): the person picked the call with this id.
    undo_requested(str, list): call id and [path]: undo that call's change to that file.
    redo_requested(str, list): call id and [path]: put that file's undone change back.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from PySide6.QtCore import QPoint, Qt, QTimer, Signal
from PySide6.QtGui import QBrush, QShowEvent
from PySide6.QtWidgets import QHeaderView, QLabel, QMenu, QTreeWidget, QTreeWidgetItem, QVBoxLayout, QWidget

from core import FileChange, RunStatus, Timeline
from gui.window.kit import theme

EMPTY = "No file has changed yet. Files that calls create, edit or delete (Bash commands included) show here."
GIT_ROW = "git references"
_CALL = Qt.ItemDataRole.UserRole
_PATH = Qt.ItemDataRole.UserRole + 1
REFRESH_AFTER_MS = 150
"""A busy agent finishes many calls a second: the whole view is rebuilt once per burst, not once per call."""


@dataclass(frozen=True)
class _Touch:
    """One change to one file, by a call or from outside Belay."""

    at: datetime
    call_id: str
    """Empty for a change made outside Belay."""
    label: str
    kind: str
    state: str
    undone: bool = False
    undoable: bool = False


class ChangesView(QWidget):
    """Files changed, with the calls (and outside edits) that changed each."""

    call_chosen = Signal(str)
    undo_requested = Signal(str, list)
    redo_requested = Signal(str, list)

    def __init__(self, timeline: Timeline, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._timeline = timeline
        self.summary = QLabel(EMPTY)
        self.summary.setWordWrap(True)
        self.tree = QTreeWidget()
        self.tree.setAccessibleName("Changed files and the calls that changed them")
        self.tree.setHeaderLabels(["File / who changed it", "Change", "State"])
        self.tree.header().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.tree.setUniformRowHeights(True)
        self.tree.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.tree.customContextMenuRequested.connect(self._on_tree_context_menu)
        self.tree.itemActivated.connect(self._on_item_activated)
        self.tree.itemClicked.connect(self._on_item_activated)
        layout = QVBoxLayout(self)
        layout.addWidget(self.summary)
        layout.addWidget(self.tree, 1)
        self._pending = QTimer(self)
        self._pending.setSingleShot(True)
        self._pending.setInterval(REFRESH_AFTER_MS)
        self._pending.timeout.connect(self.refresh)
        self.refresh()
        theme.follow(self, self.refresh_soon)  # rows changed outside Belay are drawn in the theme's muted colour

    def set_timeline(self, timeline: Timeline) -> None:
        self._timeline = timeline
        self.refresh()

    def refresh_soon(self) -> None:
        """Rebuild after the current burst of finished or undone runs."""
        if not self._pending.isActive():
            self._pending.start()

    def showEvent(self, event: QShowEvent) -> None:
        if self._pending.isActive():
            self.refresh()  # the person looks now: show what is known now
        super().showEvent(event)

    def refresh(self) -> None:
        self._pending.stop()
        by_file = self._by_file()
        tops = (self.tree.topLevelItem(i) for i in range(self.tree.topLevelItemCount()))
        expanded = {item.text(0) for item in tops if item is not None and item.isExpanded()}
        self.tree.clear()
        for path in sorted(by_file, key=lambda p: (-len(by_file[p]), p)):
            touches = by_file[path]
            item = QTreeWidgetItem(self.tree, [path, f"{len(touches)} change{'s' if len(touches) != 1 else ''}", ""])
            for touch in reversed(touches):
                self._add_touch(item, path, touch)
            item.setExpanded(path in expanded)
        self._add_git_rows(expanded)
        self._summarise(by_file)

    def _by_file(self) -> dict[str, list[_Touch]]:
        """Every change per path, oldest first, calls and outside edits by when they happened."""
        by_file: dict[str, list[_Touch]] = {}
        for run in self._timeline.runs.values():
            for change in run.changes:
                undone = change.path in run.undone_paths
                state = "undone" if undone else run.status.value.replace("_", " ")
                if not change.stored:
                    state = "not stored: cannot be restored"
                undoable = change.stored and run.status.final and run.status != RunStatus.DENIED
                by_file.setdefault(change.path, []).append(_Touch(
                    run.ended_at or run.started_at or run.queued_at, run.call_id, f"{run.tool} · {run.summary}",
                    _kind(change), state, undone, undoable))
        for external in self._timeline.externals:
            for change in external.changes:
                by_file.setdefault(change.path, []).append(_Touch(
                    external.at, "", f"outside Belay · {external.note}", _kind(change),
                    "yours: Belay does not undo it"))
        for touches in by_file.values():
            touches.sort(key=lambda t: t.at)
        return by_file

    def _add_touch(self, item: QTreeWidgetItem, path: str, touch: _Touch) -> None:
        child = QTreeWidgetItem(item, [touch.label, touch.kind, touch.state])
        child.setData(0, _PATH, path)
        if touch.call_id:
            child.setData(0, _CALL, touch.call_id)
            child.setToolTip(0, f"{touch.label}\n{touch.call_id}: select it to see its diff; right-click to undo "
                                "just this file")
        else:
            for column in range(3):
                child.setForeground(column, QBrush(theme.qcolour("muted")))
            child.setToolTip(0, "Changed by someone other than an agent (your editor, a build). Recorded so that "
                                "undoing an agent's call never throws it away.")
        child.setData(1, _CALL, "undone" if touch.undone else ("undoable" if touch.undoable else ""))

    def _add_git_rows(self, expanded: set[str]) -> None:
        moves = [(run.call_id, f"{run.tool} · {run.summary}", g.what) for run in self._timeline.runs.values()
                 for g in run.git_changes]
        if not moves:
            return
        item = QTreeWidgetItem(self.tree, [GIT_ROW, f"{len(moves)} move{'s' if len(moves) != 1 else ''}",
                                           "undone with their calls"])
        for call_id, label, what in reversed(moves):
            child = QTreeWidgetItem(item, [what, "git", label])
            child.setData(0, _CALL, call_id)
        item.setExpanded(GIT_ROW in expanded)

    def _summarise(self, by_file: dict[str, list[_Touch]]) -> None:
        if not by_file:
            self.summary.setText(EMPTY)
            return
        calls = sum(1 for run in self._timeline.runs.values() if run.changes)
        outside = sum(1 for touches in by_file.values() if any(not t.call_id for t in touches))
        text = (f"{len(by_file)} file{'s' if len(by_file) != 1 else ''} changed by "
                f"{calls} call{'s' if calls != 1 else ''}")
        if outside:
            text += f"; {outside} also changed outside Belay"
        self.summary.setText(text + ".")

    def file_rows(self) -> list[tuple[str, list[str]]]:
        """(path, [labels of what changed it]) as shown, for tests and accessibility."""
        rows = []
        for i in range(self.tree.topLevelItemCount()):
            item = self.tree.topLevelItem(i)
            if item is not None:  # (one below the count is there: the stubs say it may be None)
                children = (item.child(j) for j in range(item.childCount()))
                rows.append((item.text(0), [child.text(0) for child in children if child is not None]))
        return rows

    def _on_item_activated(self, item: QTreeWidgetItem, _column: int = 0) -> None:
        call_id = item.data(0, _CALL)
        if call_id:
            self.call_chosen.emit(str(call_id))

    def _on_tree_context_menu(self, point: QPoint) -> None:
        item = self.tree.itemAt(point)
        if item is None or not item.data(0, _CALL) or not item.data(0, _PATH):
            return
        call_id, path, state = str(item.data(0, _CALL)), str(item.data(0, _PATH)), item.data(1, _CALL)
        menu = QMenu(self)
        undo = menu.addAction(f"Undo this call's change to {path}")
        undo.setEnabled(state == "undoable")
        undo.triggered.connect(lambda: self.undo_requested.emit(call_id, [path]))
        redo = menu.addAction(f"Redo this call's change to {path}")
        redo.setEnabled(state == "undone")
        redo.triggered.connect(lambda: self.redo_requested.emit(call_id, [path]))
        menu.addAction("Show the call").triggered.connect(lambda: self.call_chosen.emit(call_id))
        menu.popup(self.tree.viewport().mapToGlobal(point))


def _kind(change: FileChange) -> str:
    if change.old_path:
        return f"renamed from {change.old_path}"
    return ("link " if change.after_link or change.before_link else "") + change.kind.value
