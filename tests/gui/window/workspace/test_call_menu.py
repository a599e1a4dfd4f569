"""What a person does to one row of the timeline: a call's context menu (undo, redo, rewind, cancel, copy its id),
a launched Claude session's (interrupt, stop), and Ctrl+Z / Ctrl+Shift+Z on the selected call."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtGui import QGuiApplication, QKeySequence
from PySide6.QtWidgets import QMenu

from core import AgentKey, Console, NodeKey, RunKey, RunStatus
from gui.window.workspace.window import MainWindow
from tests.conftest import wait_until
from tests.gui.window.workspace.test_window import in_window

# Offscreen platform noise when a context menu pops up (it cannot raise a window or grab the keyboard).
pytestmark = pytest.mark.qt_log_ignore(r"This plugin does not support (raise\(\)|grabbing the keyboard)", extend=True)

def _open_menu(window: MainWindow, key: NodeKey) -> QMenu | None:
    """Right-click `key`'s row: the menu shown, if any."""
    before = set(window.findChildren(QMenu))
    rect = window.tree.visualRect(window.model.index_of(key))
    window.tree.customContextMenuRequested.emit(rect.center())
    shown = [m for m in window.findChildren(QMenu) if m not in before and m.isVisible()]
    assert len(shown) <= 1
    return shown[0] if shown else None


def _entries(menu: QMenu) -> dict[str, bool]:
    """Each entry's text: whether it can be chosen."""
    return {a.text(): a.isEnabled() for a in menu.actions() if not a.isSeparator()}


def _choose(menu: QMenu, text: str) -> None:
    next(a for a in menu.actions() if a.text() == text).trigger()
    menu.close()


def test_a_calls_menu_offers_undo_then_redo_and_cancel_only_while_it_waits(qtbot: Any, loop: Any,
                                                                         workspace: Path) -> None:
    notes = workspace / "notes.txt"

    async def body(console: Console, window: MainWindow) -> None:
        await console.add_rule("Write", "allow", "session")
        agent = await console.start_agent("agent", "scripted")
        write = await console.call(agent, "Write", {"file_path": str(notes), "content": "one\n"})
        key = RunKey(write.call_id)
        await wait_until(lambda: window.model.index_of(key).isValid(), what="the call's row")
        menu = _open_menu(window, key)
        assert menu is not None
        assert _entries(menu) == {"Undo this call": True, "Rewind to here…": True, "Copy call id": True}
        _choose(menu, "Copy call id")
        assert QGuiApplication.clipboard().text() == write.call_id
        menu = _open_menu(window, key)
        assert menu is not None
        _choose(menu, "Undo this call")
        await wait_until(lambda: not notes.exists(), what="the undo")
        await wait_until(lambda: bool(window.model.timeline.runs[write.call_id].undone_paths), what="it shown undone")
        menu = _open_menu(window, key)
        assert menu is not None and "Redo this call" in _entries(menu)
        _choose(menu, "Redo this call")
        await wait_until(lambda: notes.exists() and notes.read_text() == "one\n", what="the redo")

        waiting = asyncio.ensure_future(console.call(agent, "Bash", {"command": "touch made.txt"}))
        await wait_until(lambda: window.approvals.current is not None, what="the request")
        menu = _open_menu(window, RunKey(window.approvals.current.call_id))
        assert menu is not None and _entries(menu).get("Cancel this call") is True
        _choose(menu, "Cancel this call")
        assert (await waiting).status == RunStatus.CANCELLED
        assert not (workspace / "made.txt").exists()

    in_window(qtbot, loop, workspace, body)


class LaunchedSession:
    """Stands in for a Claude session Belay launched (running one needs the Claude CLI and a model server: the
    integration test test_claude_launch.py does); it records what the window asks of it."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    def interrupt(self) -> None:
        self.asked.append("interrupt")

    def stop(self) -> None:
        self.asked.append("stop")


def test_an_agents_menu_offers_interrupt_and_stop_only_for_a_launched_session(
        qtbot: Any, loop: Any, workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    async def body(console: Console, window: MainWindow) -> None:
        scripted = await console.start_agent("scripted", "scripted")
        launched = await console.start_agent("claude", "scripted")
        for agent in (scripted, launched):
            await console.call(agent, "Read", {"file_path": str(workspace / "README.md")})
        session = LaunchedSession()
        monkeypatch.setattr(console, "controls", lambda agent_id: session if agent_id == launched.agent_id else None)
        for agent in (scripted, launched):
            await wait_until(lambda agent=agent: window.model.index_of(AgentKey(agent.agent_id)).isValid(),
                             what="the agent's row")
        assert _open_menu(window, AgentKey(scripted.agent_id)) is None  # nothing Belay could stop
        menu = _open_menu(window, AgentKey(launched.agent_id))
        assert menu is not None
        assert _entries(menu) == {"Interrupt Claude (stop this turn)": True, "Stop the session": True}
        _choose(menu, "Interrupt Claude (stop this turn)")
        menu = _open_menu(window, AgentKey(launched.agent_id))
        assert menu is not None
        _choose(menu, "Stop the session")
        assert session.asked == ["interrupt", "stop"]

    in_window(qtbot, loop, workspace, body)


def _undoing(window: MainWindow) -> bool:
    """An undo or a redo was started (the window runs each as a task named after it and its call)."""
    return re.search(r"'(undo|redo) call_", repr(window.tasks)) is not None


def test_ctrl_z_undoes_the_selected_call_and_ctrl_shift_z_redoes_it(qtbot: Any, loop: Any, workspace: Path) -> None:
    notes = workspace / "notes.txt"

    async def body(console: Console, window: MainWindow) -> None:
        await console.add_rule("Write", "allow", "session")
        agent = await console.start_agent("agent", "scripted")
        write = await console.call(agent, "Write", {"file_path": str(notes), "content": "one\n"})
        read = await console.call(agent, "Read", {"file_path": str(notes)})
        window.activateWindow()
        await wait_until(window.isActiveWindow, what="the window to be active")
        window.select_call(read.call_id)
        window.tree.setFocus()
        qtbot.keySequence(window.tree, QKeySequence("Ctrl+Z"))  # a read changed nothing: nothing to undo
        window.select_call(write.call_id)
        qtbot.keySequence(window.tree, QKeySequence("Ctrl+Shift+Z"))  # nothing undone yet: nothing to redo
        assert not _undoing(window) and notes.read_text() == "one\n"
        qtbot.keySequence(window.tree, QKeySequence("Ctrl+Z"))
        await wait_until(lambda: not notes.exists(), what="the undo")
        await wait_until(lambda: bool(window.model.timeline.runs[write.call_id].undone_paths), what="it shown undone")
        qtbot.keySequence(window.tree, QKeySequence("Ctrl+Shift+Z"))
        await wait_until(notes.exists, what="the redo")

    in_window(qtbot, loop, workspace, body)


def test_context_menus_go_once_closed_and_do_not_pile_up(qtbot: Any, loop: Any, workspace: Path) -> None:
    async def body(console: Console, window: MainWindow) -> None:
        agent = await console.start_agent("agent", "scripted")
        read = await console.call(agent, "Read", {"file_path": str(workspace / "README.md")})
        await wait_until(lambda: read.call_id in window.model.timeline.runs, what="the call's row")
        menus = len(window.findChildren(QMenu))  # the menu bar's own
        for _ in range(3):
            menu = _open_menu(window, RunKey(read.call_id))
            assert menu is not None
            menu.close()
        await wait_until(lambda: len(window.findChildren(QMenu)) == menus, what="the closed menus to go")

    in_window(qtbot, loop, workspace, body)
