"""Starting Claude Code from the window: the prompt box (which never blocks the loop) and how the session ended."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from PySide6.QtWidgets import QDialogButtonBox, QInputDialog, QPlainTextEdit, QStatusBar, QWidget

from core import SessionEnd
from core.errors import ErrorKind, ToolError
from gui.window.workspace.launch import ask_prompt, say_session_ended, start_claude
from tests.conftest import wait_until


def _shown(parent: QWidget) -> QInputDialog | None:
    return next((d for d in parent.findChildren(QInputDialog) if d.isVisible()), None)


def _answer(qtbot: Any, dialog: QInputDialog, text: str, button: QDialogButtonBox.StandardButton) -> None:
    box = dialog.findChild(QPlainTextEdit)
    assert box is not None  # a prompt is paragraphs: a text box, not a line
    qtbot.keyClicks(box, text)
    dialog.findChild(QDialogButtonBox).button(button).click()


def test_the_prompt_box_asks_without_blocking_and_gives_what_was_typed(qtbot: Any, loop: Any,
                                                                       tmp_path: Path) -> None:
    ok, cancel = QDialogButtonBox.StandardButton.Ok, QDialogButtonBox.StandardButton.Cancel

    async def scenario() -> list[str | None]:
        window = QWidget()
        qtbot.addWidget(window)
        window.show()
        answers = []
        for text, button in (("  fix the failing tests  ", ok), ("   ", ok), ("never mind", cancel)):
            asked = asyncio.ensure_future(ask_prompt(window, tmp_path))
            await wait_until(lambda: _shown(window) is not None, what="the prompt box")
            dialog = _shown(window)
            assert dialog is not None and dialog.windowTitle() == "Start Claude Code"
            assert dialog.labelText() == f"What should Claude do in {tmp_path}?"
            await asyncio.sleep(0)  # the loop runs on while the box is open
            _answer(qtbot, dialog, text, button)
            answers.append(await asked)
            await wait_until(lambda: not window.findChildren(QInputDialog), what="the box gone, not just hidden")
        return answers

    assert loop.run_until_complete(scenario()) == ["fix the failing tests", None, None]  # blank is no prompt


def test_the_status_bar_says_how_a_launched_session_ended(qtbot: Any, loop: Any) -> None:
    async def ended(end: SessionEnd | Exception) -> SessionEnd:
        if isinstance(end, Exception):
            raise end
        return end

    async def scenario() -> list[str]:
        bar = QStatusBar()
        qtbot.addWidget(bar)
        said = []
        for end in (SessionEnd(ok=True, summary="Fixed 3 tests.", session_id="s1"),
                    FileNotFoundError("claude: command not found")):
            session = asyncio.ensure_future(ended(end))
            await asyncio.wait([session])
            say_session_ended(bar, session)
            said.append(bar.currentMessage())
        bar.clearMessage()
        stopped = asyncio.ensure_future(asyncio.sleep(60))
        stopped.cancel()
        await asyncio.wait([stopped])
        say_session_ended(bar, stopped)  # the window closed: nothing to say
        said.append(bar.currentMessage())
        return said

    assert loop.run_until_complete(scenario()) == ["Claude finished: Fixed 3 tests.",
                                                   "Claude could not run: claude: command not found", ""]


class _Console:
    """What start_claude asks of a console: where it works, and launching (refused when `refuse` says why)."""

    def __init__(self, where: str, refuse: str = "") -> None:
        self.where, self.refuse = where, refuse
        self.launched: list[tuple[str, bool]] = []

    def launch_claude(self, prompt: str, *, follow_ups: bool = False) -> asyncio.Task[SessionEnd]:
        if self.refuse:
            raise ToolError(ErrorKind.CONFLICT, self.refuse)
        self.launched.append((prompt, follow_ups))
        self.ending: asyncio.Future[SessionEnd] = asyncio.get_running_loop().create_future()
        return asyncio.ensure_future(self.ending)


def test_file_start_claude_launches_what_was_asked_open_for_follow_ups_or_says_why_not(qtbot: Any, loop: Any,
                                                                                       tmp_path: Path) -> None:
    ok = QDialogButtonBox.StandardButton.Ok

    async def scenario() -> tuple[list[tuple[str, bool]], list[str]]:
        window = QWidget()
        qtbot.addWidget(window)
        window.show()
        bar = QStatusBar()
        qtbot.addWidget(bar)
        here, there = _Console(str(tmp_path)), _Console("ssh://host/src", refuse="not from here")
        said = []
        for console in (here, there):
            started = asyncio.ensure_future(start_claude(window, console, bar))  # type: ignore[arg-type]
            await wait_until(lambda: _shown(window) is not None, what="the prompt box")
            _answer(qtbot, _shown(window), "write the changelog", ok)  # type: ignore[arg-type]
            await started
            said.append(bar.currentMessage())
            await wait_until(lambda: not window.findChildren(QInputDialog), what="the box gone")
        here.ending.set_result(SessionEnd(ok=True, summary="Done.", session_id="s"))
        await wait_until(lambda: bar.currentMessage() == "Claude finished: Done.", what="the session's end said")
        return here.launched, said

    launched, said = loop.run_until_complete(scenario())
    assert launched == [("write the changelog", True)]
    assert said[0].startswith("Claude started") and said[1] == "Claude could not start: not from here"
