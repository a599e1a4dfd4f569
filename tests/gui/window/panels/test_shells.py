"""The background shells tab: listed from the timeline, output followed, stopped through the console."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt

from core import Console, RunStatus, ShellFinished, ShellOutput, ShellStarted, Timeline
from gui.window.panels.shells import ShellsPanel
from gui.window.workspace.window import MainWindow
from tests.conftest import wait_until
from tests.gui.window.workspace.test_window import in_window
from tests.integration.hostile import processes_matching

LEFT = Qt.MouseButton.LeftButton


def _panel(qtbot: Any) -> tuple[Timeline, ShellsPanel]:
    timeline = Timeline()
    panel = ShellsPanel(timeline)
    qtbot.addWidget(panel)
    panel.show()
    return timeline, panel


def _states(panel: ShellsPanel) -> list[tuple[str, str]]:
    return [(panel.list.topLevelItem(i).text(0), panel.list.topLevelItem(i).text(1))
            for i in range(panel.list.topLevelItemCount())]


def test_an_empty_panel_says_how_shells_start(qtbot: Any) -> None:
    _, panel = _panel(qtbot)
    assert panel.empty.isVisible() and "run_in_background" in panel.empty.text()
    assert not panel.stop_button.isVisible() and not panel.list.isVisible()


def test_shells_are_listed_with_their_state_and_the_newest_is_shown(qtbot: Any) -> None:
    timeline, panel = _panel(qtbot)
    timeline.apply(ShellStarted(seq=1, shell_id="bash_1", call_id="c1", command="npm run dev"))
    panel.refresh("bash_1")
    assert _states(panel) == [("bash_1", "running")] and not panel.empty.isVisible()
    assert panel.current_shell() == "bash_1" and panel.stop_button.isEnabled()
    timeline.apply(ShellStarted(seq=2, shell_id="bash_2", call_id="c2", command="pytest --watch\nsecond line"))
    timeline.apply(ShellFinished(seq=3, shell_id="bash_1", exit_code=None, killed=True))
    panel.refresh()
    assert _states(panel) == [("bash_1", "stopped"), ("bash_2", "running")]
    assert panel.list.topLevelItem(1).text(2) == "pytest --watch"  # first line; the whole command in the tooltip
    assert panel.current_shell() == "bash_1" and not panel.stop_button.isEnabled()
    timeline.apply(ShellFinished(seq=4, shell_id="bash_2", exit_code=2))
    panel.refresh("bash_2")
    assert _states(panel)[1] == ("bash_2", "exited 2")


def test_output_is_appended_and_followed_only_when_at_the_end(qtbot: Any) -> None:
    timeline, panel = _panel(qtbot)
    timeline.apply(ShellStarted(seq=1, shell_id="bash_1", call_id="c1", command="server"))
    panel.refresh("bash_1")
    bar = panel.output.verticalScrollBar()
    for seq in range(2, 202):
        timeline.apply(ShellOutput(seq=seq, shell_id="bash_1", text=f"line {seq}\n"))
        panel.refresh("bash_1")
    assert panel.output.toPlainText().startswith("line 2\n") and "line 201" in panel.output.toPlainText()
    assert bar.maximum() > 0 and bar.value() == bar.maximum()  # follows the end
    bar.setValue(0)  # the person scrolls up to read
    timeline.apply(ShellOutput(seq=300, shell_id="bash_1", text="line 300\n"))
    panel.refresh("bash_1")
    assert panel.output.toPlainText().endswith("line 300\n") and bar.value() == 0


def test_stopping_asks_once_and_asking_for_the_call_names_it(qtbot: Any) -> None:
    timeline, panel = _panel(qtbot)
    timeline.apply(ShellStarted(seq=1, shell_id="bash_1", call_id="c1", command="sleep 100"))
    panel.refresh()
    with qtbot.waitSignal(panel.stop_requested) as stopped:
        qtbot.mouseClick(panel.stop_button, LEFT)
    assert stopped.args == ["bash_1"]
    assert _states(panel) == [("bash_1", "stopping…")] and not panel.stop_button.isEnabled()
    panel.stop_failed("bash_1")
    assert panel.stop_button.isEnabled()
    with qtbot.waitSignal(panel.call_chosen) as chosen:
        qtbot.mouseClick(panel.call_button, LEFT)
    assert chosen.args == ["c1"]


def test_a_background_shell_from_a_bash_call_is_listed_and_stopped(qtbot: Any, loop: Any, workspace: Path) -> None:
    marker = "98763"

    async def body(console: Console, window: MainWindow) -> None:
        await console.add_rule("Bash(sleep:*)", "allow", "session")
        await console.add_rule("Bash(echo:*)", "allow", "session")
        agent = await console.start_agent("agent", "scripted")
        outcome = await console.call(agent, "Bash", {"command": f"echo serving; sleep {marker}",
                                                     "run_in_background": True})
        assert outcome.status == RunStatus.DONE
        shells = window.shells
        await wait_until(lambda: shells.list.topLevelItemCount() == 1, what="the shell in the list")
        assert window.tabs.tabText(window.tabs.indexOf(shells)) == "Background shells (1 running)"
        qtbot.keyClick(window.tree, Qt.Key.Key_3, Qt.KeyboardModifier.ControlModifier)
        assert window.tabs.currentWidget() is shells
        await wait_until(lambda: "serving" in shells.output.toPlainText(), what="its output")
        assert _states(shells)[0][1] == "running" and shells.stop_button.isEnabled()
        assert processes_matching(f"sleep {marker}") != []
        qtbot.mouseClick(shells.stop_button, LEFT)
        await wait_until(lambda: _states(shells)[0][1] == "stopped", what="the shell to stop")
        assert processes_matching(f"sleep {marker}") == []
        assert window.tabs.tabText(window.tabs.indexOf(shells)) == "Background shells"
        assert not shells.stop_button.isEnabled()
        qtbot.mouseClick(shells.call_button, LEFT)
        assert window.details.key == f"r:{outcome.call_id}" and window.tabs.currentWidget() is window.details

    in_window(qtbot, loop, workspace, body)
