"""The MCP servers tab (gui.window.panels.mcp): which servers are configured, whether each is ready or why not,
and a way to restart one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor

from core import Console, ServerState, ServerStatus
from gui.window.kit.theme import LIGHT
from gui.window.panels.mcp import McpPanel
from gui.window.workspace.window import MainWindow
from tests.conftest import ROOT, wait_until
from tests.gui.window.workspace.test_window import in_window

LEFT = Qt.MouseButton.LeftButton
SERVERS = [ServerStatus(name="docs", state=ServerState.READY, tools=3),
           ServerStatus(name="tickets", state=ServerState.FAILED, reason="the server closed the connection"),
           ServerStatus(name="search", state=ServerState.STARTING)]


def _panel(qtbot: Any) -> tuple[McpPanel, list[str]]:
    panel = McpPanel()
    qtbot.addWidget(panel)
    panel.show()
    asked: list[str] = []
    panel.restart_requested.connect(asked.append)
    return panel, asked


def test_with_no_server_configured_it_says_how_to_add_one(qtbot: Any) -> None:
    panel, _ = _panel(qtbot)
    assert panel.empty.isVisible() and not panel.tree.isVisible()
    assert "[mcp.servers.docs]" in panel.empty.text() and "mcp__docs__&lt;tool&gt;" in panel.empty.text()
    assert not panel.restart_button.isEnabled()


def test_each_server_says_its_state_in_its_colour_and_its_tools(qtbot: Any) -> None:
    panel, _ = _panel(qtbot)
    panel.show_servers(SERVERS)
    assert not panel.empty.isVisible() and panel.tree.isVisible()
    assert panel.states() == {"docs": "ready (3 tools)", "tickets": "failed: the server closed the connection",
                              "search": "starting"}
    rows = {panel.tree.topLevelItem(i).text(0): panel.tree.topLevelItem(i) for i in range(3)}
    assert [rows[name].text(2) for name in ("docs", "tickets", "search")] == ["3", "0", "0"]
    colours = {name: QColor(rows[name].foreground(1).color()).name() for name in rows}
    assert colours == {"docs": LIGHT.success, "tickets": LIGHT.danger, "search": LIGHT.warning}
    assert rows["tickets"].toolTip(1) == "failed: the server closed the connection"  # the whole reason


def test_restart_asks_for_the_chosen_server_by_button_or_enter_and_the_choice_survives_a_refresh(
        qtbot: Any) -> None:
    panel, asked = _panel(qtbot)
    panel.show_servers(SERVERS)
    assert not panel.restart_button.isEnabled()  # nothing chosen yet
    panel.tree.setCurrentItem(panel.tree.topLevelItem(1))
    assert panel.restart_button.isEnabled()
    qtbot.mouseClick(panel.restart_button, LEFT)
    panel.show_servers([SERVERS[0], SERVERS[1].model_copy(update={"state": ServerState.STARTING}), SERVERS[2]])
    assert panel.tree.currentItem().text(0) == "tickets" and panel.restart_button.isEnabled()
    panel.tree.setFocus()
    qtbot.keyClick(panel.tree, Qt.Key.Key_Return)
    assert asked == ["tickets", "tickets"]
    panel.show_servers([])
    assert not panel.restart_button.isEnabled() and panel.empty.isVisible()


def test_the_mcp_tab_shows_a_configured_server_and_restarts_it_after_a_crash(qtbot: Any, loop: Any,
                                                                                workspace: Path) -> None:
    import sys

    from core.policy.settings import config_dir

    toy = ROOT / "tests" / "core" / "mcp" / "toy_server.py"
    (config_dir() / "settings.toml").write_text(
        f'[mcp.servers.toy]\ncommand = "{sys.executable}"\nargs = ["{toy}", "stdio"]\n')

    async def body(console: Console, window: MainWindow) -> None:
        await wait_until(lambda: window.mcp.states().get("toy", "").startswith("ready"), timeout=30,
                         what="the toy server to be ready")
        assert "mcp__toy__echo" in console.registry
        console.set_mode("bypass")  # the window is attached: without it the call would wait for a person
        agent = await console.start_agent("agent", "scripted")
        await console.call(agent, "mcp__toy__crash", {})  # the server process dies
        await wait_until(lambda: window.mcp.states()["toy"].startswith("failed"), timeout=30,
                         what="the crash to show")
        window.tabs.setCurrentWidget(window.mcp)
        window.mcp.tree.setCurrentItem(window.mcp.tree.topLevelItem(0))
        qtbot.mouseClick(window.mcp.restart_button, LEFT)
        await wait_until(lambda: window.mcp.states()["toy"].startswith("ready"), timeout=30, what="the restart")

    in_window(qtbot, loop, workspace, body)
