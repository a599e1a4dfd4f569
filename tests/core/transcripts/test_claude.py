"""Claude Code's transcript records read into messages and token use, as the CLI writes them."""

from __future__ import annotations

import json
from typing import Any

from core.transcripts.claude import ClaudeTranscript


def _line(record: dict[str, Any]) -> bytes:
    return json.dumps(record, separators=(",", ":")).encode()


def _assistant(uuid: str, response: str, block: dict[str, Any], usage: dict[str, int] | None = None,
               **extra: Any) -> bytes:
    usage = usage or {"input_tokens": 10, "output_tokens": 5, "cache_read_input_tokens": 100,
                      "cache_creation_input_tokens": 7}
    return _line({"parentUuid": None, "isSidechain": False, "type": "assistant", "uuid": uuid,
                  "timestamp": "2026-12-08T00:07:24.292Z",
                  "message": {"id": response, "model": "claude-opus-5-5", "role": "assistant", "content": [block],
                              "usage": usage}, **extra})


def test_prompts_texts_and_reasoning_become_messages_and_tool_results_do_not() -> None:
    reader = ClaudeTranscript("a1")
    reader.feed(_line({"type": "user", "uuid": "u1", "timestamp": "2026-12-08T00:07:23.960Z",
                       "message": {"role": "user", "content": "please do the work"}}))
    reader.feed(_assistant("r1", "msg_1", {"type": "thinking", "thinking": "A Write will do.", "signature": "s"}))
    reader.feed(_assistant("r2", "msg_1", {"type": "text", "text": "Writing notes."}))
    reader.feed(_assistant("r3", "msg_1", {"type": "tool_use", "id": "toolu_1", "name": "Write", "input": {}}))
    reader.feed(_line({"type": "user", "uuid": "u2", "message": {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok"}]}}))
    messages, tokens, skipped = reader.take()
    assert [(m.kind, m.text, m.agent_id) for m in messages] == [
        ("prompt", "please do the work", "a1"), ("thinking", "A Write will do.", "a1"), ("text", "Writing notes.", "a1")]
    assert messages[0].at.isoformat() == "2026-12-08T00:07:23.960000+00:00"
    (use,) = tokens  # one response in three records: counted once, with its call
    assert (use.usage.input, use.usage.output, use.usage.cache_read, use.usage.cache_write) == (10, 5, 100, 7)
    assert use.usage.context == 117 and use.model == "claude-opus-5-5" and use.tool_uses == ("toolu_1",)
    assert not skipped
    assert reader.take() == ([], [], {})


def test_bookkeeping_is_let_be_and_unknown_kinds_and_damage_are_counted_never_raised() -> None:
    reader = ClaudeTranscript("a1")
    for line in (b'{"type":"api-request-blob","message":{"role":"system","content":"huge"}}',
                 b'{"type":"queue-operation","operation":"enqueue"}',
                 _line({"parentUuid": "x", "attachment": {"type": "date"}, "type": "attachment"}),
                 b'{"type":"hologram","v":99}', b"{not json", b"[1, 2]",
                 _line({"type": "assistant", "message": "a string where an object was"}),
                 _line({"type": "user", "message": {"content": 42}})):
        reader.feed(line)
    messages, tokens, skipped = reader.take()
    assert messages == [] and tokens == []
    assert skipped == {"unknown kind 'hologram'": 1, "damaged line": 2, "assistant record of an unknown shape": 1,
                       "user record of an unknown shape": 1}


def test_reminders_meta_records_and_other_agents_sidechains_are_not_the_conversation() -> None:
    reader = ClaudeTranscript("main")
    reader.feed(_line({"type": "user", "uuid": "u1", "isMeta": True, "message": {"content": "Caveat: ..."}}))
    reader.feed(_line({"type": "user", "uuid": "u2", "message": {"content": [
        {"type": "text", "text": "<system-reminder>\nbe brief\n</system-reminder>"}]}}))
    reader.feed(_assistant("r1", "msg_9", {"type": "text", "text": "a sub-agent's words"}, isSidechain=True))
    assert reader.take()[0] == []
    sub = ClaudeTranscript("sub", sidechains=True)  # a sub-agent's own file: its records are all sidechain
    sub.feed(_line({"type": "user", "uuid": "u3", "isSidechain": True, "agentId": "a12",
                    "message": {"content": "SUBTASK: check"}}))
    sub.feed(_assistant("r2", "msg_10", {"type": "text", "text": "checked"}, isSidechain=True))
    assert [(m.agent_id, m.kind, m.text) for m in sub.take()[0]] == [("sub", "prompt", "SUBTASK: check"),
                                                                     ("sub", "text", "checked")]


def test_a_long_text_is_kept_capped_and_marked() -> None:
    reader = ClaudeTranscript("a1")
    reader.feed(_assistant("r1", "msg_1", {"type": "text", "text": "w" * 50_000}))
    (message,), _, _ = reader.take()
    assert message.cut and len(message.text) < 9_000 and message.text.endswith("[… cut by Belay]")
    assert "a1" in repr(reader)
