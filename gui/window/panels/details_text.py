"""What the details pane writes about a call, an agent or a batch: HTML for a QTextBrowser, no widgets.

A run's page: tool, status, who ran it, the approval decision, what it changed (each file with its own undo or
redo link, the git references it moved), the arguments and the result or error; the journal's whole text when
the timeline's excerpt was cut (`FullCall`).
"""

from __future__ import annotations

import html
import json
import urllib.parse
from dataclasses import dataclass

from core import (
    AgentKey,
    BatchKey,
    CallRecord,
    Decision,
    ErrorInfo,
    FileChange,
    MessageKey,
    RunKey,
    RunNode,
    RunStatus,
    Timeline,
    ToolName,
    Usage,
)
from gui.window.approvals.text import agent_path
from gui.window.kit import theme
from gui.window.timeline.rows import rollup_text

MAX_SHOWN_CHARS = 20_000


def _pre(text: str) -> str:
    if len(text) > MAX_SHOWN_CHARS:
        text = text[:MAX_SHOWN_CHARS] + f"\n… ({len(text) - MAX_SHOWN_CHARS:,} more characters)"
    return f"<pre style='white-space:pre-wrap'>{html.escape(text)}</pre>"


MAX_LISTED_FILES = 400


def describe_changes(run: RunNode) -> str:
    """What a run changed: a line of totals ("Bash · npm install changed 312 files"), then each file with
    how it changed and its own undo or redo link, then the git references it moved."""
    parts = []
    if run.changes:
        unstored = sum(not c.stored for c in run.changes)
        total = f"{len(run.changes)} file{'s' if len(run.changes) != 1 else ''}"
        note = f"; {unstored} not stored (ignored or too large): they cannot be restored" if unstored else ""
        parts.append(f"<h4>Changed {total}{note}</h4>")
        rows = [_change_row(run, c) for c in run.changes[:MAX_LISTED_FILES]]
        if len(run.changes) > MAX_LISTED_FILES:
            rows.append(f"<tr><td colspan='2'>… and {len(run.changes) - MAX_LISTED_FILES:,} more (see the "
                        "Changes tab)</td></tr>")
        parts.append("<table cellspacing='0' cellpadding='1'>" + "".join(rows) + "</table>")
    if run.git_changes:
        state = "undone: the references are back, files and index left as they were" if run.git_undone else (
            "Undo moves branches back (like git reset --soft: files and index stay); a checkout only when it "
            "changes no file")
        parts.append("<h4>Git</h4><p>" + "<br>".join(html.escape(g.what) for g in run.git_changes) +
                     f"<br><span style='color:{theme.colour('muted')}'>{html.escape(state)}.</span></p>")
    return "".join(parts)


def _change_row(run: RunNode, change: FileChange) -> str:
    path = html.escape(change.path)
    what = f"renamed from {html.escape(change.old_path)}" if change.old_path else change.kind.value
    link = "link " if change.after_link or change.before_link else ""
    if not change.stored:
        action = f"<span style='color:{theme.colour('warning')}'>not stored: cannot be restored</span>"
    elif change.path in run.undone_paths:
        action = f"undone · <a href='redo-file:{urllib.parse.quote(change.path)}'>redo</a>"
    elif run.status.final and run.status != RunStatus.DENIED:
        action = f"<a href='undo-file:{urllib.parse.quote(change.path)}'>undo this file</a>"
    else:
        action = ""
    return f"<tr><td>{link}{what}&nbsp;</td><td><code>{path}</code>&nbsp; {action}</td></tr>"


LOADING_TEXT = "Loading… the whole arguments and result from the journal; an excerpt is shown meanwhile."
GONE_TEXT = "This call is no longer in the journal: only the excerpt shown here is left."


@dataclass(frozen=True)
class FullCall:
    """A selected call read back from the journal, ready to show (formatted off the GUI thread)."""

    call_id: str
    args_text: str | None
    """Its whole arguments as indented JSON; None when the journal no longer has the call."""
    output: str = ""
    error: ErrorInfo | None = None
    final: bool = True
    """It had ended when read (else its result is still to come, and is read again then)."""
    problem: str = GONE_TEXT
    """Why there is no whole call to show, when there is none."""

    @property
    def gone(self) -> bool:
        return self.args_text is None


def full_call(call_id: str, record: CallRecord | None) -> FullCall:
    """What the pane shows of a journaled call (json.dumps of megabytes: call it off the GUI thread)."""
    if record is None:
        return FullCall(call_id, None)
    return FullCall(call_id, json.dumps(record.args, indent=2, ensure_ascii=False), record.output, record.error,
                    record.status.final)


