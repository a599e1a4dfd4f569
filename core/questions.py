"""The events of what a console asks a person, and of the answers: a call to approve, an MCP server's form.

Part of the one union of events (core.events, which gives every kind its place); a leaf like it, importing
only the records in `core.models` and the ids.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from core.ids import AgentId, CallId
from core.models.bash import BashAnalysis, Impact
from core.models.conversation import Intent
from core.models.diffs import FileDiff
from core.models.fact import Fact
from core.models.records import DecidedBy, DecidedVia, Decision, decided_by


class ProposedFile(BaseModel):
    """The content a pending write would leave in one file (text files only)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    path: str
    """Relative to the workspace."""
    content: str | None
    """The whole new content; None when the file would be deleted or is binary or too large to edit."""


class ApprovalRequested(Fact):
    """A call waits for a person (the recorder, when the policy asks and a front end can answer).

    Front ends answer through `Console.approve`, `deny` or `always_allow`; the request ends with an
    ApprovalResolved."""

    kind: Literal["approval_requested"] = "approval_requested"
    """The tag that tells this event from the others."""
    call_id: CallId
    """The waiting call."""
    agent_id: AgentId
    """The agent that made it."""
    tool: str
    """The tool's name."""
    summary: str
    """The call's one line, as in CallQueued."""
    reason: str
    """Why the policy asks (which rule, which effect)."""
    args: dict[str, Any]
    """The arguments, as in CallQueued."""
    diffs: tuple[FileDiff, ...] = ()
    """What the call would change, one diff per file (file tools; empty for commands)."""
    proposed: tuple[ProposedFile, ...] = ()
    """The content after the call, for approving with edits."""
    timeout_s: float | None = None
    """Seconds the request waits before its rule's default applies (None: for ever)."""
    on_timeout: Literal["deny", "allow"] = "deny"
    """What happens when `timeout_s` runs out."""
    rule: str | None = None
    """The rule that asked, with its layer, when a rule (not the defaults) decided."""
    impact: Impact = Impact()
    """How much the call could hurt, with the reasons."""
    analysis: BashAnalysis | None = None
    """For Bash: the parsed command, the parts that caused the question flagged."""
    suggested_rule: str | None = None
    """The rule "Always allow" would add; None when no rule can allow calls like this one."""
    cwd: str = ""
    """Where the command would run (Bash)."""
    sandbox: str = ""
    """What a Bash command would run in, in words ("bubblewrap: ..." or why there is no sandbox)."""
    output: str = ""
    """For a command run in preview (its `diffs` are what it would change): the end of what it printed."""
    intent: Intent | None = None
    """Why the agent makes the call, in its own words (its last words, the prompt it works on), when Belay
    reads its transcript (core.outside.transcripts); None when it has said nothing Belay read."""


class ApprovalResolved(Fact):
    """Whether a call runs was decided, made durable first (the recorder).

    Published when a question was answered, when nobody could be asked (`by` "headless"), and when the
    policy decided without asking (`by` "rule", "mode" or "policy"), so every decision that let a call run
    or stopped it is in the stream, with who made it."""

    kind: Literal["approval_resolved"] = "approval_resolved"
    """The tag that tells this event from the others."""
    call_id: CallId
    """The call that was asked about."""
    decision: Decision
    """approved, approved_edited (with the person's content), always_allowed, denied or timed_out."""
    reason: str = ""
    """The person's reason for a denial (the agent reads it), or how a timeout was settled."""
    by: Annotated[DecidedBy, BeforeValidator(decided_by)] = "person"
    """Who decided (see core.models.records.DecidedBy); "user", as events said before, reads as "person"."""
    rule: str | None = None
    """With `by` "rule": the rule that decided and its layer, e.g. "Bash(ls:*) [workspace]"."""
    via: DecidedVia | None = None
    """With `by` "person": where the person answered (the window, a notification, the terminal)."""


class ElicitationRequested(Fact):
    """An MCP server asks the person for input (MCP elicitation), shown in the window like an approval (core.mcp).

    Front ends answer through `Console.elicitations.answer` (accept with the form's content, decline or cancel);
    the request ends with an ElicitationResolved.  Without a front end that can answer, it is declined at once."""

    kind: Literal["elicitation_requested"] = "elicitation_requested"
    """The tag that tells this event from the others."""
    elicitation_id: str
    """The request, for answering it: `eli_...`."""
    server: str
    """The MCP server that asks (its name in the settings)."""
    message: str
    """What the server says it needs, in its own words."""
    requested_schema: dict[str, Any] = Field(default_factory=dict)
    """The form: a flat JSON schema of strings, numbers, integers, booleans and enums (empty in URL mode)."""
    mode: Literal["form", "url"] = "form"
    """"form": the person fills in the schema; "url": the server asks the person to open `url`."""
    url: str | None = None
    """The page to open, in URL mode."""


class ElicitationResolved(Fact):
    """A server's request for input ended: answered, or given up (core.mcp)."""

    kind: Literal["elicitation_resolved"] = "elicitation_resolved"
    """The tag that tells this event from the others."""
    elicitation_id: str
    """The request that ended."""
    action: Literal["accept", "decline", "cancel"]
    """What the server is told: the person accepted (with content), declined, or dismissed it."""
    by: Literal["person", "headless", "server", "belay"] = "person"
    """Who ended it: the person, nobody to ask (declined), the server (it stopped waiting or went away), or Belay
    itself (a form it cannot show is declined)."""
