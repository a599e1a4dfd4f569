"""The changes view: every file changed in this workspace, and by which calls.

One row per file, newest change first, with the calls that changed it
beneath (tool, what it ran, how the file changed, whether it was undone).
Choosing a call row asks the window to select that call, where its diff and
its undo are.  Shell side effects appear like any other change, so a Bash
call that rewrote 312 files shows under each of them.  Rebuilt from the
timeline read model when a run finishes or is undone; nothing here touches
the disk.

Signals:
    call_chosen(str): the person picked the call with this id.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHeaderView, QLabel, QTreeWidget, QTreeWidgetItem, QVBoxLayout, QWidget

from core import Timeline

EMPTY = "No file has changed yet. Files that calls create, edit or delete (Bash commands included) show here."
_CALL = Qt.ItemDataRole.UserRole


class ChangesView(QWidget):
    """Files changed, with the calls that changed each."""

    call_chosen = Signal(str)

    def __init__(self, timeline: Timeline, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._timeline = timeline
        self.summary = QLabel(EMPTY)
        self.summary.setWordWrap(True)
        self.tree = QTreeWidget()
        self.tree.setHeaderLabels(["File / call", "Change", "State"])
        self.tree.header().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.tree.setUniformRowHeights(True)
        self.tree.itemActivated.connect(self._on_item_activated)
        self.tree.itemClicked.connect(self._on_item_activated)
        layout = QVBoxLayout(self)
        layout.addWidget(self.summary)
        layout.addWidget(self.tree, 1)
        self.refresh()

    def set_timeline(self, timeline: Timeline) -> None:
        self._timeline = timeline
        self.refresh()

    def refresh(self) -> None:
        by_file: dict[str, list[tuple[str, str, str, str]]] = {}
        for run in self._timeline.runs.values():
            state = "undone" if run.undone_by else run.status.value.replace("_", " ")
            for change in run.changes:
                by_file.setdefault(change.path, []).append(
                    (run.call_id, f"{run.tool} · {run.summary}", change.kind.value, state))
        expanded = {self.tree.topLevelItem(i).text(0) for i in range(self.tree.topLevelItemCount())
                    if self.tree.topLevelItem(i).isExpanded()}
        self.tree.clear()
        for path in sorted(by_file, key=lambda p: (-len(by_file[p]), p)):
            calls = by_file[path]
            item = QTreeWidgetItem(self.tree, [path, f"{len(calls)} call{'s' if len(calls) != 1 else ''}", ""])
            for call_id, label, kind, state in reversed(calls):
                child = QTreeWidgetItem(item, [label, kind, state])
                child.setData(0, _CALL, call_id)
                child.setToolTip(0, f"{label}\n{call_id}: select it to see its diff and undo it")
            item.setExpanded(path in expanded)
        calls = sum(1 for run in self._timeline.runs.values() if run.changes)
        self.summary.setText(f"{len(by_file)} file{'s' if len(by_file) != 1 else ''} changed by {calls} "
                             f"call{'s' if calls != 1 else ''}." if by_file else EMPTY)

    def file_rows(self) -> list[tuple[str, list[str]]]:
        """(path, [call labels]) as shown, for tests and accessibility."""
        rows = []
        for i in range(self.tree.topLevelItemCount()):
            item = self.tree.topLevelItem(i)
            rows.append((item.text(0), [item.child(j).text(0) for j in range(item.childCount())]))
        return rows

    def _on_item_activated(self, item: QTreeWidgetItem, _column: int = 0) -> None:
        call_id = item.data(0, _CALL)
        if call_id:
            self.call_chosen.emit(str(call_id))
