"""Notes from the person to a hooked agent, held until the agent's next call can carry them.

A hooked agent cannot be spoken to between its calls; what its hook protocol allows is words added to a
hook's answer.  Claude Code shows the model a PreToolUse or PostToolUse answer's `additionalContext` as a
system message right after that call's tool result, and a PreToolUse refusal's reason as the tool result
itself (tests/integration/CLAUDE_CODE_HOOKS.md §6.1, §6.3).  So a note is journaled when the person writes
it (a conversation message of kind "note", core.outside.agents), held here by agent, and handed over once,
with whichever of that agent's hook answers comes next (`take`).
"""

from __future__ import annotations

NOTE_HEADER = "A note from the person supervising you through Belay (written while you worked):"
"""What the model reads before the person's words: who wrote them, and that it was not a tool."""


class Notes:
    """The notes written to each agent and not yet delivered, oldest first."""

    def __init__(self) -> None:
        self._held: dict[str, list[str]] = {}

    def hold(self, agent_id: str, text: str) -> None:
        """A note for the agent's next hook answer."""
        self._held.setdefault(agent_id, []).append(text)

    def waiting(self, agent_id: str) -> int:
        """How many notes wait for the agent's next call."""
        return len(self._held.get(agent_id, ()))

    def take(self, agent_id: str) -> str:
        """The agent's notes as the model reads them, handed over once ("" when none wait)."""
        notes = self._held.pop(agent_id, [])
        return "\n\n".join(f"{NOTE_HEADER}\n{text}" for text in notes)

    def __repr__(self) -> str:
        return f"<Notes waiting={sum(map(len, self._held.values()))} agents={len(self._held)}>"


def joined(*parts: str) -> str:
    """Words for one answer's field, from several sources, those that are empty left out."""
    return "\n\n".join(part for part in parts if part)
