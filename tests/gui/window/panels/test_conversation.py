"""The conversation page in the window: it follows the agent chosen in the timeline and its new words."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt

from core import AgentKey, Console, Message, MessageKey, TokenUse, Usage
from core.outside.requests import HookEvent
from gui.window.panels.conversation import NOT_SENT
from gui.window.workspace.window import MainWindow
from tests.conftest import wait_until
from tests.gui.window.workspace.test_window import in_window


def test_the_page_follows_the_selected_agent_and_shows_its_new_words_and_tokens(
        qtbot: Any, loop: Any, workspace: Path) -> None:
    async def body(console: Console, window: MainWindow) -> None:
        page = window.parts.conversation
        lead = await console.start_agent("claude-code 1234", "claude-code")
        other = await console.start_agent("codex 5678", "codex")
        at = datetime.now(timezone.utc)
        await console.recorder.conversation(lead.agent_id, [
            Message(message_id="m1", agent_id=lead.agent_id, kind="prompt", text="add a changelog", at=at)], [])
        await console.call(lead, "Read", {"file_path": str(workspace / "README.md")})
        window.show_tab(page)  # Ctrl+6, as a person opens it
        window.tree.go_to(AgentKey(lead.agent_id))
        await wait_until(lambda: page.shown_agent == lead.agent_id and "add a changelog" in page.text.toPlainText(),
                         what="the page on the selected agent")
        assert "README.md" in page.text.toPlainText()
        await console.recorder.conversation(lead.agent_id, [
            Message(message_id="m2", agent_id=lead.agent_id, kind="text", text="Writing CHANGELOG.md now.", at=at)],
            [TokenUse(response_id="r1", agent_id=lead.agent_id, at=at, model="claude-opus-4",
                      usage=Usage(input=1200, output=80, cache_read=5000))])
        await wait_until(lambda: "Writing CHANGELOG.md now." in page.text.toPlainText(), what="the new words")
        assert "1,200 in · 80 out · 5,000 cached" in page.text.toPlainText()
        window.tree.go_to(MessageKey("m1"))  # a message's row: its agent's page, and its details
        assert page.shown_agent == lead.agent_id and "add a changelog" in window.details.info.toPlainText()
        page.show_agent(other.agent_id)
        assert "Nothing it said has been read" in page.text.toPlainText()
        assert "agents=2" in repr(page)

    in_window(qtbot, loop, workspace, body)


def test_a_note_written_on_the_page_is_shown_as_the_persons_and_waits_for_the_agents_next_call(
        qtbot: Any, loop: Any, workspace: Path) -> None:
    async def body(console: Console, window: MainWindow) -> None:
        assert console.outside is not None
        hooks = console.outside.hooks
        page = window.parts.conversation
        window.parts.tabs.setCurrentWidget(page)
        await hooks.handle(HookEvent.model_validate({"session_id": "sess-page", "hook_event_name": "SessionStart"}))
        agent = hooks.session_agent("sess-page")
        assert agent is not None
        await wait_until(lambda: agent.agent_id in window.parts.model.timeline.agents, what="the session's agent")
        page.show_agent(agent.agent_id)
        assert page.shown_agent == agent.agent_id
        assert not page.send.isEnabled()  # nothing written yet
        qtbot.keyClicks(page.note, "run the tests before you commit")
        assert page.send.isEnabled()
        qtbot.mouseClick(page.send, Qt.MouseButton.LeftButton)
        await wait_until(lambda: "Your note" in page.text.toPlainText(), what="the note in the conversation")
        assert "run the tests before you commit" in page.text.toPlainText()
        assert hooks.notes.waiting(agent.agent_id) == 1 and page.note.text() == ""
        assert page.note_state.text().startswith("Sent")
        other = await console.start_agent("codex 5678", "codex")
        page.show_agent(other.agent_id)
        qtbot.keyClicks(page.note, "hello")
        page.note.returnPressed.emit()
        await wait_until(lambda: page.note_state.text() == NOT_SENT, what="the note refused")
        assert page.note.text() == "hello"  # kept, to send elsewhere

    in_window(qtbot, loop, workspace, body)
