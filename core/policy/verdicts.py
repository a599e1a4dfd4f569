"""What the policy is asked (`PolicyRequest`) and what it answers (`Verdict`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from core.models.bash import BashAnalysis, Impact
from core.tools.base import Annotations


@dataclass(frozen=True)
class PolicyRequest:
    """One call as the policy sees it."""

    tool: str
    """The tool's name; MCP tools are `mcp__<server>__<tool>`."""
    args: dict[str, Any] = field(default_factory=dict)
    """The validated arguments (Bash: `command`; file tools: `file_path`, `path`, `notebook_path`)."""
    workspace: Path = Path(".")
    annotations: Annotations = Annotations()
    paths: tuple[Path, ...] = ()
    """The resolved paths the call reads or writes (empty for Bash: its paths come from parsing)."""
    outside_agent: bool = False
    """The tool is the outside agent's own (Claude Code's Read under the hooks), which, unlike Belay's file
    tools, does not refuse paths outside the workspace itself."""


class Verdict(BaseModel):
    """The policy's answer for one call (a superset of `core.policy.Verdict`)."""

    model_config = ConfigDict(frozen=True)

    action: Literal["allow", "ask", "deny"]
    reason: str
    """Why, in words shown to the person and journaled; names the part of a command at fault."""
    rule: str | None = None
    """The rule that decided and its layer, e.g. "Bash(ls:*) [workspace]"."""
    impact: Impact = Impact()
    timeout_s: float | None = None
    """For ask: how long the approval waits before `on_timeout` applies; None waits forever."""
    on_timeout: Literal["deny", "allow"] = "deny"
    analysis: BashAnalysis | None = None
    """For Bash: the parsed command, flagged part by part, for the approval window."""
    suggested_rule: str | None = None
    """For ask: the rule "Always allow" would add."""
    preview: bool = False
    """For Bash: the rule that decided asks for the command to run in preview (`RuleEntry.preview`)."""
