"""Starting Claude Code from the window (`belay claude`, File › Start Claude Code): what to ask it, and saying
how the session ended.  A session started here stays open after Claude's answer for the person's next message
(the Conversation page sends it).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from PySide6.QtWidgets import QInputDialog, QStatusBar, QWidget

from core import BelayError, ConsoleSurface, SessionEnd


async def ask_prompt(parent: QWidget, root: Path) -> str | None:
    """What to ask Claude, from a box that does not block the shared loop (None: cancelled)."""
    dialog = QInputDialog(parent)
    dialog.setWindowTitle("Start Claude Code")
    dialog.setLabelText(f"What should Claude do in {root}?")
    dialog.setOption(QInputDialog.InputDialogOption.UsePlainTextEditForTextInput)
    done: asyncio.Future[int] = asyncio.get_running_loop().create_future()

    def finished(result: int) -> None:
        if not done.done():
            done.set_result(result)
    dialog.finished.connect(finished)
    dialog.open()
    try:
        if await done != QInputDialog.DialogCode.Accepted:
            return None
        return dialog.textValue().strip() or None
    finally:
        dialog.deleteLater()


def say_session_ended(bar: QStatusBar, task: asyncio.Task[SessionEnd]) -> None:
    """A launched Claude session finished (or failed to run): say so."""
    if task.cancelled():
        return
    error = task.exception()
    message = f"Claude could not run: {error}" if error else f"Claude finished: {task.result().summary}"
    bar.showMessage(message, 60_000)


async def start_claude(parent: QWidget, console: ConsoleSurface, bar: QStatusBar) -> None:
    """Ask what Claude should do here, then start it supervised from its first call (nothing when cancelled)."""
    prompt = await ask_prompt(parent, Path(console.where))
    if prompt is None:
        return
    try:
        session = console.launch_claude(prompt, follow_ups=True)
    except (BelayError, RuntimeError) as e:  # a console on another host, or one that serves no hooks
        bar.showMessage(f"Claude could not start: {e}", 60_000)
        return
    bar.showMessage("Claude started: its calls come here; write to it on the Conversation page", 10_000)
    session.add_done_callback(lambda task: say_session_ended(bar, task))
