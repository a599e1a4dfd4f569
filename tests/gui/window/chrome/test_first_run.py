"""The first-run screen: its three ways in do what they say, and it is shown once."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QPoint, QRect
from PySide6.QtWidgets import QApplication, QMessageBox

from core import config_dir
from gui.window.app import WatchOptions, _watch
from gui.window.chrome.first_run import FirstRunScreen, demo_command, first_run_done
from gui.window.hub.window import HubWindow
from tests.conftest import wait_until

SHOTS = Path(os.environ.get("BELAY_SHOTS", "/tmp/belay-shots"))


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The agent CLIs' user settings live under a private home."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for variable in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME"):
        monkeypatch.delenv(variable, raising=False)
    return home


def test_the_screen_offers_the_three_ways_in_and_fits_a_small_screen(qtbot: Any) -> None:
    screen = FirstRunScreen()
    qtbot.addWidget(screen)
    screen.resize(1024, 640)
    screen.show()
    qtbot.waitExposed(screen)
    labels = [screen.choose.text(), *(b.text() for b in screen.hook_buttons.values()), screen.demo.text()]
    assert labels == ["Supervise a workspace…", "Hooks for Claude Code", "Hooks for Codex", "Hooks for Gemini CLI",
                      "Run the demo"]
    for button in (screen.choose, screen.demo, screen.close_button, *screen.hook_buttons.values()):
        assert button.isVisible() and screen.rect().contains(QRect(button.mapTo(screen, QPoint(0, 0)), button.size()))
    SHOTS.mkdir(parents=True, exist_ok=True)
    assert screen.grab().save(str(SHOTS / "first-run.png"))


async def _install(screen: FirstRunScreen, agent: str, button: QMessageBox.StandardButton) -> str:
    """Press a hook button, read the question asked, and answer it with `button`; the question's text."""
    task = screen.install_hooks(agent)
    await wait_until(lambda: screen.question is not None and screen.question.isVisible(), what="the question")
    question = screen.question
    assert question is not None
    said = f"{question.text()}\n{question.informativeText()}"
    assert question.button(QMessageBox.StandardButton.Ok).text() == "Install"
    question.button(button).click()
    await task
    return said


def test_installing_the_claude_hooks_asks_first_saying_what_happens_without_belay(
        qtbot: Any, loop: Any, home: Path) -> None:
    screen = FirstRunScreen()
    qtbot.addWidget(screen)
    screen.show()
    settings_file = home / ".claude" / "settings.json"
    said = loop.run_until_complete(_install(screen, "claude", QMessageBox.StandardButton.Cancel))
    assert str(settings_file) in said  # the file it would write
    assert "Whenever Belay is not running, Claude Code asks you in its own terminal instead" in said
    assert not settings_file.exists() and screen.status.text() == "Nothing was installed."

    loop.run_until_complete(_install(screen, "claude", QMessageBox.StandardButton.Ok))
    settings = json.loads(settings_file.read_text())
    commands = [h["command"] for entries in settings["hooks"].values() for e in entries for h in e["hooks"]]
    assert commands and all("hook_client.py" in c for c in commands)
    assert "Installed in" in screen.status.text() and str(home / ".claude") in screen.status.text()
    assert first_run_done()
    loop.run_until_complete(_install(screen, "claude", QMessageBox.StandardButton.Ok))
    assert screen.status.text().startswith("Already installed")


def test_installing_the_gemini_hooks_writes_its_user_settings(qtbot: Any, loop: Any, home: Path) -> None:
    screen = FirstRunScreen()
    qtbot.addWidget(screen)
    screen.show()
    said = loop.run_until_complete(_install(screen, "gemini", QMessageBox.StandardButton.Ok))
    assert "Gemini CLI refuses every tool call" in said and str(home / ".gemini" / "settings.json") in said
    assert "hooks" in json.loads((home / ".gemini" / "settings.json").read_text())


def test_choosing_a_workspace_hands_it_on_and_closing_marks_the_first_run_done(qtbot: Any, tmp_path: Path) -> None:
    screen = FirstRunScreen()
    qtbot.addWidget(screen)
    with qtbot.waitSignal(screen.supervise, timeout=2000) as chosen:
        screen.choose_workspace(tmp_path)
    assert chosen.args == [tmp_path]
    (config_dir() / "first-run-done").unlink()
    screen.show()
    screen.close()
    assert first_run_done()


def test_the_demo_starts_as_a_command_of_this_install() -> None:
    command = demo_command()
    assert command[-1] == "demo" and Path(command[0]).exists()


def test_a_bare_belay_shows_the_screen_over_the_console_once_and_supervises_what_is_chosen(
        qtbot: Any, loop: Any, tmp_path: Path, workspace: Path) -> None:
    async def scenario() -> None:
        running = loop.create_task(_watch(WatchOptions(first_run=True, quit_after=30), None))
        await wait_until(lambda: _shown(FirstRunScreen) is not None, what="the first-run screen")
        screen, console = _shown(FirstRunScreen), _shown(HubWindow)
        assert isinstance(screen, FirstRunScreen) and isinstance(console, HubWindow)
        screen.choose_workspace(workspace)
        await wait_until(lambda: workspace.resolve() in console.hub.consoles, what="the chosen workspace's console")
        screen.close()
        console.close()
        assert await running == 0

    def _shown(kind: type) -> Any:
        return next((w for w in QApplication.topLevelWidgets() if isinstance(w, kind) and w.isVisible()), None)

    loop.run_until_complete(scenario())
    assert first_run_done()
    again = loop.run_until_complete(_watch_briefly())
    assert again is None


async def _watch_briefly() -> Any:
    """A second bare `belay`: no first-run screen (it quits by itself)."""
    await _watch(WatchOptions(first_run=True, quit_after=0.3), None)
    return next((w for w in QApplication.topLevelWidgets() if isinstance(w, FirstRunScreen) and w.isVisible()), None)
