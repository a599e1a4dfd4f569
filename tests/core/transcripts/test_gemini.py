"""Gemini CLI's chat file read into messages and token use, as the CLI of test-tools/ writes it."""

from __future__ import annotations

import json
from typing import Any

from core.transcripts.gemini import GeminiTranscript


def _line(record: dict[str, Any]) -> bytes:
    return json.dumps(record).encode()


ANSWER = {"id": "r2", "timestamp": "2026-12-08T00:47:39.173Z", "type": "gemini", "content": "Listing the folder.",
          "thoughts": [{"subject": "", "description": "A listing is asked for."},
                       {"subject": "Choosing", "description": "list_directory does it."}],
          "tokens": {"input": 5000, "output": 30, "cached": 2000, "thoughts": 12, "tool": 0, "total": 5042},
          "model": "gemini-2.5-flash"}
CHAT = [
    _line({"sessionId": "s1", "projectHash": "p", "startTime": "2026-12-08T00:47:38.949Z", "kind": "main"}),
    _line({"$set": {"messages": [{"id": "c", "type": "user", "content": [{"text": "<session_context>..."}]}]}}),
    _line({"id": "r1", "timestamp": "2026-12-08T00:47:38.975Z", "type": "user",
           "content": [{"text": "list the folder please"}]}),
    _line(ANSWER),
    _line({**ANSWER, "toolCalls": [{"id": "list_directory__g1", "name": "list_directory"}]}),  # written again
    _line({"id": "r3", "timestamp": "2026-12-08T00:47:39.191Z", "type": "user",
           "content": [{"functionResponse": {"id": "list_directory__g1", "response": {"output": "empty"}}}]}),
    _line({"id": "r4", "type": "info", "content": "Request cancelled."}),
]


def test_the_prompt_thoughts_and_words_are_messages_and_a_record_written_again_is_read_once() -> None:
    reader = GeminiTranscript("a1")
    for line in CHAT:
        reader.feed(line)
    messages, tokens, skipped = reader.take()
    assert [(m.kind, m.text) for m in messages] == [
        ("prompt", "list the folder please"),
        ("thinking", "A listing is asked for.\nChoosing: list_directory does it."), ("text", "Listing the folder.")]
    (used,) = tokens
    assert (used.usage.input, used.usage.cache_read, used.usage.output, used.model) == (3000, 2000, 42,
                                                                                       "gemini-2.5-flash")
    assert not skipped and "seen=3" in repr(reader)  # r1, r2, r3: the note is no message


def test_unknown_kinds_and_damage_are_counted_never_raised() -> None:
    reader = GeminiTranscript("a1")
    for line in (b"{no", b"7", _line({"type": "hologram"}), _line({"type": "gemini", "content": "no id"})):
        reader.feed(line)
    assert reader.take()[2] == {"damaged line": 2, "unknown kind 'hologram'": 1, "gemini record of an unknown shape": 1}
