"""The real Claude Code CLI's words in the window: on the approval card while its Write waits, then its whole
conversation on the Conversation tab, at 1024x640.

The CLI talks to the scripted model server, through Belay's installed hooks, to a console whose window is
open (offscreen).  With BELAY_SHOTS set to a folder, the window is saved there at both moments (light theme).
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest

from core import AgentKey, Console
from gui.window.workspace.window import MainWindow
from tests.conftest import wait_until
from tests.gui.window.kit.test_theme import _switch
from tests.integration.fake_anthropic import ScriptedModel, ToolCall, Turn, answers
from tests.integration.test_claude_code import _claude, _hooks_settings

SAID = ("The changelog has no entry for 2.4 yet. I will add one under Unreleased that names the two fixes "
        "from this week:\n- the retry on a dropped socket (#412)\n- the CSV export's header row (#415)\n"
        "Then I will check that the docs build still links to it.")


@pytest.mark.timeout(180)
def test_the_card_shows_the_agents_words_and_the_page_its_conversation(qtbot: Any, qapp: Any, loop: Any,
                                                                       tmp_path: Path, workspace: Path) -> None:
    changelog = workspace / "CHANGELOG.md"
    turns = [
        Turn(thinking="The person wants the changelog brought up to date. First see what is there.",
             text="Let me read the current changelog first.",
             tools=[ToolCall("Read", {"file_path": str(workspace / "README.md")}, id="t_read")],
             usage={"input_tokens": 2400, "output_tokens": 120, "cache_read_input_tokens": 11000}),
        Turn(text=SAID, tools=[ToolCall("Write", {"file_path": str(changelog),
                                                   "content": "# Changelog\n\n## Unreleased\n- retry on a dropped "
                                                              "socket\n- CSV export header\n"}, id="t_write")],
             when=answers("t_read"),
             usage={"input_tokens": 900, "output_tokens": 210, "cache_read_input_tokens": 13400}),
        Turn(text="Done: CHANGELOG.md has an Unreleased section with both fixes.", when=answers("t_write"),
             usage={"input_tokens": 400, "output_tokens": 30, "cache_read_input_tokens": 13600}),
    ]
    settings = _hooks_settings(tmp_path)
    shots = os.environ.get("BELAY_SHOTS")

    async def save(window: MainWindow, name: str) -> None:
        """The window in the light theme, then in the dark one (and back to light)."""
        if not shots:
            return
        window.grab().save(str(Path(shots) / f"{name}.png"))
        with _switch(qapp) as switch:
            switch.set_choice("dark")
            await asyncio.sleep(0.3)
            window.grab().save(str(Path(shots) / f"{name}-dark.png"))

    async def scenario() -> None:
        console = Console(workspace)
        await console.open()
        window = MainWindow(console)
        qtbot.addWidget(window)
        window.start()
        window.resize(1024, 640)
        window.show()
        try:
            with ScriptedModel(turns) as model:
                cli = asyncio.ensure_future(_claude(model, workspace, settings,
                                                    prompt="Bring the changelog up to date for this week's fixes"))
                card = window.approvals.intent
                await wait_until(lambda: card.isVisible() and "Unreleased" in card.text(), timeout=60,
                                 what="the Write waiting with the agent's words")
                assert "Bring the changelog up to date" in card.text() and "more" in card.text()
                await asyncio.sleep(1.0)  # the diff is laid out
                await save(window, "card-with-the-agents-words")
                window.approvals.approve()
                await wait_until(lambda: not window.approvals.queue(), what="the approval to be taken")
                code, output = await asyncio.wait_for(cli, 60)
                assert code == 0 and model.unscripted == [], output
            page = window.parts.conversation
            await wait_until(lambda: "Done: CHANGELOG.md" in " ".join(m.text for m in
                                                                       console.timeline.messages.values()),
                             what="the last words")
            main = next(a for a in console.timeline.agents.values() if a.agent_kind == "claude-code")
            window.tree.go_to(AgentKey(main.agent_id))
            window.tabs.setCurrentWidget(page)
            await wait_until(lambda: "Done: CHANGELOG.md" in page.text.toPlainText(), what="the page")
            text = page.text.toPlainText()
            assert text.index("Bring the changelog") < text.index("read the current changelog") \
                < text.index("README.md") < text.index("no entry for 2.4") < text.index("CHANGELOG.md ·")
            assert "3,700 in · 360 out · 38,000 cached" in text
            assert "could not be read" not in text  # every kind of record the CLI wrote is known
            await asyncio.sleep(0.3)
            await save(window, "conversation-page")
        finally:
            await window.tasks.aclose()
            await console.close()
            window.close()

    loop.run_until_complete(scenario())
