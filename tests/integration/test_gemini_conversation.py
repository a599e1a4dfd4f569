"""The real Gemini CLI's conversation beside its calls: its prompt, thought summary and words from its chat file
(named by its hooks' `transcript_path`), and token counts equal to what the scripted model server reported."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from core import RunStatus
from core.store.journal_reads import JournalReads
from tests.conftest import run
from tests.integration.fake_gemini import ScriptedModel, ToolCall, Turn, answers
from tests.integration.test_gemini_cli import _install_hooks, _supervised


@pytest.mark.timeout(120)
def test_gemini_s_words_thoughts_and_tokens_are_read_beside_its_calls(workspace: Path) -> None:
    turns = [
        Turn(thought="Notes are asked for; one write_file does it.", text="I will write notes.md.",
             tools=[ToolCall("write_file", {"file_path": "notes.md", "content": "notes\n"}, id="g_write")],
             usage={"promptTokenCount": 5000, "candidatesTokenCount": 30, "cachedContentTokenCount": 2000,
                    "thoughtsTokenCount": 12}),
        Turn(text="notes.md is written.", when=answers("g_write"),
             usage={"promptTokenCount": 5200, "candidatesTokenCount": 8}),
    ]

    async def scenario() -> None:
        with ScriptedModel(turns) as model:
            _install_hooks(model)
            console = await _supervised(workspace, model, {})
        try:
            for _ in range(100):  # the last words come after the last hook: watchdog reads them
                if "notes.md is written." in [m.text for m in console.timeline.messages.values()]:
                    break
                await asyncio.sleep(0.05)
            messages, tokens = await console.recorder.read(JournalReads.conversation)
            (write,) = [c for c in await console.history() if c.tool == "Write"]
            rows = console.timeline.children(f"a:{write.agent_id}")
        finally:
            await console.__aexit__(None, None, None)
        assert write.status == RunStatus.DONE
        assert [(m.kind, m.text) for m in messages] == [
            ("prompt", "do the scripted work"), ("thinking", "Notes are asked for; one write_file does it."),
            ("text", "I will write notes.md."), ("text", "notes.md is written.")]
        assert {m.agent_id for m in messages} == {write.agent_id}
        said = {m.text: f"m:{m.message_id}" for m in messages}  # its words before the call, its last after
        assert rows.index(said["I will write notes.md."]) < rows.index(f"r:{write.call_id}") \
            < rows.index(said["notes.md is written."])
        assert [(t.usage.input, t.usage.cache_read, t.usage.output, t.model) for t in tokens] == [
            (3000, 2000, 42, "gemini-2.5-flash"), (5200, 0, 8, "gemini-2.5-flash")]

    run(scenario())
