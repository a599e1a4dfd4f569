"""The real Claude Code CLI's conversation beside its calls: what it said, why it asks, what it cost.

The CLI talks to the scripted model server (tests/integration/fake_anthropic.py), which answers with
reasoning, text, tool calls and the usage it reports; Belay's installed hooks name the CLI's transcript,
which the console follows.  Checked as a person would see it: the prompt, the agent's words and reasoning
in order with its calls (a sub-agent's under the sub-agent), the agent's last words on the approval card,
and token counts equal to what the model server sent.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from core import ApprovalRequested, BudgetReached, Console, RunStatus
from core.policy.settings import config_dir
from core.store.journal_reads import JournalReads
from tests.conftest import run
from tests.integration.fake_anthropic import ScriptedModel, ToolCall, Turn, answers
from tests.integration.test_claude_code import _claude, _hooks_settings

USAGE = [{"input_tokens": 1200, "output_tokens": 80, "cache_read_input_tokens": 5000, "cache_creation_input_tokens": 300},
         {"input_tokens": 1500, "output_tokens": 40, "cache_read_input_tokens": 5300, "cache_creation_input_tokens": 0},
         {"input_tokens": 700, "output_tokens": 30, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0},
         {"input_tokens": 900, "output_tokens": 12, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0},
         {"input_tokens": 1800, "output_tokens": 9, "cache_read_input_tokens": 5300, "cache_creation_input_tokens": 0}]


@pytest.mark.timeout(180)
def test_the_conversation_appears_in_order_with_the_calls_and_the_card_shows_the_last_words(
        tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    notes = workspace / "notes.md"
    turns = [
        Turn(thinking="The person wants release notes; one Write is enough.",
             text="I will write the release notes into notes.md now.",
             tools=[ToolCall("Write", {"file_path": str(notes), "content": "notes\n"}, id="t_write")], usage=USAGE[0]),
        Turn(text="Now a helper checks them.",
             tools=[ToolCall("Agent", {"description": "Check", "prompt": "SUBTASK: check the notes",
                                       "subagent_type": "general-purpose", "run_in_background": False},
                             id="t_agent")], when=answers("t_write"), usage=USAGE[1]),
        Turn(text="All done: notes written and checked.", when=answers("t_agent"), usage=USAGE[4]),
    ]
    agents = {"SUBTASK:": [
        Turn(text="Reading the notes first.", tools=[ToolCall("Read", {"file_path": str(notes)}, id="t_read")],
             usage=USAGE[2]),
        Turn(text="The notes look fine.", usage=USAGE[3]),
    ]}
    settings = _hooks_settings(tmp_path)
    cards: list[ApprovalRequested] = []

    async def person(console: Console) -> None:
        while True:
            for request in console.pending_approvals():
                if request not in cards:
                    cards.append(request)
                    console.approve(request.call_id)
            await asyncio.sleep(0.02)

    async def scenario() -> None:
        async with Console(workspace) as console:
            console.register_approver("test")
            answering = asyncio.ensure_future(person(console))
            try:
                with ScriptedModel(turns, agents=agents) as model:
                    code, output = await _claude(model, workspace, settings, prompt="please write the release notes")
                    assert code == 0 and model.unscripted == [], output
            finally:
                answering.cancel()
                await asyncio.wait([answering])
            messages, tokens = await console.recorder.read(JournalReads.conversation)
            calls = await console.history()
            made = {c.tool: console.timeline.response_of(c.call_id) for c in calls}
        assert notes.read_text() == "notes\n"
        write = next(c for c in calls if c.tool == "Write")
        assert write.status == RunStatus.DONE
        # The card: the agent's last words before the Write, and the prompt it works on.
        (card,) = [c for c in cards if c.tool == "Write"]
        assert card.intent is not None
        assert card.intent.said == "I will write the release notes into notes.md now."
        assert card.intent.prompt == "please write the release notes"
        # The conversation, in order with the calls, each under its agent.
        main = write.agent_id
        sub = next(c for c in calls if c.tool == "Read").agent_id
        said = [(m.agent_id, m.kind, m.text) for m in messages]
        assert said == [
            (main, "prompt", "please write the release notes"),
            (main, "thinking", "The person wants release notes; one Write is enough."),
            (main, "text", "I will write the release notes into notes.md now."),
            (main, "text", "Now a helper checks them."),
            (sub, "prompt", "SUBTASK: check the notes"),
            (sub, "text", "Reading the notes first."),
            (sub, "text", "The notes look fine."),
            (main, "text", "All done: notes written and checked."),
        ]
        at = {m.text: m.at for m in messages}
        assert at["I will write the release notes into notes.md now."] <= write.created_at
        read = next(c for c in calls if c.tool == "Read")
        assert at["Reading the notes first."] <= read.created_at <= at["The notes look fine."]
        # Tokens: one count per model response, as the server sent them.
        sent = sorted((u["input_tokens"], u["output_tokens"], u["cache_read_input_tokens"],
                       u["cache_creation_input_tokens"]) for u in USAGE)
        assert sorted((t.usage.input, t.usage.output, t.usage.cache_read, t.usage.cache_write) for t in tokens) == sent
        assert {t.agent_id for t in tokens if t.usage.input in (700, 900)} == {sub}
        assert next(t for t in tokens if t.usage.input == 1200).tool_uses == ("t_write",)
        # Per call: the response that made it, as the transcript says.
        assert made["Write"] is not None and made["Write"].usage.input == 1200 and made["Write"].usage.cache_write == 300
        assert made["Read"] is not None and made["Read"].usage.input == 700 and made["Read"].agent_id == sub

    run(scenario())


@pytest.mark.timeout(180)
def test_a_budget_reached_holds_the_agents_next_call_for_a_decision(tmp_path: Path) -> None:
    """The tokens of the response that makes a Read are read before the Read is decided: over the session's
    budget, the Read (which the policy allows) waits for the person, saying why."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "notes.md").write_text("notes\n")
    config_dir().mkdir(parents=True, exist_ok=True)
    (config_dir() / "settings.toml").write_text("[budget]\nsession_tokens = 10000\nhold = true\n")
    turns = [
        Turn(text="Reading the notes.", tools=[ToolCall("Read", {"file_path": str(workspace / "notes.md")}, id="t_1")],
             usage={"input_tokens": 4000, "output_tokens": 50, "cache_read_input_tokens": 0}),
        Turn(text="Reading them again.", tools=[ToolCall("Read", {"file_path": str(workspace / "notes.md")},
                                                         id="t_2")], when=answers("t_1"),
             usage={"input_tokens": 7000, "output_tokens": 50, "cache_read_input_tokens": 0}),
        Turn(text="Read twice.", when=answers("t_2"), usage={"input_tokens": 8000, "output_tokens": 5}),
    ]
    settings = _hooks_settings(tmp_path)
    cards: list[ApprovalRequested] = []
    told: list[BudgetReached] = []

    async def person(console: Console) -> None:
        while True:
            for request in console.pending_approvals():
                if request not in cards:
                    cards.append(request)
                    console.approve(request.call_id)
            await asyncio.sleep(0.02)

    async def scenario() -> None:
        async with Console(workspace) as console:
            console.bus.listen(lambda e: told.append(e) if isinstance(e, BudgetReached) else None)
            console.register_approver("test")
            answering = asyncio.ensure_future(person(console))
            try:
                with ScriptedModel(turns) as model:
                    code, output = await _claude(model, workspace, settings)
                    assert code == 0 and model.unscripted == [], output
            finally:
                answering.cancel()
                await asyncio.wait([answering])
            reads = [c for c in await console.history() if c.tool == "Read"]
        assert [r.status for r in reads] == [RunStatus.DONE, RunStatus.DONE]
        assert [(e.limit, e.held) for e in told] == [("session_tokens", True)]
        (card,) = cards  # the first Read went through unasked; the second waited
        assert card.call_id == reads[1].call_id
        assert card.reason.startswith("this session has used 11,100 tokens of its budget of 10,000")

    run(scenario())
