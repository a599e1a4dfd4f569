"""Claude Code's transcript (`~/.claude/projects/<project>/<session>.jsonl`) read into messages and token use.

What was observed (Claude Code 2.1, tests/integration/CLAUDE_CODE_HOOKS.md): one JSON record a line, each
with a `type`.  "user" records hold the person's prompt (`message.content` a string, or text blocks) or
tool results (left out: the calls show them); "assistant" records hold one content block each (text,
thinking, tool_use), several records sharing the response's `message.id` and each repeating its `usage`
(counted once).  A sub-agent writes its own file, `<session>/subagents/agent-<agent id>.jsonl`, whose first
user record is the task its parent gave it.  Many other kinds carry the CLI's bookkeeping (attachments,
request dumps, queue operations): known, and let be without being parsed.  A kind not known here, a record
of an unexpected shape or a line that is no JSON is skipped and counted, never an error.
"""

from __future__ import annotations

import json
import re
from collections import Counter, OrderedDict
from datetime import timezone
from typing import Any

from core.models.conversation import Message, MessageKind, TokenUse, Usage, capped
from core.transcripts.reader import record_time

IGNORED = frozenset({
    "attachment", "system", "summary", "queue-operation", "api-request", "api-request-shape", "api-request-blob",
    "api-request-route", "tools-used", "last-prompt", "atis-latch", "file-history-snapshot", "custom-title",
    "progress", "tag", "agent-name", "pr-link", "mode", "worktree-state", "content-replacement", "cost-state",
})
"""Record kinds that hold no conversation: let be."""
_LEADING_TYPE = re.compile(rb'^\{"type":"([^"]{1,64})"')
"""A record whose kind comes first (the CLI's bookkeeping) is told apart without parsing it."""
_ATTACHMENT = re.compile(rb'^\{"parentUuid":(?:null|"[^"]*"),"isSidechain":(?:true|false),(?:"agentId":"[^"]*",)?'
                         rb'"attachment":')
"""The CLI's attachments (its environment, skill listings, the system prompt's snapshot) open so: let be."""
_TOOL_RESULTS = re.compile(rb'"type":"user","message":\{"role":"user","content":\[\{"tool_use_id":')
"""A user record that opens with a tool's result (the CLI writes one a record, nothing else in it): the calls show
results, so it is let be without parsing what is often the largest part of a transcript."""
_REMINDER = re.compile(r"<system-reminder>.*?</system-reminder>", re.S)
_RECENT_RESPONSES = 256
_UTC = timezone.utc


class ClaudeTranscript:
    """One transcript file's records turned into `Message`s and `TokenUse`s of one Belay agent."""

    def __init__(self, agent_id: str, *, sidechains: bool = False) -> None:
        self.agent_id = agent_id
        self.sidechains = sidechains
        """Whether records marked `isSidechain` belong to this agent (a sub-agent's own file), or are another's."""
        self.messages: list[Message] = []
        self.tokens: list[TokenUse] = []
        self.skipped: Counter[str] = Counter()
        """What could not be read since the last `take`, by why."""
        self._counted: OrderedDict[str, None] = OrderedDict()
        """The latest responses whose tokens were counted (their records come together)."""

    def feed(self, line: bytes) -> None:
        """Take in one line of the transcript."""
        leading = _LEADING_TYPE.match(line)
        if leading is not None and leading.group(1).decode("ascii", "replace") in IGNORED:
            return
        if _TOOL_RESULTS.search(line, 0, 2_000) is not None or _ATTACHMENT.match(line) is not None:
            return
        try:
            record = json.loads(line)
        except ValueError:
            self.skipped["damaged line"] += 1
            return
        if not isinstance(record, dict):
            self.skipped["damaged line"] += 1
            return
        kind = record.get("type")
        if kind in IGNORED:
            return
        if kind not in ("user", "assistant"):
            self.skipped[f"unknown kind {str(kind)[:40]!r}"] += 1
            return
        if (record.get("isSidechain") and not self.sidechains) or record.get("isMeta"):
            return
        message = record.get("message")
        if not isinstance(message, dict):
            self.skipped[f"{kind} record of an unknown shape"] += 1
            return
        if kind == "user":
            self._user(record, message)
        else:
            self._assistant(record, message)

    def take(self) -> tuple[list[Message], list[TokenUse], Counter[str]]:
        """What was read since the last take."""
        found = self.messages, self.tokens, self.skipped
        self.messages, self.tokens, self.skipped = [], [], Counter()
        return found

    def _user(self, record: dict[str, Any], message: dict[str, Any]) -> None:
        content = message.get("content")
        if isinstance(content, str):
            texts = [content]
        elif isinstance(content, list):
            texts = [b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text"]
        else:
            self.skipped["user record of an unknown shape"] += 1
            return
        text = _REMINDER.sub("", "\n".join(t for t in texts if isinstance(t, str))).strip()
        if text:
            self._say(record, 0, "prompt", text)

    def _assistant(self, record: dict[str, Any], message: dict[str, Any]) -> None:
        content = message.get("content")
        blocks = content if isinstance(content, list) else []
        uses: list[str] = []
        for index, block in enumerate(blocks):
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if kind == "text" and isinstance(block.get("text"), str) and block["text"].strip():
                self._say(record, index, "text", block["text"].strip())
            elif kind == "thinking" and isinstance(block.get("thinking"), str) and block["thinking"].strip():
                self._say(record, index, "thinking", block["thinking"].strip())
            elif kind == "tool_use" and isinstance(block.get("id"), str):
                uses.append(block["id"])
        self._count(record, message, tuple(uses))

    def _count(self, record: dict[str, Any], message: dict[str, Any], uses: tuple[str, ...]) -> None:
        """The response's tokens, the first time one of its records is seen; its later records add their calls."""
        response = message.get("id")
        usage = message.get("usage")
        if not isinstance(response, str) or not isinstance(usage, dict):
            return
        if response in self._counted:
            if uses:
                self._add_uses(response, uses)
            return
        self._counted[response] = None
        if len(self._counted) > _RECENT_RESPONSES:
            self._counted.popitem(last=False)
        model = message.get("model")
        self.tokens.append(TokenUse(response_id=response, agent_id=self.agent_id, at=record_time(record),
                                    model=model if isinstance(model, str) else "", usage=_usage(usage),
                                    tool_uses=uses))

    def _add_uses(self, response: str, uses: tuple[str, ...]) -> None:
        for i in range(len(self.tokens) - 1, -1, -1):  # a response read in this step: its calls gathered
            if self.tokens[i].response_id == response:
                token = self.tokens[i]
                self.tokens[i] = token.model_copy(update={"tool_uses": token.tool_uses + uses})
                return

    def _say(self, record: dict[str, Any], index: int, kind: MessageKind, text: str) -> None:
        kept, cut = capped(text)
        ident = record.get("uuid")
        self.messages.append(Message(message_id=f"{ident if isinstance(ident, str) else id(record)}:{index}",
                                     agent_id=self.agent_id, kind=kind, text=kept, cut=cut, at=record_time(record)))

    def __repr__(self) -> str:
        return f"<ClaudeTranscript agent={self.agent_id} pending={len(self.messages)}+{len(self.tokens)}>"


def _usage(usage: dict[str, Any]) -> Usage:
    def number(key: str) -> int:
        value = usage.get(key)
        return value if isinstance(value, int) and value >= 0 else 0
    return Usage(input=number("input_tokens"), output=number("output_tokens"),
                 cache_read=number("cache_read_input_tokens"), cache_write=number("cache_creation_input_tokens"))

