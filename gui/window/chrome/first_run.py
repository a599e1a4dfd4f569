"""The first-run screen: what a person who just typed `belay` can do next.

The console on its own waits for agents that do not know about it yet, so
the first time `belay` opens it says the three ways in: supervise a
workspace (the console opens it now), install the hooks that make Claude
Code, Codex or Gemini CLI ask this console before every tool call (in the
person's user settings, as `belay hooks install --user --agent ...` does,
after a confirmation that names the settings file and says what the agent
does while Belay is not running, `WHEN_NOT_RUNNING`), and run the demo
(its own window, a scripted agent in a scratch copy).
Closing the screen, or any of the three, marks the first run as done in
Belay's config directory; `belay` shows it again only if that mark is gone.
"""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import (
    QFileDialog,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QMessageBox,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from core import agent_hooks, config_dir, hook_command, state_root
from gui import belay_command
from gui.window.kit.confirm import answer
from gui.window.runtime.tasks import TaskSet

MARK = "first-run-done"
"""The file in Belay's config directory that says the first-run screen was seen."""

AGENTS = (("claude", "Claude Code"), ("codex", "Codex"), ("gemini", "Gemini CLI"))
REFUSES = ("Whenever Belay is not running, {agent} refuses every tool call these hooks would ask about, until you "
           "start Belay again or take the hooks out.")
WHEN_NOT_RUNNING = {
    "claude": "Whenever Belay is not running, Claude Code asks you in its own terminal instead (run headless with -p, "
              "it refuses the call), until you start Belay again or take the hooks out.",
    "codex": REFUSES.format(agent="Codex"),
    "gemini": REFUSES.format(agent="Gemini CLI"),
}
"""What the hooks do while no console answers, in one sentence per agent (core.outside.hook_client.no_console:
Claude Code in a terminal falls back to its own prompt; the others are refused)."""


def hooks_file(agent: str) -> Path:
    """The user settings file installing `agent`'s hooks writes."""
    return agent_hooks(agent).settings_file(None, True)


def first_run_done() -> bool:
    return (config_dir() / MARK).exists()


def mark_first_run_done() -> None:
    directory = config_dir()
    directory.mkdir(parents=True, exist_ok=True)
    (directory / MARK).write_text("The first-run screen was shown; delete this file to see it again.\n",
                                  encoding="utf-8")


def install_user_hooks(agent: str, state_dir: str | None = None) -> str:
    """Belay's hooks in `agent`'s user settings (blocking: a settings file read and written); what was done."""
    hooks = agent_hooks(agent)
    path = hooks_file(agent)
    changed = hooks.install(path, hook_command(state_root(state_dir), config_dir(), agent=agent), config_dir())
    if changed.events:
        return f"Installed in {path}: {hooks.console_word} now asks this console before every tool call."
    return f"Already installed in {path}."


def demo_command() -> list[str]:
    """`belay demo` as a new process."""
    return belay_command("demo")


class FirstRunScreen(QWidget):
    """Welcome, and the three ways to start; `supervise` carries the chosen directory."""

    supervise = Signal(object)
    """A Path the person chose to supervise."""
    demo_started = Signal(object)
    """The demo's subprocess.Popen."""

    def __init__(self, state_dir: str | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Welcome to Belay")
        self.setObjectName("firstRun")
        self.state_dir = state_dir
        self.question: QMessageBox | None = None
        """The confirmation asked before hooks are installed, while it is open."""
        self.tasks = TaskSet(on_error=lambda message: self.status.setText(message))
        self.status = QLabel()
        self.status.setObjectName("firstRunStatus")
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        title = QLabel("<h2>Welcome to Belay</h2>"
                       "<p>Belay stands between AI coding agents and your files: every tool call they make can be "
                       "approved here first, is recorded, and can be undone.</p>")
        title.setWordWrap(True)
        grid = QGridLayout()
        grid.setColumnStretch(1, 1)
        grid.setVerticalSpacing(16)
        self.choose = QPushButton("Supervise a workspace…")
        self.choose.clicked.connect(self._choose_workspace)
        grid.addWidget(self.choose, 0, 0)
        grid.addWidget(_note("Pick a project directory; agents working in it (through hooks or `belay mcp-serve`) "
                             "go through this console."), 0, 1)
        hook_row = QHBoxLayout()
        self.hook_buttons: dict[str, QPushButton] = {}
        for agent, label in AGENTS:
            button = QPushButton(f"Hooks for {label}")
            button.setAccessibleName(f"Install Belay's hooks for {label}")
            button.clicked.connect(lambda _=False, a=agent: self.install_hooks(a))
            hook_row.addWidget(button)
            self.hook_buttons[agent] = button
        hook_row.addStretch(1)
        grid.addLayout(hook_row, 1, 0)
        grid.addWidget(_note("Adds Belay's hooks to that agent's user settings, after asking: it then asks this "
                             "console before every tool call (`belay hooks uninstall --user --agent ...` takes them "
                             "out)."), 1, 1)
        self.demo = QPushButton("Run the demo")
        self.demo.clicked.connect(self.run_demo)
        grid.addWidget(self.demo, 2, 0)
        grid.addWidget(_note("A scripted agent edits a scratch copy of a small project in a window of its own: "
                             "approve, deny and undo without risk."), 2, 1)
        self.close_button = QPushButton("Start with the console")
        self.close_button.setDefault(True)
        self.close_button.clicked.connect(self.close)
        bottom = QHBoxLayout()
        bottom.addWidget(self.status, 1)
        bottom.addWidget(self.close_button)

        column = QVBoxLayout(self)
        column.addWidget(title)
        column.addLayout(grid)
        column.addStretch(1)
        column.addLayout(bottom)
        self.resize(760, 360)

    def _choose_workspace(self) -> None:
        dialog = QFileDialog(self, "Supervise a workspace", str(Path.home()))
        dialog.setFileMode(QFileDialog.FileMode.Directory)
        dialog.setOption(QFileDialog.Option.ShowDirsOnly, True)
        dialog.fileSelected.connect(lambda chosen: self.choose_workspace(Path(chosen)))
        dialog.open()  # not exec(): the event loop (and the agents) keep running

    def choose_workspace(self, directory: Path) -> None:
        mark_first_run_done()
        self.status.setText(f"Supervising {directory}.")
        self.supervise.emit(directory)

    def install_hooks(self, agent: str) -> asyncio.Task[None]:
        """Ask (naming the settings file, and what happens while Belay is not running), then install."""
        return self.tasks.spawn(self._install(agent), f"install {agent} hooks")

    def confirmation(self, agent: str) -> QMessageBox:
        """The question asked before `agent`'s hooks are written: Install or Cancel."""
        label = dict(AGENTS)[agent]
        box = QMessageBox(QMessageBox.Icon.Question, f"Install the hooks for {label}?",
                          f"Install Belay's hooks for {label} in {hooks_file(agent)}?",
                          QMessageBox.StandardButton.Ok | QMessageBox.StandardButton.Cancel, self)
        box.setInformativeText(WHEN_NOT_RUNNING[agent])
        install = box.button(QMessageBox.StandardButton.Ok)
        install.setText("Install")
        install.setAccessibleName(f"Install the hooks for {label}")
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)  # Enter alone does not change user settings
        return box

    async def _install(self, agent: str) -> None:
        button = self.hook_buttons[agent]
        button.setEnabled(False)
        try:
            self.question = self.confirmation(agent)
            if await answer(self.question) != QMessageBox.StandardButton.Ok:
                self.status.setText("Nothing was installed.")
                return
            said = await asyncio.to_thread(install_user_hooks, agent, self.state_dir)
        except (OSError, ValueError) as e:
            said = f"Could not install the hooks: {e}"
        finally:
            self.question = None
            button.setEnabled(True)
        mark_first_run_done()
        self.status.setText(said)

    def run_demo(self) -> subprocess.Popen[bytes]:
        mark_first_run_done()
        process = subprocess.Popen(demo_command(), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                   start_new_session=True)
        self.status.setText("The demo opens in a window of its own.")
        self.demo_started.emit(process)
        return process

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 - Qt's name
        mark_first_run_done()
        super().closeEvent(event)


def _note(text: str) -> QLabel:
    label = QLabel(text)
    label.setWordWrap(True)
    return label
