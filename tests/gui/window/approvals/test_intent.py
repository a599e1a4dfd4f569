"""The agent's words on the approval card: a few lines, "more" shows them whole, and the prompt."""

from __future__ import annotations

import asyncio
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from core import Console, Intent, Message
from gui.window.approvals.intent import IntentView, short
from gui.window.workspace.window import MainWindow
from tests.conftest import wait_until
from tests.gui.window.workspace.test_window import in_window

LONG = "I will rewrite the config loader.\nFirst the parser,\nthen the defaults,\nthen the tests.\nThen docs."


def test_a_few_lines_are_shown_and_more_shows_them_whole_and_less_folds_them(qtbot: Any) -> None:
    view = IntentView()
    qtbot.addWidget(view)
    view.show_intent(None)
    assert view.isHidden()
    view.show_intent(Intent(said=LONG, prompt="make config loading faster"))
    assert not view.isHidden() and "then the defaults" in view.text() and "then the tests" not in view.text()
    assert "more" in view.text() and "make config loading faster" in view.text()
    view.linkActivated.emit("more")
    assert view.whole and "Then docs." in view.text() and "less" in view.text()
    view.linkActivated.emit("less")
    assert not view.whole and "Then docs." not in view.text()
    assert short("one line") == ("one line", False)


def test_the_card_shows_what_the_agent_said_before_the_call_it_asks_for(
        qtbot: Any, loop: Any, workspace: Path) -> None:
    async def body(console: Console, window: MainWindow) -> None:
        agent = await console.start_agent("claude-code 1234", "claude-code")
        at = datetime.now(timezone.utc)
        await console.recorder.conversation(agent.agent_id, [
            Message(message_id="m1", agent_id=agent.agent_id, kind="prompt", text="retitle the readme", at=at),
            Message(message_id="m2", agent_id=agent.agent_id, kind="text", text="Retitling README.md now.", at=at)],
            [])
        asking = asyncio.ensure_future(console.call(agent, "Write", {"file_path": str(workspace / "README.md"),
                                                                     "content": "# Shop\n"}, ask=True))
        card = window.approvals.intent
        await wait_until(lambda: card.isVisible(), what="the card with the agent's words")
        assert "Retitling README.md now." in card.text() and "retitle the readme" in card.text()
        console.deny(window.approvals.current.call_id, "not now")  # type: ignore[union-attr]
        await asyncio.wait_for(asking, 10)

    in_window(qtbot, loop, workspace, body)
