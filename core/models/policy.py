"""The policy's vocabulary as data: rule actions, layers, modes, and one rule as the settings hold it."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

RuleAction = Literal["allow", "ask", "deny"]
"""What a rule says about the calls it matches."""
Scope = Literal["session", "workspace", "user"]
"""The layer a rule lives in: this session only, the workspace's settings file, or the user's."""
AllowScope = Literal["once", "session", "workspace", "user"]
"""How far an "always allow" answer reaches: this call only, or a rule in one of the layers (`Scope`)."""
Mode = Literal["default", "accept_edits", "plan", "bypass"]
"""How the policy treats calls no rule decides (see core.policy.engine)."""
OnTimeout = Literal["deny", "allow"]
"""What an approval nobody answered in time becomes."""


class RuleEntry(BaseModel):
    """One rule as the settings hold it."""

    model_config = ConfigDict(frozen=True)

    rule: str
    """Normalised, in Claude Code syntax."""
    action: RuleAction
    scope: Scope
    source: Path | None = None
    """The settings file it comes from; None for session rules."""
    timeout_s: float | None = None
    """How long an approval this rule asks for waits; None: the layer's default."""
    on_timeout: OnTimeout | None = None
    preview: bool = False
    """For a Bash rule: a command it matches runs in a private layer, and a person chooses which of its changes
    land (`[bash] effects = "preview"`, for the commands of this rule only)."""