WHO = {"person": "by you", "auto-approver": "by the auto-approver (--auto-approve)", "mode": "by the mode",
       "policy": "by Belay's policy", "timeout": "when nobody answered in time",
       "headless": "as no window could ask", "console": "as the console closed"}
"""How the details pane names who decided (core.models.records.DecidedBy), after the decision."""
VIA = {"window": " in the window", "notification": " from the desktop notification", "terminal": " at the terminal"}
"""Where a person answered (core.models.records.DecidedVia), after "by you"."""


def decision_text(run: RunNode) -> str:
    """What was decided and by whom, e.g. "approved by you", "allowed by rule Bash(ls:*) [workspace]"."""
    assert run.decision is not None
    what = run.decision.value.replace("_", " ")
    if run.decided_by in ("rule", "mode", "policy") and run.decision is Decision.APPROVED:
        what = "allowed"
    if run.decided_by == "rule":
        return f"{what} by rule {run.decision_rule}" if run.decision_rule else f"{what} by a rule"
    if run.decided_by == "timeout" and run.decision_rule:
        return f"{what} when nobody answered in time (rule {run.decision_rule})"
    who = WHO.get(run.decided_by or "")
    if who and run.decided_by == "person" and run.decided_via:
        who += VIA[run.decided_via]
    return f"{what} {who}" if who else what


def describe_run(run: RunNode, timeline: Timeline, full: FullCall | None = None, loading: bool = False) -> str:
    """The pane's rich text for one run (pure: easy to test, cheap to call).

    `full` is the call as the journal holds it, when read; without it the timeline's excerpts are shown
    (with `loading`, a note that the whole is on its way)."""
    full = full if full is not None and full.call_id == run.call_id else None
    if run.undone_by:
        status = "undone"
    elif run.undone_paths:
        status = f"{run.status.value.replace('_', ' ')}, {len(run.undone_paths)} file(s) undone"
    else:
        status = run.status.value.replace("_", " ")
    took = f" in {run.duration_s:.2f} s" if run.duration_s is not None else ""
    parts = [f"<h3>{html.escape(run.tool)} · {html.escape(run.summary)}</h3>",
             f"<p><b>{status}</b>{took} · by {html.escape(agent_path(timeline, run.agent_id))}"
             f" · <span style='color:{theme.colour('muted')}'>{run.call_id}</span></p>"]
    if run.decision is not None:
        reason = f": {html.escape(run.decision_reason)}" if run.decision_reason else ""
        parts.append(f"<p>Decision: {html.escape(decision_text(run))}{reason}</p>")
    parts.append(response_html(timeline, run.call_id))
    parts.append(describe_changes(run))
    parts.append(_loading_note(run, full, loading))
    parts.append("<h4>Arguments</h4>" + _arguments(run, full))
    output, error = (full.output, full.error) if full is not None and full.final and not full.gone else \
        (run.output, run.error)
    if error is not None:
        danger = theme.colour("danger")
        parts.append(f"<h4 style='color:{danger}'>Error ({error.kind.value})</h4>" + _pre(error.message))
        if error.suggestion:
            parts.append(f"<p>{html.escape(error.suggestion)}</p>")
    elif output:
        parts.append("<h4>Result</h4>" + _pre(output))
    if run.tool == ToolName.BASH and run.status.final and \
            _was_cut(error.message if error is not None else output, run.output_cut and full is None):
        parts.append(f"<p><a href='full-output:{run.call_id}'>Read the whole output kept in the journal</a></p>")
    elif run.live_output:
        parts.append("<h4>Output so far</h4>" + _pre(run.live_output))
    return "".join(parts)


def _was_cut(text: str, excerpt_cut: bool) -> bool:
    """Whether the output the agent saw was cut (the journal may keep more).  The excerpt of a long
    output may have lost the marker from its middle: then its being cut at all says so."""
    return excerpt_cut or " cut ...]" in text  # the marker the tool and the pipeline put where they cut


def _loading_note(run: RunNode, full: FullCall | None, loading: bool) -> str:
    if full is not None and full.gone:
        return f"<p style='color:{theme.colour('warning')}'>{html.escape(full.problem)}</p>"
    if loading and (full is None or not full.final):
        return f"<p style='color:{theme.colour('muted')}'>{html.escape(LOADING_TEXT)}</p>"
    return ""


def _arguments(run: RunNode, full: FullCall | None) -> str:
    """The whole arguments when read (a link opens them all when even the pane must cut them), else the
    timeline's excerpt."""
    if full is None or full.args_text is None:
        return _pre(json.dumps(run.args, indent=2, ensure_ascii=False))
    more = ""
    if len(full.args_text) > MAX_SHOWN_CHARS:
        more = (f"<p><a href='full-args:{run.call_id}'>Read all the arguments "
                f"({len(full.args_text):,} characters)</a></p>")
    return _pre(full.args_text) + more


