"""What the conversation page writes: an agent's prompts, words and reasoning among its calls, and what it cost.

HTML for a QTextBrowser (gui.window.panels.conversation shows it), from the Qt-free read model: the agent's
rows in the timeline's order (its messages, its calls, its batches, the sub-agents it spawned), the last
`SHOWN` of them (a long session's page is made in a few milliseconds, not in proportion to its length).
"""

from __future__ import annotations

import html
from datetime import datetime, timezone

from core import PRICES_DATED, AgentKey, BatchKey, MessageKey, PriceTable, RunKey, Timeline, Usage
from gui.window.approvals.text import agent_path
from gui.window.kit import theme
from gui.window.panels.details_text import tokens_text
from gui.window.timeline.rows import STATUS_TEXT

SHOWN = 150
"""The most rows of an agent's conversation a page shows: its latest."""


def conversation_html(timeline: Timeline, agent_id: str, prices: PriceTable | None = None) -> str:
    """The agent's page: a heading with what it cost, then its conversation, oldest first."""
    if agent_id not in timeline.agents:
        return f"<p style='color:{theme.colour('muted')}'>Choose an agent to read its conversation.</p>"
    parts = [f"<h3>{html.escape(agent_path(timeline, agent_id))}</h3>", cost_html(timeline, agent_id, prices)]
    rows = timeline.agents[agent_id].children
    if len(rows) > SHOWN:
        parts.append(f"<p style='color:{theme.colour('muted')}'>{len(rows) - SHOWN:,} earlier entries are in the "
                     "timeline.</p>")
    said = False
    colours = {role: theme.colour(role) for role in ("muted", "info_bg", "info_fg")}
    for key in rows[-SHOWN:]:
        said |= isinstance(key, MessageKey)
        parts.append(_entry(timeline, key, colours))
    if not said:
        parts.append(f"<p style='color:{theme.colour('muted')}'>Nothing it said has been read: Belay reads the "
                     "transcripts of Claude Code sessions supervised through hooks.</p>")
    return "".join(parts)


def _entry(timeline: Timeline, key: object, colours: dict[str, str]) -> str:
    muted = colours["muted"]
    if isinstance(key, MessageKey):
        message = timeline.messages[key.message_id]
        when = f"{message.at.astimezone():%H:%M:%S}"
        text = html.escape(message.text).replace("\n", "<br>")
        cut = f"<br><span style='color:{muted}'>[cut by Belay]</span>" if message.cut else ""
        if message.kind == "prompt":
            return (f"<p style='margin-top:10px'><span style='color:{muted}'>{when}</span> <b>» Prompt</b><br>"
                    f"<span style='background-color:{colours['info_bg']}; color:{colours['info_fg']}'>"
                    f"{text}</span>{cut}</p>")
        if message.kind == "note":
            return (f"<p style='margin-top:10px'><span style='color:{muted}'>{when}</span> <b>✉ Your note</b> "
                    f"<span style='color:{muted}'>(it goes with the agent's next call)</span><br>"
                    f"<span style='background-color:{colours['info_bg']}; color:{colours['info_fg']}'>"
                    f"{text}</span>{cut}</p>")
        if message.kind == "thinking":
            return (f"<p><span style='color:{muted}'>{when} ☁ reasoning</span><br>"
                    f"<i style='color:{muted}'>{text}</i>{cut}</p>")
        return f"<p><span style='color:{muted}'>{when}</span> ✎ {text}{cut}</p>"
    if isinstance(key, RunKey):
        run = timeline.runs[key.call_id]
        return (f"<p style='color:{muted}; margin-left:16px'>▸ <b>{html.escape(run.tool)}</b> "
                f"{html.escape(run.summary)} · {STATUS_TEXT[run.status]}</p>")
    aside = f"<p style='color:{muted}; margin-left:16px'>"
    if isinstance(key, AgentKey):
        return f"{aside}↳ sub-agent {html.escape(timeline.agents[key.agent_id].name)}</p>"
    if isinstance(key, BatchKey):
        return f"{aside}☰ batch {html.escape(timeline.batches[key.batch_id].name)}</p>"
    return ""


def day_usage(timeline: Timeline, day: str | None = None) -> dict[str, Usage]:
    """The workspace's tokens by model on a UTC day (today by default), every session's."""
    day = day or datetime.now(timezone.utc).date().isoformat()
    return {model: usage for (on, model), usage in timeline.daily.items() if on == day}


def cost_html(timeline: Timeline, agent_id: str, prices: PriceTable | None) -> str:
    """Tokens of the agent's branch (its sub-agents' included) and of its own, their money, its context window."""
    rolled = timeline.usage(agent_id)
    muted = theme.colour("muted")
    unread = timeline.unread.get(agent_id)
    warning = (f"<br><span style='color:{theme.colour('warning')}'>Part of its transcript could not be read: "
               f"{html.escape(unread)}</span>") if unread else ""
    if not rolled:
        return f"<p style='color:{muted}'>No token counts recorded.{warning}</p>" if warning else ""
    total = sum(rolled.values(), Usage())
    own = sum(timeline.usage(agent_id, rolled=False).values(), Usage())
    lines = [f"<b>Tokens</b>: {tokens_text(total)}"]
    if own != total:
        lines.append(f"its own: {tokens_text(own)}; its sub-agents': the rest")
    if prices is not None:
        money, unpriced = prices.cost(rolled)
        edited = any(prices.source(m) == "your prices.toml" for m in rolled)
        source = "your prices" if edited else f"Belay's default list prices of {PRICES_DATED}"
        lines.append(f"<b>about ${money:,.2f}</b> <span style='color:{muted}'>({source}"
                     + (f"; no price for {html.escape(', '.join(unpriced))}" if unpriced else "") + ")</span>")
    if agent_id in timeline.context:
        lines.append(f"context window in use: {timeline.context[agent_id]:,} tokens")
    today = day_usage(timeline)
    if today:
        day_money = f", about ${prices.cost(today)[0]:,.2f}" if prices is not None else ""
        lines.append(f"<span style='color:{muted}'>this workspace today: "
                     f"{tokens_text(sum(today.values(), Usage()))}{day_money}</span>")
    return "<p>" + "<br>".join(lines) + warning + "</p>"
