"""The window around the policy: the rules tab, the mode and its banner, background shells, the sandbox."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt

from core import Console, RunStatus
from gui.main_window import MainWindow
from tests.conftest import wait_until
from tests.integration.hostile import processes_matching

LEFT = Qt.MouseButton.LeftButton


def _in_window(qtbot: Any, loop: Any, workspace: Path, body: Callable[[Console, MainWindow], Awaitable[None]]) -> None:
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


def _rule_rows(window: MainWindow) -> list[tuple[str, str, str]]:
    table = window.rules.table
    return [(table.item(r, 0).text(), table.item(r, 1).text(), table.item(r, 2).text())
            for r in range(table.rowCount())]


def test_rules_are_added_removed_and_a_bad_one_loses_nothing(qtbot: Any, loop: Any, workspace: Path) -> None:
    async def body(console: Console, window: MainWindow) -> None:
        view = window.rules
        window.tabs.setCurrentWidget(view)
        assert view.empty.isVisible() and "No rules yet" in view.empty.text()
        view.rule.setText("Bash(npm run test:*)")
        view.scope.setCurrentIndex(view.scope.findData("workspace"))
        qtbot.mouseClick(view.add_button, LEFT)
        await wait_until(lambda: _rule_rows(window) == [("Bash(npm run test:*)", "allow", "workspace")],
                         what="the rule in the table")
        assert "Bash(npm run test:*)" in (workspace / ".belay" / "settings.toml").read_text()
        view.rule.setText("Bash(npm:* x)")
        qtbot.mouseClick(view.add_button, LEFT)
        await wait_until(lambda: "invalid rule" in view.message.text(), what="the error")
        assert [(e.rule, e.scope) for e in console.rules()] == [("Bash(npm run test:*)", "workspace")]
        view.table.selectRow(0)
        view.rule.setText("Bash(npm:* x)")  # an edit that fails keeps the old rule
        qtbot.mouseClick(view.replace_button, LEFT)
        await wait_until(lambda: "invalid rule" in view.message.text() and "Added" not in view.message.text(),
                         what="the refused edit")
        assert [e.rule for e in console.rules()] == ["Bash(npm run test:*)"]
        view.table.selectRow(0)
        view.rule.setText("Bash(npm run lint:*)")
        qtbot.mouseClick(view.replace_button, LEFT)
        await wait_until(lambda: [r[0] for r in _rule_rows(window)] == ["Bash(npm run lint:*)"], what="the edit")
        view.table.selectRow(0)
        qtbot.mouseClick(view.remove_button, LEFT)
        await wait_until(lambda: _rule_rows(window) == [], what="the removal")
        assert console.rules() == [] and view.empty.isVisible()

    _in_window(qtbot, loop, workspace, body)


def test_a_dry_run_lists_the_earlier_calls_a_rule_would_have_allowed(qtbot: Any, loop: Any,
                                                                     workspace: Path) -> None:
    async def first_session() -> None:
        async with Console(workspace) as console:  # nobody to ask: both are denied
            agent = await console.start_agent("agent", "scripted")
            for name in ("a", "b"):
                outcome = await console.call(agent, "Bash", {"command": f"touch {name}.txt"})
                assert outcome.status == RunStatus.DENIED
            await console.call(agent, "Bash", {"command": "git push"})

    loop.run_until_complete(first_session())

    async def body(console: Console, window: MainWindow) -> None:
        view = window.rules
        view.rule.setText("Bash(touch:*)")
        qtbot.mouseClick(view.dry_run_button, LEFT)
        await wait_until(lambda: "would have auto-approved 2 earlier calls" in view.message.text(),
                         what="the dry run")
        listed = [view.matches.item(i).text() for i in range(view.matches.count())]
        assert len(listed) == 2 and all("touch" in line for line in listed)
        assert console.rules() == []  # nothing was saved

    _in_window(qtbot, loop, workspace, body)


def test_bypass_mode_is_confirmed_and_keeps_a_banner_until_it_is_left(qtbot: Any, loop: Any,
                                                                      workspace: Path) -> None:
    async def body(console: Console, window: MainWindow) -> None:
        assert not window.banner.isVisible()
        window.mode.confirm_bypass = lambda: False  # type: ignore[method-assign]
        window.mode.activated.emit(window.mode.findData("bypass"))
        assert console.mode == "default" and window.mode.currentData() == "default"
        window.mode.confirm_bypass = lambda: True  # type: ignore[method-assign]
        window.mode.setCurrentIndex(window.mode.findData("bypass"))
        window.mode.activated.emit(window.mode.findData("bypass"))
        await wait_until(lambda: window.banner.isVisible(), what="the banner")
        assert console.mode == "bypass" and "Bypass mode" in window.banner.text.text()
        qtbot.mouseClick(window.banner.leave, LEFT)
        await wait_until(lambda: not window.banner.isVisible(), what="the banner to go")
        assert console.mode == "default" and window.mode.currentData() == "default"

    _in_window(qtbot, loop, workspace, body)


def test_a_background_shell_is_listed_with_its_output_and_stopped(qtbot: Any, loop: Any, workspace: Path) -> None:
    marker = "98763"

    async def body(console: Console, window: MainWindow) -> None:
        await console.add_rule("Bash(sleep:*)", "allow", "session")
        agent = await console.start_agent("agent", "scripted")
        await console.call(agent, "Bash", {"command": f"echo serving; sleep {marker}", "run_in_background": True})
        shells = window.shells
        await wait_until(lambda: shells.list.count() == 1, what="the shell in the list")
        assert "running" in window.tabs.tabText(window.tabs.indexOf(shells))
        shells.list.setCurrentRow(0)
        await wait_until(lambda: "serving" in shells.output.toPlainText(), what="its output")
        assert shells.stop_button.isEnabled()
        qtbot.mouseClick(shells.stop_button, LEFT)
        await wait_until(lambda: "stopped" in shells.list.item(0).text(), what="the shell to stop")
        assert processes_matching(f"sleep {marker}") == []
        assert window.tabs.tabText(window.tabs.indexOf(shells)) == "Background shells"

    _in_window(qtbot, loop, workspace, body)


def test_the_status_bar_says_whether_commands_are_sandboxed(qtbot: Any, loop: Any, workspace: Path) -> None:
    async def body(console: Console, window: MainWindow) -> None:
        text = window.sandbox.text()
        if console.sandbox.available:
            assert "bubblewrap" in text and "OFF" not in text
        else:
            assert "Sandbox OFF" in text
        assert window.sandbox.toolTip() == console.sandbox.detail

    _in_window(qtbot, loop, workspace, body)


def test_rewind_to_here_previews_then_undoes_every_later_call(qtbot: Any, loop: Any, workspace: Path) -> None:
    notes = workspace / "notes.txt"

    async def body(console: Console, window: MainWindow) -> None:
        await console.add_rule("Write", "allow", "session")
        agent = await console.start_agent("agent", "scripted")
        ids = [(await console.call(agent, "Write", {"file_path": str(notes), "content": text})).call_id
               for text in ("one\n", "two\n", "three\n")]
        previewed: list[list[str]] = []

        def confirm(plan: list[Any]) -> bool:
            previewed.append([r.call_id for r in plan])
            return True

        window.confirm_rewind = confirm  # type: ignore[method-assign]
        window.rewind(ids[0])
        await wait_until(lambda: "Rewound" in window.statusBar().currentMessage(), what="the rewind")
        assert previewed == [[ids[2], ids[1]]]
        assert notes.read_text() == "one\n"
        assert "undid 2 of 2" in window.statusBar().currentMessage()

    _in_window(qtbot, loop, workspace, body)


def test_the_changes_tab_lists_shell_side_effects_by_file(qtbot: Any, loop: Any, workspace: Path) -> None:
    async def body(console: Console, window: MainWindow) -> None:
        view = window.changes
        assert "No file has changed yet" in view.summary.text()
        await console.add_rule("Bash(touch:*)", "allow", "session")
        await console.add_rule("Bash(rm:*)", "allow", "session")
        agent = await console.start_agent("agent", "scripted")
        made = await console.call(agent, "Bash", {"command": "touch a.txt b.txt"})
        await console.call(agent, "Bash", {"command": "rm a.txt"})
        await wait_until(lambda: len(view.file_rows()) == 2, what="two files in the changes tab")
        rows = dict(view.file_rows())
        assert len(rows["a.txt"]) == 2 and rows["b.txt"] == ["Bash · touch a.txt b.txt"]
        assert "2 files changed by 2 calls" in view.summary.text()
        b_row = next(view.tree.topLevelItem(i) for i in range(2) if view.tree.topLevelItem(i).text(0) == "b.txt")
        view.tree.itemClicked.emit(b_row.child(0), 0)
        await wait_until(lambda: window.details.key == f"r:{made.call_id}", what="the call to be selected")
        assert window.tabs.currentWidget() is window.details

    _in_window(qtbot, loop, workspace, body)
