"""What the conversation page writes: the words among the calls, the latest when long, the cost."""

from __future__ import annotations

from datetime import datetime, timezone

from core import (
    AgentStarted,
    CallQueued,
    ConversationRecorded,
    Message,
    PriceTable,
    Timeline,
    TokenUse,
    Usage,
)
from gui.window.panels.conversation_text import SHOWN, conversation_html, cost_html

AT = datetime(2026, 12, 8, 9, 0, tzinfo=timezone.utc)


def _timeline(messages: int = 2) -> Timeline:
    timeline = Timeline()
    timeline.apply(AgentStarted(agent_id="main", session_id="s", name="claude-code 1234", agent_kind="claude-code"))
    timeline.apply(AgentStarted(agent_id="sub", session_id="s", name="general-purpose", agent_kind="subagent",
                                parent_id="main"))
    timeline.apply(ConversationRecorded(agent_id="main", messages=(
        Message(message_id="m0", agent_id="main", kind="prompt", text="write <the> notes", at=AT),
        Message(message_id="m1", agent_id="main", kind="thinking", text="one Write will do", at=AT))))
    timeline.apply(CallQueued(call_id="c1", agent_id="main", tool="Write", args={}, summary="notes.md"))
    for n in range(2, messages):
        timeline.apply(ConversationRecorded(agent_id="main", messages=(
            Message(message_id=f"m{n}", agent_id="main", kind="text", text=f"step {n}", at=AT),)))
    timeline.apply(ConversationRecorded(agent_id="main", tokens=(
        TokenUse(response_id="r1", agent_id="main", at=AT, model="claude-sonnet-4",
                 usage=Usage(input=1_000_000, output=100_000, cache_read=0)),)))
    timeline.apply(ConversationRecorded(agent_id="sub", tokens=(
        TokenUse(response_id="r2", agent_id="sub", at=AT, model="local-model", usage=Usage(input=10, output=2)),)))
    return timeline


def test_the_page_has_the_prompt_the_reasoning_and_the_calls_in_order_escaped() -> None:
    page = conversation_html(_timeline(3), "main")
    assert page.index("↳ sub-agent general-purpose") < page.index("write &lt;the&gt; notes") \
        < page.index("one Write will do") < page.index("notes.md") < page.index("step 2")  # (the sub-agent came first)
    assert "Choose an agent" in conversation_html(_timeline(), "nobody")
    assert "Nothing it said has been read" in conversation_html(_timeline(), "sub")


def test_a_long_conversation_shows_its_latest_entries() -> None:
    page = conversation_html(_timeline(SHOWN + 50), "main")
    assert "earlier entries are in the timeline" in page and f"step {SHOWN + 49}" in page and "step 2<" not in page


def test_the_cost_rolls_up_the_sub_agents_and_names_the_prices_and_what_has_none() -> None:
    text = cost_html(_timeline(), "main", PriceTable())
    assert "1,000,010 in · 100,002 out" in text and "its own: 1,000,000 in · 100,000 out" in text
    assert "about $4.50" in text and "default list prices of 2025-08" in text and "no price for local-model" in text
    assert "context window in use: 1,000,000 tokens" in text
    assert cost_html(_timeline(), "nobody", None) == ""


def test_a_calls_details_name_the_tokens_of_the_response_that_made_it() -> None:
    from gui.window.panels.details_text import response_html
    timeline = _timeline()
    timeline.apply(ConversationRecorded(agent_id="main", tokens=(TokenUse(
        response_id="r9", agent_id="main", at=AT, model="claude-opus-4", usage=Usage(input=10, output=2),
        tool_uses=("toolu_a", "toolu_b")),)))
    timeline.apply(CallQueued(call_id="c9", agent_id="main", tool="Edit", args={}, summary="a.py", use_id="toolu_b"))
    assert response_html(timeline, "c9") == ("<p>Tokens of the response that made it (claude-opus-4): 10 in · 2 out, "
                                             "shared with 1 other call it made</p>")
    assert response_html(timeline, "c1") == ""


def test_the_workspaces_day_is_counted_across_its_agents() -> None:
    from gui.window.panels.conversation_text import day_usage
    timeline = _timeline()
    assert day_usage(timeline, "2026-12-08") == {"claude-sonnet-4": Usage(input=1_000_000, output=100_000),
                                                 "local-model": Usage(input=10, output=2)}
    assert day_usage(timeline, "2026-12-09") == {}
