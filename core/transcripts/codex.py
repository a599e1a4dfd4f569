"""Codex CLI's rollout (`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<session>.jsonl`) read into messages and
token use.

What was observed (Codex 0.169, tests/integration/CODEX_HOOKS.md): one JSON record a line, `{"timestamp",
"ordinal", "type", "payload"}`.  "response_item" records hold what the model saw and said: a "message" (role
"user": the person's prompt, or the CLI's own context in tags, left out; "developer": the CLI's instructions,
left out; "assistant": the agent's text), a "reasoning" item (its summary: the visible reasoning), a
"function_call" or "custom_tool_call" (its `call_id` is the hook's `tool_use_id`), their outputs (left out:
the calls show them).  "token_usage_record" gives one response's usage, after the items it made (its input
counts the cached part too); "turn_context" names the model.  Everything else ("session_meta", "event_msg",
"world_state") is the CLI's bookkeeping, let be; a kind not known here is counted, never an error.
"""

from __future__ import annotations

import json
from collections import Counter
from datetime import timezone
from typing import Any

from core.models.conversation import Message, MessageKind, TokenUse, Usage, capped
from core.transcripts.reader import record_time

IGNORED = frozenset({"session_meta", "event_msg", "world_state", "compacted", "thread_settings"})
_SKIPPED_ITEMS = frozenset({"function_call_output", "custom_tool_call_output", "local_shell_call_output",
                            "web_search_call", "tool_search_call", "tool_search_output", "image_generation_call"})
_UTC = timezone.utc


class CodexTranscript:
    """One rollout file's records turned into `Message`s and `TokenUse`s of one Belay agent."""

    def __init__(self, agent_id: str) -> None:
        self.agent_id = agent_id
        self.messages: list[Message] = []
        self.tokens: list[TokenUse] = []
        self.skipped: Counter[str] = Counter()
        self.model = ""
        """The model named by the latest turn context."""
        self._uses: list[str] = []
        """The calls made since the last response's usage (that response made them)."""

    def feed(self, line: bytes) -> None:
        try:
            record = json.loads(line)
        except ValueError:
            self.skipped["damaged line"] += 1
            return
        if not isinstance(record, dict) or not isinstance(record.get("payload"), dict):
            self.skipped["damaged line" if not isinstance(record, dict) else "record of an unknown shape"] += 1
            return
        kind, payload = record.get("type"), record["payload"]
        if kind in IGNORED:
            return
        if kind == "turn_context":
            model = payload.get("model")
            self.model = model if isinstance(model, str) else self.model
        elif kind == "response_item":
            self._item(record, payload)
        elif kind == "token_usage_record":
            self._usage(record, payload)
        else:
            self.skipped[f"unknown kind {str(kind)[:40]!r}"] += 1

    def take(self) -> tuple[list[Message], list[TokenUse], Counter[str]]:
        found = self.messages, self.tokens, self.skipped
        self.messages, self.tokens, self.skipped = [], [], Counter()
        return found

    def _item(self, record: dict[str, Any], item: dict[str, Any]) -> None:
        kind = item.get("type")
        if kind == "message":
            role, content = item.get("role"), item.get("content")
            texts = [c.get("text", "") for c in content if isinstance(c, dict)] if isinstance(content, list) else []
            text = "\n".join(t for t in texts if isinstance(t, str)).strip()
            if role == "assistant" and text:
                self._say(record, item, "text", text)
            elif role == "user" and text and not text.startswith("<"):  # the CLI's context comes in tags
                self._say(record, item, "prompt", text)
        elif kind == "reasoning":
            summary = item.get("summary")
            parts = [s.get("text", "") for s in summary if isinstance(s, dict)] if isinstance(summary, list) else []
            text = "\n".join(p for p in parts if isinstance(p, str)).strip()
            if text:
                self._say(record, item, "thinking", text)
        elif kind in ("function_call", "custom_tool_call", "local_shell_call"):
            if isinstance(item.get("call_id"), str):
                self._uses.append(item["call_id"])
        elif kind not in _SKIPPED_ITEMS:
            self.skipped[f"unknown item {str(kind)[:40]!r}"] += 1

    def _usage(self, record: dict[str, Any], payload: dict[str, Any]) -> None:
        usage, response = payload.get("usage"), payload.get("response_id")
        if not isinstance(usage, dict):
            self.skipped["token usage of an unknown shape"] += 1
            return

        def number(key: str) -> int:
            value = usage.get(key)
            return value if isinstance(value, int) and value >= 0 else 0
        cached = number("cached_input_tokens")
        used = Usage(input=max(number("input_tokens") - cached, 0), output=number("output_tokens"),
                     cache_read=cached, cache_write=number("cache_write_input_tokens"))
        ident = response if isinstance(response, str) else f"ordinal-{record.get('ordinal')}"
        self.tokens.append(TokenUse(response_id=ident, agent_id=self.agent_id, at=record_time(record), model=self.model,
                                    usage=used, tool_uses=tuple(self._uses)))
        self._uses = []

    def _say(self, record: dict[str, Any], item: dict[str, Any], kind: MessageKind, text: str) -> None:
        kept, cut = capped(text)
        ident = item.get("id") if isinstance(item.get("id"), str) else f"ordinal-{record.get('ordinal')}"
        self.messages.append(Message(message_id=f"{self.agent_id}/{ident}", agent_id=self.agent_id, kind=kind,
                                     text=kept, cut=cut, at=record_time(record)))

    def __repr__(self) -> str:
        return f"<CodexTranscript agent={self.agent_id} model={self.model!r}>"

