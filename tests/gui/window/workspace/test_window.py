"""The main window: the mode and its bypass banner, the sandbox indicator, the keys sheet, accessible names,
and the room a waiting call takes.

Its tabs (rules, shells, MCP servers, changes), undo and rewind, File → Verify and the window's parts (its
menus and keys, status bar, context menus, ...) have their own test modules, beside their code's; `in_window`
(a real console on a temp workspace, the real window, offscreen) is shared with them.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QAbstractButton, QAbstractItemView, QComboBox, QLineEdit, QMessageBox

from core import Console, SandboxInfo
from gui.window.chrome.shortcuts_sheet import ShortcutsSheet
from gui.window.chrome.status_line import SandboxIndicator
from gui.window.workspace.window import MainWindow
from tests.conftest import wait_until

LEFT = Qt.MouseButton.LeftButton


def in_window(qtbot: Any, loop: Any, workspace: Path, body: Callable[[Console, MainWindow], Awaitable[None]]) -> None:
    """Open a console on `workspace`, show its window, run `body`, then close both."""
    async def scenario() -> None:
        console = Console(workspace)
        await console.open()
        window = MainWindow(console)
        qtbot.addWidget(window)
        window.start()
        window.show()
        try:
            await body(console, window)
        finally:
            await window.tasks.aclose()
            await console.close()
            window.close()

    loop.run_until_complete(scenario())


def test_bypass_mode_is_confirmed_and_keeps_a_banner_until_it_is_left(qtbot: Any, loop: Any,
                                                                      workspace: Path) -> None:
    async def body(console: Console, window: MainWindow) -> None:
        mode = window.mode
        assert not window.banner.isVisible() and mode.currentText() == "Ask every time"
        mode.setFocus()
        qtbot.keyClick(mode, Qt.Key.Key_End)  # the last mode: bypass
        box = mode.confirmation
        assert box is not None and box.isVisible() and "bypass" in box.text()
        assert mode.currentData() == "default"  # not until confirmed
        qtbot.mouseClick(box.button(QMessageBox.StandardButton.Cancel), LEFT)
        assert console.mode == "default" and mode.currentData() == "default" and mode.confirmation is None
        qtbot.keyClick(mode, Qt.Key.Key_End)
        qtbot.mouseClick(mode.confirmation.button(QMessageBox.StandardButton.Yes), LEFT)
        await wait_until(lambda: window.banner.isVisible(), what="the banner")
        assert console.mode == "bypass" and mode.currentData() == "bypass"
        assert "Bypass mode: calls run without asking, except" in window.banner.text.text()
        assert window.windowTitle().endswith("BYPASS MODE")
        window.tabs.setCurrentWidget(window.rules)
        assert window.banner.isVisible()  # on every tab
        qtbot.mouseClick(window.banner.leave, LEFT)
        await wait_until(lambda: not window.banner.isVisible(), what="the banner to go")
        assert console.mode == "default" and mode.currentData() == "default"
        assert "BYPASS" not in window.windowTitle()

    in_window(qtbot, loop, workspace, body)


def test_the_mode_selector_follows_modes_set_elsewhere(qtbot: Any, loop: Any, workspace: Path) -> None:
    async def body(console: Console, window: MainWindow) -> None:
        console.set_mode("plan")
        await wait_until(lambda: window.mode.currentData() == "plan", what="plan mode shown")
        assert not window.banner.isVisible()
        qtbot.keyClick(window.mode, Qt.Key.Key_Home)  # ask every time: no confirmation needed
        assert window.mode.confirmation is None
        await wait_until(lambda: console.mode == "default", what="the mode to change")
        console.set_mode("bypass")
        await wait_until(lambda: window.banner.isVisible(), what="the banner")
        assert window.mode.currentData() == "bypass"

    in_window(qtbot, loop, workspace, body)


def test_bypass_mode_from_the_user_settings_shows_the_banner_from_the_start(qtbot: Any, loop: Any,
                                                                          workspace: Path) -> None:
    (Path(os.environ["BELAY_CONFIG_DIR"]) / "settings.toml").write_text('mode = "bypass"\n')

    async def body(console: Console, window: MainWindow) -> None:
        assert console.mode == "bypass"
        assert window.banner.isVisible() and window.mode.currentData() == "bypass"

    in_window(qtbot, loop, workspace, body)


def test_the_status_bar_says_whether_commands_are_sandboxed(qtbot: Any, loop: Any, workspace: Path) -> None:
    async def body(console: Console, window: MainWindow) -> None:
        text, tip = window.sandbox.text(), window.sandbox.toolTip()
        if console.sandbox.available:
            network = "network on" if console.bash_settings.network else "network off"
            assert f"Sandbox: bubblewrap ({network})" in text and "OFF" not in text
            assert "read-only" in tip
        else:
            assert "Sandbox OFF" in text and "NOT sandboxed" in tip
        assert console.sandbox.detail in tip
        assert window.sandbox.isVisible()
        window.tabs.setCurrentWidget(window.rules)
        assert window.sandbox.isVisible()

    in_window(qtbot, loop, workspace, body)


def test_the_sandbox_indicator_says_why_the_sandbox_is_off(qtbot: Any) -> None:
    indicator = SandboxIndicator()
    qtbot.addWidget(indicator)
    off = SandboxInfo(available=False, kind="none",
                      detail="bubblewrap not found: commands run unsandboxed in their own process group")
    indicator.show_sandbox(off, network=True)
    assert "Sandbox OFF</b>: bubblewrap not found" in indicator.text() and "unsandboxed" not in indicator.text()
    assert "NOT sandboxed" in indicator.toolTip() and off.detail in indicator.toolTip()
    on = SandboxInfo(available=True, kind="bubblewrap", detail="bubblewrap 0.8.0: PID namespace")
    indicator.show_sandbox(on, network=False)
    assert "Sandbox: bubblewrap (network off)" in indicator.text()
    assert "cannot reach the network" in indicator.toolTip()


def test_a_batch_row_shows_its_plan_and_its_calls_sit_under_it(qtbot: Any, loop: Any, workspace: Path) -> None:
    from core import BatchCall

    async def body(console: Console, window: MainWindow) -> None:
        agent = await console.start_agent("planner", "scripted")
        calls = [BatchCall(id="ls", tool="LS", args={"path": str(workspace)}),
                 BatchCall(id="readme", tool="Read", args={"file_path": str(workspace / "README.md")},
                           depends_on=("ls",))]
        report = await console.run_batch(agent, calls, name="look around")
        await wait_until(lambda: window.model.timeline.batches.get(report.batch_id) is not None
                         and window.model.timeline.batches[report.batch_id].totals is not None, what="the batch")
        index = window.model.index_of(f"b:{report.batch_id}")
        assert "look around" in index.data() and window.model.rowCount(index) == 2
        window.tree.setCurrentIndex(index)
        await wait_until(lambda: "Critical path" in window.details.info.toPlainText(), what="the plan")
        assert "ls → readme" in window.details.info.toPlainText()

    in_window(qtbot, loop, workspace, body)


def test_f1_lists_the_windows_own_keys_and_question_mark_types_in_a_text_field(qtbot: Any, loop: Any,
                                                                                workspace: Path) -> None:
    async def body(console: Console, window: MainWindow) -> None:
        sheet = window.shortcuts_sheet()
        qtbot.addWidget(sheet)
        rows = {(keys, what) for _, keys, what in sheet.rows()}
        assert ("Ctrl+Z", "Undo selected call") in rows and ("F1", "Keyboard shortcuts") in rows
        assert ("Ctrl+Return", "Approve the shown request") in rows and ("Ctrl+Shift+A", "Go to the waiting requests") in rows
        assert any(what.startswith("Next / previous waiting request") for _, what in rows)
        menu_keys = {a.shortcut().toString() for a in window.findChildren(QAction) if not a.shortcut().isEmpty()}
        assert menu_keys <= {keys for keys, _ in rows}  # every menu key is on the sheet: it cannot drift
        sheet.close()
        window.tabs.setCurrentWidget(window.rules)
        window.rules.rule.setFocus()
        qtbot.keyClicks(window.rules.rule, "Bash(ls?")
        shown = [s for s in window.findChildren(ShortcutsSheet) if s.isVisible()]
        assert window.rules.rule.text() == "Bash(ls?" and not shown
        window.tree.setFocus()
        qtbot.keyClick(window.tree, Qt.Key.Key_Question)
        shown = [s for s in window.findChildren(ShortcutsSheet) if s.isVisible()]
        assert len(shown) == 1
        shown[0].reject()

    in_window(qtbot, loop, workspace, body)


def test_every_control_has_an_accessible_name_and_tab_starts_at_the_mode(qtbot: Any, loop: Any,
                                                                         workspace: Path) -> None:
    async def body(console: Console, window: MainWindow) -> None:
        controls = [w for kind in (QAbstractButton, QLineEdit, QComboBox, QAbstractItemView)
                    for w in window.findChildren(kind)
                    if w.window() is window and not w.objectName().startswith("qt_")  # Qt's own, not Belay's
                    and not isinstance(w.parent(), QAbstractItemView | QComboBox)]
        nameless = [f"{type(w).__name__} {w.objectName()} in {type(w.parent()).__name__}" for w in controls
                    if not (w.accessibleName() or (isinstance(w, QAbstractButton) and w.text().strip()))]
        assert len(controls) > 10 and nameless == [], "\n".join(nameless)
        chain, widget = [], window.mode
        while len(chain) < 6:  # what Tab reaches from the mode, past what it skips (labels, hidden controls)
            widget = widget.nextInFocusChain()
            if widget.focusPolicy() & Qt.FocusPolicy.TabFocus and widget.isVisibleTo(window):
                chain.append(widget)
        f = window.timeline_filter
        assert chain[:5] == [f.text, f.agent, f.status, f.tool, window.tree]  # as laid out, left to right, down
        table = window.rules.table
        assert table.horizontalHeader().sectionSize(0) > 60 or window.rules.model.rowCount() == 0

    in_window(qtbot, loop, workspace, body)


def test_with_nothing_waiting_the_details_get_the_room_and_a_waiting_call_takes_it(qtbot: Any, loop: Any,
                                                                                  workspace: Path) -> None:
    async def body(console: Console, window: MainWindow) -> None:
        window.resize(1400, 860)
        await asyncio.sleep(0.05)
        assert window.approvals.height() * 3 < window.tabs.height()  # an empty panel is a line or two
        agent = await console.start_agent("lead", "scripted")
        call = asyncio.ensure_future(console.call(agent, "Write", {"file_path": f"{workspace}/n.txt", "content": "n"}))
        await wait_until(lambda: window.approvals.current is not None, what="the request")
        await asyncio.sleep(0.05)
        assert window.approvals.height() > window.tabs.height()
        console.deny(window.approvals.current.call_id)
        await call

    in_window(qtbot, loop, workspace, body)
