"""Gemini CLI's chat file (`~/.gemini/tmp/<project>/chats/session-<time>-<id>.jsonl`) read into messages and token
use.

What was observed (Gemini CLI of test-tools/, tests/integration/GEMINI_HOOKS.md): a header line (`sessionId`,
`projectHash`, `startTime`, no `type`), then one record a message: `{"id", "timestamp", "type", "content", ...}`.
"user" holds the person's prompt as text parts (or the tools' results as `functionResponse` parts, left out:
the calls show them); "gemini" holds the model's text, its `thoughts` (a summary streamed in pieces, each a
`description`), its `tokens` (`input` counting the cached part, `output`, `cached`, `thoughts`) and its
`toolCalls`.  A "gemini" record is written again when its calls have run (the same `id`): it is read once.
`{"$set": ...}` lines update the file's header (the session's context among them): let be, as are the CLI's
"info", "warning" and "error" notes.  Any other kind is counted, never an error.
"""

from __future__ import annotations

import json
from collections import Counter, OrderedDict
from datetime import timezone
from typing import Any

from core.models.conversation import Message, MessageKind, TokenUse, Usage, capped
from core.transcripts.reader import record_time

NOTES = frozenset({"info", "warning", "error"})
_RECENT = 256
_UTC = timezone.utc


class GeminiTranscript:
    """One chat file's records turned into `Message`s and `TokenUse`s of one Belay agent."""

    def __init__(self, agent_id: str) -> None:
        self.agent_id = agent_id
        self.messages: list[Message] = []
        self.tokens: list[TokenUse] = []
        self.skipped: Counter[str] = Counter()
        self._seen: OrderedDict[str, None] = OrderedDict()
        """The latest records read (a record written again is read once)."""

    def feed(self, line: bytes) -> None:
        try:
            record = json.loads(line)
        except ValueError:
            self.skipped["damaged line"] += 1
            return
        if not isinstance(record, dict):
            self.skipped["damaged line"] += 1
            return
        kind = record.get("type")
        if "$set" in record or kind in NOTES or (kind is None and "sessionId" in record):
            return
        if kind not in ("user", "gemini"):
            self.skipped[f"unknown kind {str(kind)[:40]!r}"] += 1
            return
        ident = record.get("id")
        if not isinstance(ident, str):
            self.skipped[f"{kind} record of an unknown shape"] += 1
            return
        if ident in self._seen:
            return
        self._seen[ident] = None
        if len(self._seen) > _RECENT:
            self._seen.popitem(last=False)
        if kind == "user":
            self._user(record, ident)
        else:
            self._gemini(record, ident)

    def take(self) -> tuple[list[Message], list[TokenUse], Counter[str]]:
        found = self.messages, self.tokens, self.skipped
        self.messages, self.tokens, self.skipped = [], [], Counter()
        return found

    def _user(self, record: dict[str, Any], ident: str) -> None:
        content = record.get("content")
        parts = content if isinstance(content, list) else [{"text": content}] if isinstance(content, str) else []
        text = "\n".join(p["text"] for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str)).strip()
        if text and not text.startswith("<session_context>"):
            self._say(record, ident, "prompt", text)

    def _gemini(self, record: dict[str, Any], ident: str) -> None:
        thoughts = record.get("thoughts")
        pieces = thoughts if isinstance(thoughts, list) else []
        thought = "\n".join(_thought(p) for p in pieces if isinstance(p, dict)).strip()
        if thought:
            self._say(record, f"{ident}:thought", "thinking", thought)
        content = record.get("content")
        text = content if isinstance(content, str) else "\n".join(
            p.get("text", "") for p in content if isinstance(p, dict)) if isinstance(content, list) else ""
        if text.strip():
            self._say(record, ident, "text", text.strip())
        tokens = record.get("tokens")
        if isinstance(tokens, dict):
            self._count(record, ident, tokens)

    def _count(self, record: dict[str, Any], ident: str, tokens: dict[str, Any]) -> None:
        def number(key: str) -> int:
            value = tokens.get(key)
            return value if isinstance(value, int) and value >= 0 else 0
        cached = number("cached")
        calls = record.get("toolCalls")
        uses = tuple(c["id"] for c in calls if isinstance(c, dict) and isinstance(c.get("id"), str)) \
            if isinstance(calls, list) else ()
        model = record.get("model")
        self.tokens.append(TokenUse(response_id=ident, agent_id=self.agent_id, at=record_time(record),
                                    model=model if isinstance(model, str) else "",
                                    usage=Usage(input=max(number("input") - cached, 0), cache_read=cached,
                                                output=number("output") + number("thoughts")), tool_uses=uses))

    def _say(self, record: dict[str, Any], ident: str, kind: MessageKind, text: str) -> None:
        kept, cut = capped(text)
        self.messages.append(Message(message_id=f"{self.agent_id}/{ident}", agent_id=self.agent_id, kind=kind,
                                     text=kept, cut=cut, at=record_time(record)))

    def __repr__(self) -> str:
        return f"<GeminiTranscript agent={self.agent_id} seen={len(self._seen)}>"


def _thought(piece: dict[str, Any]) -> str:
    """One thought: its subject (when it has one) and its description."""
    subject, description = piece.get("subject"), piece.get("description")
    text = description.strip() if isinstance(description, str) else ""
    return f"{subject.strip()}: {text}" if isinstance(subject, str) and subject.strip() else text