def describe_agent(key: AgentKey, timeline: Timeline) -> str:
    """Who the agent is and what it did: its calls counted with its sub-agents' (at any depth), as its row's
    roll-up counts them, and how many of those are its own."""
    agent = timeline.agents[key.agent_id]
    counts = timeline.rollup(key)
    own = sum(agent.statuses.values())  # those in its batches too
    deeper = sum(counts.values()) - own
    by_subs = f"<p>{own} of them its own, {deeper} by its sub-agents</p>" if deeper else ""
    spawned = f"<p>Spawned by the Task call {agent.spawned_by}</p>" if agent.spawned_by else ""
    kind = "sub-agent" if agent.parent_id else f"{agent.agent_kind} agent"
    message = f"<p>{html.escape(agent.message)}</p>" if agent.message else ""
    return (f"<h3>{html.escape(agent_path(timeline, agent.agent_id))}</h3>"
            f"<p>{kind} · {agent.status.value} · {html.escape(rollup_text(counts))}</p>{by_subs}{spawned}{message}"
            f"{spent_html(timeline, agent.agent_id)}")


def spent_html(timeline: Timeline, agent_id: str) -> str:
    """What the agent's responses used, its sub-agents' included, and the context window it has in use."""
    rolled, own = timeline.usage(agent_id), timeline.usage(agent_id, rolled=False)
    if not rolled:
        return ""
    total = sum(rolled.values(), Usage())
    lines = [f"<p><b>Tokens</b>: {tokens_text(total)}"]
    if rolled != own:
        lines.append(f"<br>its own: {tokens_text(sum(own.values(), Usage()))}")
    if agent_id in timeline.context:
        lines.append(f"<br>context in use: {timeline.context[agent_id]:,} tokens")
    unread = timeline.unread.get(agent_id)
    if unread:
        lines.append(f"<br><span style='color:{theme.colour('warning')}'>Its transcript: {html.escape(unread)}</span>")
    return "".join(lines) + "</p>"


def response_html(timeline: Timeline, call_id: str) -> str:
    """The tokens of the model response that made the call, where its transcript says which one did."""
    response = timeline.response_of(call_id)
    if response is None:
        return ""
    others = len(response.tool_uses) - 1
    shared = f", shared with {others} other call{'s' if others != 1 else ''} it made" if others > 0 else ""
    model = f" ({html.escape(response.model)})" if response.model else ""
    return f"<p>Tokens of the response that made it{model}: {tokens_text(response.usage)}{shared}</p>"


def tokens_text(usage: Usage) -> str:
    """"12,500 in · 830 out · 40,000 cached": the cached part is read from or written to the prompt cache."""
    cached = usage.cache_read + usage.cache_write
    return f"{usage.input:,} in · {usage.output:,} out" + (f" · {cached:,} cached" if cached else "")


def describe_message(key: MessageKey, timeline: Timeline) -> str:
    """One entry of an agent's conversation, whole (as Belay keeps it)."""
    message = timeline.messages[key.message_id]
    what = {"prompt": "Prompt to", "text": "Said by", "thinking": "Reasoning of", "note": "Your note to"}[message.kind]
    cut = "<p><i>Cut by Belay: the agent's own transcript has the rest.</i></p>" if message.cut else ""
    return (f"<h3>{what} {html.escape(agent_path(timeline, message.agent_id))}</h3>"
            f"<p>{message.at.astimezone():%Y-%m-%d %H:%M:%S}</p>{_pre(message.text)}{cut}")


def describe_batch(key: BatchKey, timeline: Timeline) -> str:
    batch = timeline.batches[key.batch_id]
    calls = [timeline.runs[k.call_id] for k in batch.children if isinstance(k, RunKey)]
    parts = [f"<h3>Batch {html.escape(batch.name)}</h3>",
             f"<p>{len(calls)} of {max(batch.size, len(calls))} calls seen, by "
             f"{html.escape(agent_path(timeline, batch.agent_id))}</p>"]
    if batch.totals is not None:
        t = batch.totals
        parts.append(f"<p>{t.succeeded} ok, {t.failed} failed, {t.skipped} skipped, {t.cache_hits} from the cache; "
                     f"{t.duration_s:.2f} s, at most {t.max_running} at once</p>")
    if batch.plan is not None:
        levels = "<br>".join(f"{n}: {html.escape(', '.join(level))}" for n, level in enumerate(batch.plan.levels))
        parts.append(f"<h4>Plan</h4><p>{levels}</p><p>Critical path: "
                     f"{html.escape(' → '.join(batch.plan.critical_path))}</p>")
    return "".join(parts)
