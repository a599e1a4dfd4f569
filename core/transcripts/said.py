"""Each agent's latest words and the prompt it works on, kept as its conversation is recorded.

The approval card shows why an agent makes a call (core.models.conversation.Intent): what it said just
before, and what it was asked.  The recorder hands every recorded message here (`heard`); a call's
question reads `intent(agent)`.  Only the latest of each is kept per agent: memory does not grow with
the conversation.
"""

from __future__ import annotations

from collections.abc import Iterable

from core.models.conversation import Intent, Message, capped

SAID_CHARS = 2_000
"""The most of the last words the card is given (it shows a few lines, and the rest when expanded)."""


class LastWords:
    """The latest text (or reasoning) and prompt of every agent heard from."""

    def __init__(self) -> None:
        self._said: dict[str, str] = {}
        """The agent's latest text or reasoning since its latest prompt."""
        self._prompt: dict[str, str] = {}

    def heard(self, messages: Iterable[Message]) -> None:
        """Messages recorded, oldest first."""
        for message in messages:
            agent = message.agent_id
            if message.kind == "note":
                continue  # the person's words, not the agent's reason for its next call
            if message.kind == "prompt":
                self._prompt[agent] = message.text
                self._said.pop(agent, None)  # words before a new prompt are no reason for what follows it
            else:
                self._said[agent] = message.text

    def intent(self, agent_id: str) -> Intent | None:
        """What the card shows of the agent's intent; None when it has said nothing Belay read."""
        said = self._said.get(agent_id, "")
        prompt = self._prompt.get(agent_id, "")
        if not said and not prompt:
            return None
        return Intent(said=capped(said, SAID_CHARS)[0], prompt=capped(prompt, SAID_CHARS)[0])

    def __repr__(self) -> str:
        return f"<LastWords agents={len(self._said.keys() | self._prompt.keys())}>"
