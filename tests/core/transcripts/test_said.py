"""The last words and the prompt kept per agent for the approval card."""

from __future__ import annotations

from datetime import datetime, timezone

from core.models.conversation import Message, MessageKind
from core.transcripts.said import LastWords

_AT = datetime(2026, 12, 8, tzinfo=timezone.utc)


def _said(agent: str, kind: MessageKind, text: str) -> Message:
    return Message(message_id=f"{agent}{kind}{text}", agent_id=agent, kind=kind, text=text, at=_AT)


def test_the_latest_words_since_the_latest_prompt_are_the_intent_of_each_agent() -> None:
    said = LastWords()
    assert said.intent("a1") is None
    said.heard([_said("a1", "prompt", "fix the tests"), _said("a1", "thinking", "the import is wrong"),
                _said("a1", "text", "I will edit conftest.py."), _said("a2", "prompt", "SUBTASK: docs")])
    intent = said.intent("a1")
    assert intent is not None and intent.said == "I will edit conftest.py." and intent.prompt == "fix the tests"
    assert said.intent("a2") is not None and said.intent("a2").said == ""  # type: ignore[union-attr]
    said.heard([_said("a1", "prompt", "now the docs")])  # a new prompt: the words before it no longer explain
    assert said.intent("a1") is not None and said.intent("a1").said == ""  # type: ignore[union-attr]
    said.heard([_said("a1", "text", "x" * 10_000)])
    assert len(said.intent("a1").said) < 2_100  # type: ignore[union-attr]
    assert "agents=2" in repr(said)


def test_a_note_from_the_person_is_never_taken_for_the_agents_reason() -> None:
    said = LastWords()
    said.heard([_said("a1", "text", "I will run the tests."), _said("a1", "note", "skip the slow ones")])
    intent = said.intent("a1")
    assert intent is not None and intent.said == "I will run the tests."
