"""The changes tab (gui.window.undo.changes_view): every file changed and by whom, what of it can be undone or
redone file by file, and a view that keeps up with a busy agent."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtGui import QColor, QContextMenuEvent
from PySide6.QtWidgets import QApplication, QMenu, QTreeWidgetItem

from core import (
    AgentStarted,
    CallFinished,
    CallQueued,
    ChangeKind,
    Console,
    ExternalChangesRecorded,
    FileChange,
    GitChange,
    RollbackFinished,
    RunStatus,
    Timeline,
)
from gui.window.kit.theme import LIGHT
from gui.window.undo.changes_view import GIT_ROW, ChangesView
from gui.window.workspace.window import MainWindow
from tests.conftest import wait_until
from tests.gui.window.workspace.test_window import in_window

OFFSCREEN_POPUP = "This plugin does not support (raise|grabbing the keyboard)"
"""What the offscreen platform says when a menu pops up: it has no window stack or keyboard to give it."""


def _change(path: str, kind: ChangeKind = ChangeKind.MODIFY, **fields: Any) -> FileChange:
    return FileChange(path=path, kind=kind, before_hash="b" if kind != ChangeKind.CREATE else None,
                      after_hash="a", **fields)


class _Calls:
    """A timeline fed as the console feeds it: calls that end with their changes, undos, outside edits."""

    def __init__(self) -> None:
        self.timeline = Timeline()
        self.seq = 0
        self._apply(AgentStarted(seq=0, agent_id="a1", session_id="s", name="lead", agent_kind="scripted"))

    def _apply(self, event: Any) -> None:
        self.seq += 1
        self.timeline.apply(event.model_copy(update={"seq": self.seq}))

    def call(self, call_id: str, tool: str, summary: str, *changes: FileChange, **finished: Any) -> None:
        self._apply(CallQueued(seq=0, call_id=call_id, agent_id="a1", tool=tool, args={}, summary=summary))
        self._apply(CallFinished(seq=0, call_id=call_id, status=finished.pop("status", RunStatus.DONE),
                                 changes=changes, **finished))

    def undo(self, call_id: str, *paths: str) -> None:
        self._apply(RollbackFinished(seq=0, rollback_id="rb1", call_id=call_id, paths=paths, undone_paths=paths))

    def outside(self, *changes: FileChange) -> None:
        self._apply(ExternalChangesRecorded(seq=0, op_id="x1", note="before call c3", changes=changes))


def _view(qtbot: Any, calls: _Calls) -> ChangesView:
    view = ChangesView(calls.timeline)
    qtbot.addWidget(view)
    view.resize(700, 400)
    view.show()
    return view


def _row(view: ChangesView, path: str) -> QTreeWidgetItem:
    return next(view.tree.topLevelItem(i) for i in range(view.tree.topLevelItemCount())
                if view.tree.topLevelItem(i).text(0) == path)


def _right_click(view: ChangesView, item: QTreeWidgetItem) -> None:
    view.tree.scrollToItem(item)
    point = view.tree.visualItemRect(item).center()
    QApplication.sendEvent(view.tree.viewport(), QContextMenuEvent(QContextMenuEvent.Reason.Mouse, point,
                                                                   view.tree.viewport().mapToGlobal(point)))


def _menu_on(view: ChangesView, item: QTreeWidgetItem) -> QMenu:
    """Right-click `item`, as a person does, and return the menu that opens."""
    _right_click(view, item)
    menus = [m for m in view.findChildren(QMenu) if m.isVisible()]
    assert len(menus) == 1
    return menus[0]


@pytest.mark.qt_log_ignore(OFFSCREEN_POPUP)
def test_a_files_change_is_undone_or_redone_from_its_menu_as_it_stands(qtbot: Any) -> None:
    calls = _Calls()
    calls.call("c1", "Write", "a.txt", _change("a.txt"))
    calls.call("c2", "Edit", "b.txt", _change("b.txt"))
    calls.undo("c1", "a.txt")
    view = _view(qtbot, calls)
    undo: list[tuple[str, list[str]]] = []
    redo: list[tuple[str, list[str]]] = []
    view.undo_requested.connect(lambda call_id, paths: undo.append((call_id, paths)))
    view.redo_requested.connect(lambda call_id, paths: redo.append((call_id, paths)))
    a, b = _row(view, "a.txt"), _row(view, "b.txt")
    a.setExpanded(True)
    b.setExpanded(True)
    assert a.child(0).text(2) == "undone" and b.child(0).text(2) == "done"
    for row, wanted in ((a.child(0), "Redo"), (b.child(0), "Undo")):
        menu = _menu_on(view, row)
        actions = {action.text().split(" ")[0]: action for action in menu.actions()}
        assert {name: action.isEnabled() for name, action in actions.items() if name != "Show"} == {
            "Undo": wanted == "Undo", "Redo": wanted == "Redo"}
        assert actions[wanted].text().endswith(f"change to {row.parent().text(0)}")
        actions[wanted].trigger()
        menu.close()
    assert redo == [("c1", ["a.txt"])] and undo == [("c2", ["b.txt"])]


def test_a_rename_says_where_the_file_was_and_an_outside_edit_is_muted_and_never_offered_for_undo(
        qtbot: Any) -> None:
    calls = _Calls()
    calls.call("c1", "Bash", "git mv old.py new.py", _change("new.py", ChangeKind.RENAME, old_path="old.py"))
    calls.outside(_change("notes.md"))
    view = _view(qtbot, calls)
    assert _row(view, "new.py").child(0).text(1) == "renamed from old.py"
    mine = _row(view, "notes.md").child(0)
    assert mine.text(0) == "outside Belay · before call c3" and mine.text(2) == "yours: Belay does not undo it"
    assert QColor(mine.foreground(0).color()).name() == LIGHT.muted
    assert "undoing an agent's call never throws it away" in mine.toolTip(0)
    _row(view, "notes.md").setExpanded(True)
    _right_click(view, mine)
    assert not [m for m in view.findChildren(QMenu) if m.isVisible()]  # nothing to undo or show there
    assert "1 also changed outside Belay" in view.summary.text()


def test_a_burst_of_calls_shows_once_it_settles_and_at_once_when_the_tab_is_shown(qtbot: Any) -> None:
    calls = _Calls()
    view = _view(qtbot, calls)
    for n in range(5):
        calls.call(f"c{n}", "Write", f"f{n}.txt", _change(f"f{n}.txt", ChangeKind.CREATE))
        view.refresh_soon()
    assert view.file_rows() == []  # mid-burst: not rebuilt for every call
    qtbot.waitUntil(lambda: len(view.file_rows()) == 5, timeout=2000)
    assert view.summary.text() == "5 files changed by 5 calls."
    view.hide()  # another tab is shown
    calls.call("c9", "Write", "late.txt", _change("late.txt", ChangeKind.CREATE))
    view.refresh_soon()
    view.show()  # the person looks now
    assert "late.txt" in dict(view.file_rows())


def test_a_file_opened_stays_open_when_the_view_is_rebuilt(qtbot: Any) -> None:
    calls = _Calls()
    calls.call("c1", "Write", "a.txt", _change("a.txt"))
    calls.call("c2", "Write", "b.txt", _change("b.txt"))
    view = _view(qtbot, calls)
    _row(view, "b.txt").setExpanded(True)
    calls.call("c3", "Edit", "a.txt", _change("a.txt"))
    view.refresh()
    assert _row(view, "b.txt").isExpanded() and not _row(view, "a.txt").isExpanded()
    assert [label for label in dict(view.file_rows())["a.txt"]] == ["Edit · a.txt", "Write · a.txt"]  # newest first


def test_choosing_a_git_move_selects_the_call_that_made_it(qtbot: Any) -> None:
    calls = _Calls()
    commit = GitChange(ref="refs/heads/main", kind="commit", before="1", after="2", what="commit 2: Fix the total")
    calls.call("c1", "Bash", "git commit -m 'Fix the total'", _change("cart.py"), git_changes=(commit,))
    view = _view(qtbot, calls)
    chosen: list[str] = []
    view.call_chosen.connect(chosen.append)
    git = _row(view, GIT_ROW)
    assert git.text(1) == "1 move" and git.child(0).text(0) == "commit 2: Fix the total"
    git.setExpanded(True)
    view.tree.itemClicked.emit(git.child(0), 0)
    assert chosen == ["c1"]
    view.tree.itemClicked.emit(git, 0)  # the group's own row is no call
    assert chosen == ["c1"]


def test_the_changes_tab_lists_shell_side_effects_by_file(qtbot: Any, loop: Any, workspace: Path) -> None:
    async def body(console: Console, window: MainWindow) -> None:
        view = window.changes
        assert "No file has changed yet" in view.summary.text()
        await console.add_rule("Bash(touch:*)", "allow", "session")
        await console.add_rule("Bash(rm:*)", "allow", "session")
        agent = await console.start_agent("agent", "scripted")
        made = await console.call(agent, "Bash", {"command": "touch a.txt b.txt"})
        await console.call(agent, "Bash", {"command": "rm a.txt"})
        await wait_until(lambda: len(view.file_rows()) == 2 and len(dict(view.file_rows())["a.txt"]) == 2,
                         what="two files in the changes tab, a.txt with both calls")  # the view refreshes coalesced
        rows = dict(view.file_rows())
        assert len(rows["a.txt"]) == 2 and rows["b.txt"] == ["Bash · touch a.txt b.txt"]
        assert "2 files changed by 2 calls" in view.summary.text()
        b_row = next(view.tree.topLevelItem(i) for i in range(2) if view.tree.topLevelItem(i).text(0) == "b.txt")
        view.tree.itemClicked.emit(b_row.child(0), 0)
        await wait_until(lambda: window.details.key == f"r:{made.call_id}", what="the call to be selected")
        assert window.tabs.currentWidget() is window.details

    in_window(qtbot, loop, workspace, body)


def test_the_changes_tab_shows_outside_edits_ignored_files_and_git_moves(qtbot: Any, loop: Any,
                                                                        workspace: Path) -> None:
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(workspace)}
    subprocess.run(["git", "init", "-q", "-b", "main", str(workspace)], check=True, env=env)
    (workspace / ".gitignore").write_text("*.log\n")

    async def body(console: Console, window: MainWindow) -> None:
        view = window.changes
        console.set_mode("bypass")
        (workspace / "README.md").write_text("# mine\n")  # the person's editor
        agent = await console.start_agent("agent", "scripted")
        await console.call(agent, "Bash", {"command": "echo x > build.log && echo y >> README.md && git add -A && "
                                                      "git -c user.name=A -c user.email=a@b commit -qm 'Agent commit'"})
        await wait_until(lambda: len(dict(view.file_rows()).get("README.md", ())) == 2,
                         what="README.md's two changes in the changes tab")  # the view refreshes coalesced
        rows = dict(view.file_rows())
        assert rows["README.md"][-1].startswith("outside Belay") and rows["README.md"][0].startswith("Bash")
        assert "also changed outside Belay" in view.summary.text()
        log_row = next(view.tree.topLevelItem(i) for i in range(view.tree.topLevelItemCount())
                       if view.tree.topLevelItem(i).text(0) == "build.log")
        assert log_row.child(0).text(2) == "not stored: cannot be restored"
        [moves] = [labels for path, labels in view.file_rows() if path == GIT_ROW]
        assert any("Agent commit" in label for label in moves)

    in_window(qtbot, loop, workspace, body)
