"""What an agent said and what it cost, as read from its own transcript: messages, token use, its intent.

An outside agent (Claude Code, Codex CLI, Gemini CLI) writes its conversation to a file of its own; Belay
follows that file (core.transcripts, core.outside.transcripts) and keeps of it what a person reads beside
the calls: the person's prompts, the agent's text and its visible reasoning, each with its time and its
agent, and the tokens each model response used.  Texts are capped (`TEXT_CHARS`): memory and the journal
hold what is shown, not what was sent.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict

MessageKind = Literal["prompt", "text", "thinking", "note"]
""""prompt": what the person (or, for a sub-agent, its parent agent) asked; "text": what the agent answered
in words; "thinking": a reasoning summary the agent recorded where it shows one; "note": what the person
told the agent from Belay's window (core.outside.notes), journaled by Belay when it was written."""

TEXT_CHARS = 8_000
"""The most of one message's text kept: its beginning, then a marker (the agent's own file has the rest)."""


def capped(text: str, limit: int = TEXT_CHARS) -> tuple[str, bool]:
    """`text` cut to `limit` characters, and whether it was."""
    if len(text) <= limit:
        return text, False
    return text[:limit] + "\n[… cut by Belay]", True


class Message(BaseModel):
    """One entry of an agent's conversation."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    message_id: str
    """Unique in the journal: the transcript's own id of the record, with the block's place in it."""
    agent_id: str
    """The Belay agent that said it (a sub-agent's own when its transcript says so), or that was told it."""
    kind: MessageKind
    text: str
    """Capped at `TEXT_CHARS`."""
    at: datetime
    """When the agent recorded it (its transcript's time, UTC)."""
    cut: bool = False
    """The text was longer than what is kept."""


class Usage(BaseModel):
    """Tokens one model response used, as the agent recorded them."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    input: int = 0
    """Input tokens not read from the cache."""
    output: int = 0
    """Output tokens (visible text, tool calls and reasoning)."""
    cache_read: int = 0
    """Input tokens read from the prompt cache."""
    cache_write: int = 0
    """Input tokens written to the prompt cache."""

    @property
    def context(self) -> int:
        """The context window in use for this response: every input token, cached or not."""
        return self.input + self.cache_read + self.cache_write

    def __add__(self, other: Usage) -> Usage:
        return Usage(input=self.input + other.input, output=self.output + other.output,
                     cache_read=self.cache_read + other.cache_read, cache_write=self.cache_write + other.cache_write)


class TokenUse(BaseModel):
    """The tokens of one model response, and the calls it made (their share of the cost)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    response_id: str
    """The model's id for the response (a response recorded in several records is counted once)."""
    agent_id: str
    """The Belay agent whose response it was."""
    at: datetime
    model: str
    """The model that answered, as the agent named it ("" when it did not)."""
    usage: Usage
    tool_uses: tuple[str, ...] = ()
    """The agent's own ids of the tool calls this response made (`tool_use_id` in its hooks)."""


class Intent(BaseModel):
    """Why an agent makes a call, in its own words: shown on the approval card."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    said: str = ""
    """The agent's last words before the call (its text, else its reasoning), capped."""
    prompt: str = ""
    """The prompt it is working on: the person's latest, or for a sub-agent the task its parent gave it."""
