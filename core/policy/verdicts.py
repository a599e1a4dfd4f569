"""What the policy is asked (`PolicyRequest`) and what it answers (`Verdict`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypedDict

from pydantic import BaseModel, ConfigDict, model_validator

from core.models.bash import BashAnalysis, Impact
from core.models.records import VerdictBy
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
    by: VerdictBy = "policy"
    """Who decided: a rule (named in `rule`, and only then), the mode in force, or Belay's built-in policy.
    Set where the verdict is made (`core.policy.decide.RuleSet.verdict`); journaled as the decider of a call
    allowed or denied without asking."""
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

    @model_validator(mode="after")
    def _rule_named_when_a_rule_decided(self) -> Verdict:
        if (self.rule is not None) != (self.by == "rule"):
            raise ValueError(f"a verdict by {self.by!r} names a rule exactly when a rule decided (rule={self.rule!r})")
        return self


class VerdictDetails(TypedDict, total=False):
    """What a verdict may say besides its action, reason and rule: the `Verdict` fields of the same names."""

    impact: Impact
    analysis: BashAnalysis | None
    suggested_rule: str | None
    preview: bool
