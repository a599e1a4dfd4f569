"""What the approval panel writes about a request: who asks, why, what a previewed command printed, and why a
command cannot run in preview (`gui.window.approvals.panel` shows it; the details pane and the window name the
asking agent the same way)."""

from __future__ import annotations

import html

from core import ApprovalRequested, BashArgs, OverlaySupport, Timeline, ToolName, no_preview
from gui.window.approvals.command_card import impact_html
from gui.window.kit import theme
from gui.window.kit.code_font import code_family

PRINTED_LINES = 6
"""Lines of a previewed command's output its card shows, the last ones (the details pane has it all)."""


def agent_path(timeline: Timeline, agent_id: str) -> str:
    """'demo-agent › docs-writer': the asking agent with its parents."""
    names: list[str] = []
    seen: set[str] = set()
    current: str | None = agent_id
    while current and current in timeline.agents and current not in seen:
        seen.add(current)
        node = timeline.agents[current]
        names.append(node.name)
        current = node.parent_id
    return " › ".join(reversed(names)) or agent_id


def detail_html(request: ApprovalRequested, timeline: Timeline) -> str:
    """Who asks, what the agent says the call is for, every reason the policy gave, and the impact: in full."""
    who = html.escape(agent_path(timeline, request.agent_id))
    muted = theme.colour("muted")
    rule = f" <span style='color:{muted}'>(rule {html.escape(request.rule)})</span>" if request.rule else ""
    said = request.args.get("description")
    purpose = f"<br><i>“{html.escape(said)}”</i>" if isinstance(said, str) and said.strip() else ""
    impact = "" if request.tool == ToolName.BASH else f"<br>{impact_html(request.impact, limit=None)}"
    if request.tool == ToolName.BASH and request.diffs:  # a preview: the command and what it printed, then its changes
        return (f"Asked by <b>{who}</b>{purpose}<br><b>Previewed:</b> <code>{html.escape(request.summary)}</code>"
                f"{printed(request.output)}<br>{html.escape(request.reason)}")
    return f"Asked by <b>{who}</b>{purpose}<br>{html.escape(request.reason)}{rule}{impact}"


def why_no_preview(request: ApprovalRequested, previews: OverlaySupport) -> str | None:
    """Why this command cannot run in preview (None: it can)."""
    if request.tool != ToolName.BASH or request.diffs:
        return "Only a command can run in preview"
    try:
        why = no_preview(BashArgs.model_validate(request.args))
    except ValueError:
        why = "its arguments are not a command Belay can run"
    if why is not None:
        return why[0].upper() + why[1:]
    if not previews.available:
        return f"Previews are not available here: {previews.detail}"
    return None


def printed(output: str, lines: int = PRINTED_LINES) -> str:
    """The last lines a previewed command printed, for the card (all of it is in the call's details)."""
    shown = output.rstrip("\n").splitlines()[-lines:]
    if not shown:
        return "<br><i>It printed nothing.</i>"
    text = html.escape("\n".join(shown))  # wrapped: a long line must not widen the window
    return f"<div style='font-family:\"{code_family()}\"; white-space:pre-wrap; margin:2px 0'>{text}</div>"
