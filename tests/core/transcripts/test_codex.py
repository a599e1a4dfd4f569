"""Codex CLI's rollout records read into messages and token use, as Codex 0.169 writes them."""

from __future__ import annotations

import json
from typing import Any

from core.transcripts.codex import CodexTranscript


def _line(kind: str, payload: dict[str, Any], ordinal: int = 0) -> bytes:
    return json.dumps({"timestamp": "2026-12-08T00:43:41.706Z", "ordinal": ordinal, "type": kind,
                       "payload": payload}).encode()


def _message(role: str, text: str, ident: str) -> bytes:
    kind = "output_text" if role == "assistant" else "input_text"
    return _line("response_item", {"type": "message", "id": ident, "role": role,
                                   "content": [{"type": kind, "text": text}]})


ROLLOUT = [
    _line("session_meta", {"session_id": "s1", "cli_version": "0.169.0"}),
    _line("event_msg", {"type": "task_started", "model_context_window": 258400}),
    _message("developer", "<skills_instructions>...", "m0"),
    _message("user", "<environment_context>\n  <cwd>/w</cwd>\n</environment_context>", "m1"),
    _line("turn_context", {"model": "gpt-5.5", "cwd": "/w"}),
    _message("user", "list the files please", "m2"),
    _line("response_item", {"type": "reasoning", "id": "rs_1",
                            "summary": [{"type": "summary_text", "text": "ls will do."}]}),
    _message("assistant", "Listing the files.", "msg_2"),
    _line("response_item", {"type": "function_call", "name": "exec_command", "arguments": "{}", "call_id": "c1"}),
    _line("token_usage_record", {"response_id": "resp_3", "usage": {
        "input_tokens": 3000, "cached_input_tokens": 1000, "cache_write_input_tokens": 0, "output_tokens": 40,
        "reasoning_output_tokens": 12, "total_tokens": 3040}}),
    _line("response_item", {"type": "function_call_output", "call_id": "c1", "output": "a.txt"}),
    _message("assistant", "There is a.txt.", "msg_4"),
    _line("token_usage_record", {"response_id": "resp_5", "usage": {
        "input_tokens": 3500, "cached_input_tokens": 3000, "output_tokens": 9}}),
]


def test_the_prompt_reasoning_and_words_are_messages_and_each_response_counts_its_tokens_and_calls() -> None:
    reader = CodexTranscript("a1")
    for line in ROLLOUT:
        reader.feed(line)
    messages, tokens, skipped = reader.take()
    assert [(m.kind, m.text) for m in messages] == [("prompt", "list the files please"), ("thinking", "ls will do."),
                                                    ("text", "Listing the files."), ("text", "There is a.txt.")]
    assert messages[0].message_id == "a1/m2" and not skipped
    first, second = tokens
    assert (first.response_id, first.model, first.tool_uses) == ("resp_3", "gpt-5.5", ("c1",))
    assert (first.usage.input, first.usage.cache_read, first.usage.output) == (2000, 1000, 40)
    assert first.usage.context == 3000 and second.tool_uses == () and second.usage.input == 500


def test_unknown_kinds_items_and_damage_are_counted_never_raised() -> None:
    reader = CodexTranscript("a1")
    for line in (b"{broken", b"[]", _line("hologram", {}), _line("response_item", {"type": "telepathy"}),
                 _line("token_usage_record", {"usage": "lots"}), b'{"type":"event_msg"}'):
        reader.feed(line)
    assert reader.take()[2] == {"damaged line": 2, "unknown kind 'hologram'": 1, "unknown item 'telepathy'": 1,
                                "token usage of an unknown shape": 1, "record of an unknown shape": 1}
    assert "gpt" not in repr(reader)
