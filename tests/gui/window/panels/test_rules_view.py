"""The rules tab: adding, removing, editing and dry-running rules through the real console."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt

from core import Console, Lagged, RunStatus
from gui.window.panels.rules_view import RulesView
from gui.window.workspace.window import MainWindow
from tests.conftest import wait_until
from tests.gui.window.workspace.test_window import in_window

LEFT = Qt.MouseButton.LeftButton


def _rows(window: MainWindow) -> list[tuple[str, str, str]]:
    model = window.rules.model
    return [(model.index(r, 0).data(), model.index(r, 1).data(), model.index(r, 2).data())
            for r in range(model.rowCount())]


def _console_rules(console: Console) -> list[tuple[str, str, str]]:
    return [(e.rule, e.action, e.scope) for e in console.rules()]


def _rules_tab(window: MainWindow) -> RulesView:
    window.tabs.setCurrentWidget(window.rules)
    return window.rules


def _select(window: MainWindow, rule: str) -> None:
    row = next(r for r, (text, _, _) in enumerate(_rows(window)) if text == rule)
    window.rules.table.selectRow(row)


def test_a_rule_added_in_the_view_is_in_force_saved_and_shown(qtbot: Any, loop: Any, workspace: Path) -> None:
    async def body(console: Console, window: MainWindow) -> None:
        view = _rules_tab(window)
        assert view.empty.isVisible() and "No rules yet" in view.empty.text() and not view.table.isVisible()
        assert "Bash(npm run test:*)" in view.empty.text() and "Read(./src/**)" in view.empty.text()
        qtbot.keyClicks(view.rule, "Bash(npm run test:*)")
        view.scope.setCurrentIndex(view.scope.findData("workspace"))
        qtbot.mouseClick(view.add_button, LEFT)
        await wait_until(lambda: _rows(window) == [("Bash(npm run test:*)", "allow", "workspace")],
                         what="the rule in the table")
        assert _console_rules(console) == [("Bash(npm run test:*)", "allow", "workspace")]
        assert "Bash(npm run test:*)" in (workspace / ".belay" / "settings.toml").read_text()
        assert view.table.isVisible() and not view.empty.isVisible()
        assert view.selected() is not None and view.selected().rule == "Bash(npm run test:*)"
        view.rule.setText("Read(./docs/**)")
        qtbot.keyClick(view.rule, Qt.Key.Key_Return)  # Enter adds too
        await wait_until(lambda: len(_rows(window)) == 2, what="the second rule")

    in_window(qtbot, loop, workspace, body)


def test_a_malformed_rule_is_refused_with_its_reason_and_nothing_is_lost(qtbot: Any, loop: Any,
                                                                         workspace: Path) -> None:
    async def body(console: Console, window: MainWindow) -> None:
        view = _rules_tab(window)
        qtbot.keyClicks(view.rule, "Bash(npm:* x)")
        qtbot.mouseClick(view.add_button, LEFT)
        await wait_until(lambda: "invalid rule" in view.message.text(), what="the error")
        assert console.rules() == [] and _rows(window) == []
        assert view.rule.text() == "Bash(npm:* x)"  # still there to be fixed
        assert not (workspace / ".belay" / "settings.toml").exists()

    in_window(qtbot, loop, workspace, body)


def test_the_selected_rule_is_removed(qtbot: Any, loop: Any, workspace: Path) -> None:
    async def body(console: Console, window: MainWindow) -> None:
        await console.add_rule("Bash(ls:*)", "allow", "session")
        await console.add_rule("Edit(./docs/**)", "allow", "workspace")
        await wait_until(lambda: len(_rows(window)) == 2, what="two rules")
        view = _rules_tab(window)
        assert not view.remove_button.isEnabled()
        _select(window, "Edit(./docs/**)")
        assert view.rule.text() == "Edit(./docs/**)" and view.scope.currentData() == "workspace"
        qtbot.mouseClick(view.remove_button, LEFT)
        await wait_until(lambda: [r[0] for r in _rows(window)] == ["Bash(ls:*)"], what="the removal")
        assert _console_rules(console) == [("Bash(ls:*)", "allow", "session")]
        assert "Edit(./docs/**)" not in (workspace / ".belay" / "settings.toml").read_text()
        _select(window, "Bash(ls:*)")
        view.table.setFocus()
        qtbot.keyClick(view.table, Qt.Key.Key_Delete)
        await wait_until(lambda: _rows(window) == [], what="the removal by key")
        assert console.rules() == [] and view.empty.isVisible()

    in_window(qtbot, loop, workspace, body)


def test_a_failed_edit_keeps_the_old_rule_and_a_good_one_replaces_it(qtbot: Any, loop: Any,
                                                                     workspace: Path) -> None:
    async def body(console: Console, window: MainWindow) -> None:
        await console.add_rule("Bash(npm run test:*)", "allow", "workspace")
        await wait_until(lambda: len(_rows(window)) == 1, what="the rule")
        view = _rules_tab(window)
        _select(window, "Bash(npm run test:*)")
        view.rule.setText("Bash(npm:* x)")
        qtbot.mouseClick(view.replace_button, LEFT)
        await wait_until(lambda: "invalid rule" in view.message.text(), what="the refused edit")
        assert _console_rules(console) == [("Bash(npm run test:*)", "allow", "workspace")]
        assert _rows(window) == [("Bash(npm run test:*)", "allow", "workspace")]
        assert "npm run test" in (workspace / ".belay" / "settings.toml").read_text()
        assert view.rule.text() == "Bash(npm:* x)"
        view.rule.setText("Bash(npm run lint:*)")
        view.action.setCurrentText("ask")
        qtbot.mouseClick(view.replace_button, LEFT)
        await wait_until(lambda: _rows(window) == [("Bash(npm run lint:*)", "ask", "workspace")], what="the edit")
        assert _console_rules(console) == [("Bash(npm run lint:*)", "ask", "workspace")]
        assert "Replaced" in view.message.text()
        settings = (workspace / ".belay" / "settings.toml").read_text()
        assert "npm run lint" in settings and "npm run test" not in settings

    in_window(qtbot, loop, workspace, body)


def test_an_edit_whose_old_rule_cannot_be_removed_changes_nothing(qtbot: Any, loop: Any, workspace: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    async def body(console: Console, window: MainWindow) -> None:
        await console.add_rule("Bash(npm run test:*)", "allow", "workspace")
        await wait_until(lambda: len(_rows(window)) == 1, what="the rule")
        remove = console.remove_rule

        async def stuck(rule: str, action: Any, scope: str) -> bool:
            if rule == "Bash(npm run test:*)":
                raise PermissionError(13, "Permission denied", ".belay/settings.toml")
            return await remove(rule, action, scope)

        monkeypatch.setattr(console, "remove_rule", stuck)
        view = _rules_tab(window)
        _select(window, "Bash(npm run test:*)")
        view.rule.setText("Bash(npm run lint:*)")
        qtbot.mouseClick(view.replace_button, LEFT)
        await wait_until(lambda: "nothing changed" in view.message.text(), what="the refused edit")
        await wait_until(lambda: len(_rows(window)) == 1, what="the new rule to be taken back")
        assert _console_rules(console) == [("Bash(npm run test:*)", "allow", "workspace")]
        assert "Permission denied" in view.message.text()

    in_window(qtbot, loop, workspace, body)


def test_the_selection_stays_on_its_rule_when_a_rule_is_added_elsewhere(qtbot: Any, loop: Any,
                                                                        workspace: Path) -> None:
    async def body(console: Console, window: MainWindow) -> None:
        await console.add_rule("Bash(ls:*)", "allow", "session")
        await console.add_rule("Bash(cat:*)", "allow", "session")
        await wait_until(lambda: len(_rows(window)) == 2, what="two rules")
        view = _rules_tab(window)
        _select(window, "Bash(cat:*)")
        view.rule.setText("Bash(half typed")
        await console.add_rule("Bash(git status:*)", "allow", "user")  # "Always allow" elsewhere: listed first
        await wait_until(lambda: len(_rows(window)) == 3, what="three rules")
        assert view.selected() is not None and view.selected().rule == "Bash(cat:*)"
        assert view.rule.text() == "Bash(half typed"  # what the person was typing is kept
        qtbot.mouseClick(view.remove_button, LEFT)
        await wait_until(lambda: len(_rows(window)) == 2, what="the removal")
        assert [e.rule for e in console.rules()] == ["Bash(git status:*)", "Bash(ls:*)"]

    in_window(qtbot, loop, workspace, body)


def test_a_dry_run_lists_the_earlier_calls_a_rule_would_have_allowed(qtbot: Any, loop: Any,
                                                                     workspace: Path) -> None:
    async def first_session() -> None:
        async with Console(workspace) as console:  # nobody to ask: the writes are denied
            agent = await console.start_agent("agent", "scripted")
            for name in ("a.txt", "b.txt"):
                outcome = await console.call(agent, "Write", {"file_path": str(workspace / name), "content": "x"})
                assert outcome.status == RunStatus.DENIED
            await console.call(agent, "Bash", {"command": "git push"})

    loop.run_until_complete(first_session())

    async def body(console: Console, window: MainWindow) -> None:
        view = _rules_tab(window)
        assert not view.matches.isVisible()
        qtbot.keyClicks(view.rule, "Write")
        qtbot.mouseClick(view.dry_run_button, LEFT)
        await wait_until(lambda: "would have auto-approved 2 earlier calls" in view.message.text(),
                         what="the dry run")
        assert view.matches.isVisible()
        listed = [[view.matches.topLevelItem(i).text(c) for c in range(4)]
                  for i in range(view.matches.topLevelItemCount())]
        assert sorted(row[1:] for row in listed) == [["Write", "a.txt", "denied"], ["Write", "b.txt", "denied"]]
        assert all(row[0][:4].isdigit() for row in listed)  # when
        assert console.rules() == []  # nothing was saved
        qtbot.keyClicks(view.rule, "(./docs/**)")  # the results belonged to "Write": editing clears them
        assert not view.matches.isVisible() and view.message.text() == ""
        window.activateWindow()
        await wait_until(window.isActiveWindow, what="the window to be active")
        qtbot.keyClick(view.rule, Qt.Key.Key_R, Qt.KeyboardModifier.ControlModifier)
        await wait_until(lambda: "would have auto-approved 0 earlier calls" in view.message.text(),
                         what="the second dry run")
        view.rule.setText("Write(")
        qtbot.mouseClick(view.dry_run_button, LEFT)
        await wait_until(lambda: "invalid rule" in view.message.text(), what="the malformed dry run")

    in_window(qtbot, loop, workspace, body)


@pytest.mark.allow_warning_logs  # the console logs each settings problem
def test_settings_problems_are_shown_above_the_rules(qtbot: Any, loop: Any, workspace: Path) -> None:
    settings = Path(os.environ["BELAY_CONFIG_DIR"]) / "settings.toml"
    settings.write_text('[permissions]\nallow = ["Bash(ls:*)", "Bash(npm:* x)"]\n')

    async def body(console: Console, window: MainWindow) -> None:
        view = _rules_tab(window)
        assert console.settings_problems
        assert view.problems.isVisible() and "could not be used" in view.problems.text()
        assert "Bash(npm:* x)" in view.problems.text()
        assert _rows(window) == [("Bash(ls:*)", "allow", "user (all workspaces)")]

    in_window(qtbot, loop, workspace, body)


@pytest.mark.allow_warning_logs  # the bridge says it fell behind
def test_a_window_that_fell_behind_shows_the_rules_and_mode_in_force(qtbot: Any, loop: Any, workspace: Path) -> None:
    async def body(console: Console, window: MainWindow) -> None:
        console.policy.add_rule("Bash(make:*)", "allow", "session")  # changed without an announcement
        console.policy.set_mode("plan")
        window.bridge.apply([Lagged(missed=3)])  # as if the announcements had been dropped
        assert _rows(window) == [("Bash(make:*)", "allow", "session")]
        assert window.mode.currentData() == "plan"

    in_window(qtbot, loop, workspace, body)
