"""The conversation in the timeline: messages as rows among the calls, tokens per agent, branch, session, day."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from core.events import AgentStarted, CallQueued, ConversationRecorded
from core.ids import AgentId, CallId, SessionId
from core.models.conversation import Message, MessageKind, TokenUse, Usage
from core.models.records import AgentRecord, AgentStatus
from core.timeline.keys import AgentKey, MessageKey, RunKey, parse_key
from core.timeline.nodes import Inserted, Updated
from core.timeline.tree import Timeline

T0 = datetime(2026, 12, 8, 9, 0, tzinfo=timezone.utc)


def _said(ident: str, agent: str, kind: MessageKind, text: str, at: datetime = T0) -> Message:
    return Message(message_id=ident, agent_id=agent, kind=kind, text=text, at=at)


def _used(response: str, agent: str, model: str, tokens: int, at: datetime = T0) -> TokenUse:
    return TokenUse(response_id=response, agent_id=agent, at=at, model=model,
                    usage=Usage(input=tokens, output=tokens // 10, cache_read=tokens * 2))


def _started(agent: str, parent: str | None = None, session: str = "s1") -> AgentStarted:
    return AgentStarted(agent_id=AgentId(agent), session_id=SessionId(session), name=agent,
                        agent_kind="subagent" if parent else "claude-code", parent_id=AgentId(parent) if parent else None)


def test_messages_are_rows_under_their_agent_between_its_calls_and_shown_once() -> None:
    timeline = Timeline()
    timeline.apply(_started("main"))
    changes = timeline.apply(ConversationRecorded(agent_id=AgentId("main"), messages=(
        _said("m1", "main", "prompt", "fix the tests"), _said("m2", "main", "text", "Editing conftest.py."))))
    assert changes == [Inserted(AgentKey("main"), 0, MessageKey("m1")), Inserted(AgentKey("main"), 1, MessageKey("m2"))]
    timeline.apply(CallQueued(call_id=CallId("c1"), agent_id=AgentId("main"), tool="Edit", args={}, summary="conftest"))
    timeline.apply(ConversationRecorded(agent_id=AgentId("main"), messages=(
        _said("m2", "main", "text", "Editing conftest.py."), _said("m3", "main", "text", "Done."))))
    assert timeline.children("a:main") == [MessageKey("m1"), MessageKey("m2"), RunKey("c1"), MessageKey("m3")]
    assert [m.text for m in timeline.said("main")] == ["fix the tests", "Editing conftest.py.", "Done."]
    assert timeline.children("m:m1") == [] and parse_key("m:m3") == MessageKey("m3")
    assert timeline.said("nobody") == []


def test_a_message_of_an_agent_not_seen_yet_still_gets_a_row() -> None:
    timeline = Timeline()
    timeline.apply(ConversationRecorded(agent_id=AgentId("x"), messages=(_said("m1", "x", "text", "hello"),)))
    assert timeline.roots == [AgentKey("x")] and timeline.children("a:x") == [MessageKey("m1")]


def test_tokens_sum_per_agent_roll_up_per_branch_and_session_and_count_per_day() -> None:
    timeline = Timeline()
    for event in (_started("main"), _started("sub", parent="main"), _started("other", session="s2")):
        timeline.apply(event)
    changes = timeline.apply(ConversationRecorded(agent_id=AgentId("main"), tokens=(
        _used("r1", "main", "opus", 1000), _used("r2", "main", "opus", 500, T0 + timedelta(days=1)))))
    assert changes == [Updated(AgentKey("main"))]
    timeline.apply(ConversationRecorded(agent_id=AgentId("sub"), tokens=(_used("r3", "sub", "haiku", 200),)))
    timeline.apply(ConversationRecorded(agent_id=AgentId("other"), tokens=(_used("r4", "other", "opus", 7),)))
    assert timeline.usage("main", rolled=False) == {"opus": Usage(input=1500, output=150, cache_read=3000)}
    assert timeline.usage("main") == {"opus": Usage(input=1500, output=150, cache_read=3000),
                                      "haiku": Usage(input=200, output=20, cache_read=400)}
    assert timeline.session_usage("s1") == timeline.usage("main")
    assert timeline.session_usage("s2") == {"opus": Usage(input=7, cache_read=14)}
    assert timeline.daily[("2026-12-09", "opus")] == Usage(input=500, output=50, cache_read=1000)
    assert timeline.context["main"] == 1500  # its latest response's: 500 in, 1000 from the cache


def test_what_could_not_be_read_is_kept_per_agent() -> None:
    timeline = Timeline()
    timeline.apply(_started("main"))
    changes = timeline.apply(ConversationRecorded(agent_id=AgentId("main"), skipped=3, note="skipped: 3 × damaged line"))
    assert changes == [Updated(AgentKey("main"))] and timeline.unread["main"] == "skipped: 3 × damaged line"


def test_reloaded_from_the_journal_the_words_sit_before_the_calls_they_came_before() -> None:
    from core.models.records import CallRecord, RunStatus
    timeline = Timeline()
    agent = AgentRecord(agent_id="main", session_id="s1", name="main", kind="claude-code", status=AgentStatus.DONE,
                        parent_id=None, spawned_by=None,
                        started_at=T0)
    call = CallRecord(call_id="c1", session_id="s1", agent_id="main", tool="Write", args={}, summary="a",
                      status=RunStatus.DONE, created_at=T0 + timedelta(seconds=2), agent_name="main", duration_s=1.0)
    timeline.load([agent], [call], said=([_said("m2", "main", "text", "after", T0 + timedelta(seconds=3)),
                                          _said("m1", "main", "text", "before", T0 + timedelta(seconds=1))],
                                         [_used("r1", "main", "opus", 10)]))
    assert timeline.children("a:main") == [MessageKey("m1"), RunKey("c1"), MessageKey("m2")]
    assert timeline.usage("main") == {"opus": Usage(input=10, output=1, cache_read=20)}


def test_a_call_is_matched_with_the_response_that_made_it_by_the_agents_own_id_for_it() -> None:
    timeline = Timeline()
    timeline.apply(_started("main"))
    response = TokenUse(response_id="r1", agent_id="main", at=T0, model="opus", usage=Usage(input=5),
                        tool_uses=("toolu_1", "toolu_2"))
    timeline.apply(ConversationRecorded(agent_id=AgentId("main"), tokens=(response,)))
    timeline.apply(CallQueued(call_id=CallId("c1"), agent_id=AgentId("main"), tool="Read", args={}, summary="a",
                              use_id="toolu_2"))
    timeline.apply(CallQueued(call_id=CallId("c2"), agent_id=AgentId("main"), tool="Read", args={}, summary="b"))
    assert timeline.response_of("c1") == response
    assert timeline.response_of("c2") is None and timeline.response_of("nope") is None
