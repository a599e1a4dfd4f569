"""The parts of a workspace window, made together: the right-hand tabs in the order of their keys (the shells tab
counting the shells that run), and a timeline whose new agents come open."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from core import AgentKey, Console, RunKey
from gui.window.workspace.window import MainWindow
from tests.conftest import wait_until
from tests.gui.window.workspace.test_window import in_window


def _tab_names(window: MainWindow) -> list[str]:
    return [window.tabs.tabText(i) for i in range(window.tabs.count())]


def test_the_tabs_are_in_the_order_of_their_keys_and_the_shells_tab_counts_the_running_shells(
        qtbot: Any, loop: Any, workspace: Path) -> None:
    async def body(console: Console, window: MainWindow) -> None:
        parts = window.parts
        assert _tab_names(window) == ["Details", "Changes", "Background shells", "Rules", "MCP servers",
                                      "Conversation"]
        assert [window.tabs.widget(i) for i in range(6)] == [tab for tab, _, _ in parts.tab_list()]
        tips = [window.tabs.tabToolTip(i) for i in range(6)]
        assert tips[4] == "The MCP servers in your settings, their state, and restart (Ctrl+5)"
        assert all(tip.endswith(f"(Ctrl+{n})") for n, tip in enumerate(tips, 1))
        await console.add_rule("Bash(sleep:*)", "allow", "session")
        agent = await console.start_agent("dev", "scripted")
        await console.call(agent, "Bash", {"command": "sleep 60", "run_in_background": True})
        await wait_until(lambda: "Background shells (1 running)" in _tab_names(window), what="the shell counted")
        [shell_id] = console.timeline.shells
        assert await console.kill_shell(shell_id)
        await wait_until(lambda: "Background shells" in _tab_names(window), what="the count to go")

    in_window(qtbot, loop, workspace, body)


def test_a_new_agent_and_its_calls_come_open_in_the_timeline(qtbot: Any, loop: Any, workspace: Path) -> None:
    async def body(console: Console, window: MainWindow) -> None:
        lead = await console.start_agent("lead", "scripted")
        helper = await console.start_agent("helper", "subagent", parent=lead)
        read = await console.call(helper, "Read", {"file_path": str(workspace / "README.md")})
        rows = window.tree.rows
        await wait_until(lambda: rows.row_of(RunKey(read.call_id)) is not None, what="the call shown, unfolded")
        assert rows.is_expanded(AgentKey(lead.agent_id)) and rows.is_expanded(AgentKey(helper.agent_id))

    in_window(qtbot, loop, workspace, body)
