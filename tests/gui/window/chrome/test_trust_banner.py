"""The trust bar: a workspace's own settings that would loosen the rules wait, listed, until the person trusts it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt

from core import Console
from gui.window.chrome.trust_banner import TrustBanner
from gui.window.workspace.window import MainWindow
from tests.conftest import wait_until
from tests.gui.window.workspace.test_window import in_window


def test_a_workspace_allowing_its_own_commands_shows_the_bar_until_trusted(qtbot: Any, loop: Any,
                                                                           workspace: Path) -> None:
    (workspace / ".belay").mkdir()
    (workspace / ".belay" / "settings.toml").write_text(
        'mode = "acceptEdits"\n[permissions]\nallow = ["Bash(python3 run_tests.py:*)"]\ndeny = ["Bash(curl:*)"]\n')

    async def body(console: Console, window: MainWindow) -> None:
        bar = window.trust
        await wait_until(bar.isVisible, what="the trust bar")
        assert "Bash(python3 run_tests.py:*)" in bar.text.text() and "accept_edits" in bar.text.text()
        assert console.mode == "default" and window.mode.currentData() == "default"
        assert "Bash(curl:*)" in [r.rule for r in console.rules()]  # deny rules apply at once
        assert "Bash(python3 run_tests.py:*)" not in [r.rule for r in console.rules()]
        qtbot.mouseClick(bar.trust, Qt.MouseButton.LeftButton)
        await wait_until(lambda: not bar.isVisible(), what="the bar to go")
        assert console.mode == "accept_edits" and window.mode.currentData() == "accept_edits"
        assert "Bash(python3 run_tests.py:*)" in [r.rule for r in console.rules()]

    in_window(qtbot, loop, workspace, body)
    reopened = []

    async def again(console: Console, window: MainWindow) -> None:
        reopened.append(window.trust.isVisible())

    in_window(qtbot, loop, workspace, again)  # trust is remembered
    assert reopened == [False]


def test_a_workspace_without_loosening_settings_shows_no_bar(qtbot: Any) -> None:
    bar = TrustBanner()
    qtbot.addWidget(bar)
    bar.show_held_back([f"allow rule Bash(x{i}:*)" for i in range(6)])
    assert not bar.isHidden() and "and 2 more" in bar.text.text()
    bar.show_held_back([])
    assert bar.isHidden()
