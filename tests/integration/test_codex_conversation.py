"""The real Codex CLI's conversation beside its calls: its prompt, reasoning summary and words from its rollout
file (named by its hooks' `transcript_path`), in order with its calls, its last words on the approval card, and
token counts equal to what the scripted model server reported."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from core import Console, RunStatus
from core.store.journal_reads import JournalReads
from tests.conftest import run
from tests.integration import npm_tools
from tests.integration.fake_openai import ScriptedModel, Turn, answers, shell_call
from tests.integration.test_codex_cli import _codex, _person


@pytest.mark.timeout(120)
def test_codex_s_words_reasoning_and_tokens_are_read_beside_its_calls(workspace: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    npm_tools.require("codex")
    turns = [
        Turn(reasoning="A build file is asked for; one echo makes it.", text="I will write build.txt with echo.",
             tools=[shell_call("echo built > build.txt", "c_bash")],
             usage={"input_tokens": 3000, "cached_tokens": 1000, "output_tokens": 40, "reasoning_tokens": 12}),
        Turn(text="build.txt is written.", when=answers("c_bash"),
             usage={"input_tokens": 3500, "cached_tokens": 3000, "output_tokens": 9}),
    ]
    seen: list[Any] = []

    async def scenario() -> None:
        async with Console(workspace) as console:
            console.register_approver("test")
            person = asyncio.ensure_future(_person(console, {}, seen))
            try:
                with ScriptedModel(turns) as model:
                    code, output = await _codex(model, workspace, monkeypatch)
                    assert code == 0 and model.unscripted == [], output
                for _ in range(100):  # the last words come after the last hook: watchdog reads them
                    said = [m.text for m in console.timeline.messages.values()]
                    if "build.txt is written." in said:
                        break
                    await asyncio.sleep(0.05)
            finally:
                person.cancel()
                await asyncio.wait([person])
            messages, tokens = await console.recorder.read(JournalReads.conversation)
            (bash,) = [c for c in await console.history() if c.tool == "Bash"]
            made = console.timeline.response_of(bash.call_id)
        assert bash.status == RunStatus.DONE and (workspace / "build.txt").read_text() == "built\n"
        assert [(m.kind, m.text) for m in messages] == [
            ("prompt", "do the scripted work"), ("thinking", "A build file is asked for; one echo makes it."),
            ("text", "I will write build.txt with echo."), ("text", "build.txt is written.")]
        assert {m.agent_id for m in messages} == {bash.agent_id}
        (card,) = [r for r in seen if r.call_id == bash.call_id]
        assert card.intent is not None and card.intent.said == "I will write build.txt with echo."
        assert card.intent.prompt == "do the scripted work"
        assert [(t.usage.input, t.usage.cache_read, t.usage.output, t.tool_uses) for t in tokens] == [
            (2000, 1000, 40, ("c_bash",)), (500, 3000, 9, ())]
        assert made is not None and made.usage.output == 40  # the response that made the call

    run(scenario())
