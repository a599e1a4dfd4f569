"""The policy: for each call, allow, ask or deny, and the rule that decided.

For now the rules are the walking skeleton's: read-only tools run, tools
that change files ask, and a person can allow a tool for the rest of the
session from the approval panel.  Rules in Claude Code's syntax, layers and
the Bash parser come with the policy engine; `evaluate` is the seam they
plug into, and what it returns does not change.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from core.tools.base import Tool

SPAWNING_TOOLS = frozenset({"Task", "Agent"})


class Verdict(BaseModel):
    """The policy's answer for one call."""

    model_config = ConfigDict(frozen=True)

    action: Literal["allow", "ask", "deny"]
    reason: str
    """Why, in words shown to the person and journaled."""
    rule: str | None = None
    """The rule that matched, in Claude Code syntax, if a rule decided."""
    timeout_s: float | None = None
    """How long an ask waits for a person (None: for ever)."""
    on_timeout: Literal["deny", "allow"] = "deny"
    """What happens to an ask nobody answered in time."""


class Policy:
    """Ordered decisions over the current rules; deny beats ask beats allow."""

    def __init__(self) -> None:
        self._session_allow: set[str] = set()
        self._session_deny: set[str] = set()

    def allow_for_session(self, tool_name: str) -> str:
        """Allow every later call of `tool_name` in this session; returns the rule."""
        self._session_allow.add(tool_name)
        return tool_name

    def evaluate(self, tool: Tool) -> Verdict:
        if tool.name in self._session_deny:
            return Verdict(action="deny", reason=f"{tool.name} is denied for this session", rule=tool.name)
        if tool.annotations.read_only:
            return Verdict(action="allow", reason=f"{tool.name} only reads")
        if tool.name in SPAWNING_TOOLS:
            return Verdict(action="allow", reason="a sub-agent's own calls are checked one by one")
        if tool.name in self._session_allow:
            return Verdict(action="allow", reason=f"{tool.name} is allowed for this session",
                           rule=tool.name)
        return Verdict(action="ask", reason=f"{tool.name} changes files in the workspace")

    def __repr__(self) -> str:
        return f"<Policy session_allow={sorted(self._session_allow)}>"
