"""What each row of the timeline says: its cells, its tooltip, and the theme role its status is drawn in.

Plain text from the Qt-free read model (`core.Timeline`'s nodes); `gui.window.timeline.model` shows it and
caches it per row, and the details pane words a roll-up the same way.
"""

from __future__ import annotations

from collections import Counter

from core import AgentNode, BatchNode, Message, RunNode, RunStatus

STATUS_TEXT = {
    RunStatus.QUEUED: "… queued",
    RunStatus.BLOCKED_ON_USER: "◐ waiting",  # for approval: the panel beside it shows the request
    RunStatus.RUNNING: "● running",
    RunStatus.DONE: "✓ done",
    RunStatus.FAILED: "✗ failed",
    RunStatus.DENIED: "⊘ denied",
    RunStatus.CANCELLED: "■ cancelled",
    RunStatus.TIMED_OUT: "✗ timed out",
    RunStatus.INTERRUPTED: "⚠ interrupted",
    RunStatus.SKIPPED: "↷ skipped",
}
STATUS_COLOR = {
    RunStatus.BLOCKED_ON_USER: "warning",
    RunStatus.RUNNING: "running",
    RunStatus.DONE: "success",
    RunStatus.FAILED: "danger",
    RunStatus.DENIED: "denied",
    RunStatus.TIMED_OUT: "danger",
    RunStatus.INTERRUPTED: "warning",
    RunStatus.SKIPPED: "muted",
}
"""The theme role (gui/window/kit/theme.py) a status is drawn in."""
UNDONE_COLOR = "muted"


def duration(seconds: float | None) -> str:
    if seconds is None:
        return ""
    return f"{seconds * 1000:.0f} ms" if seconds < 1 else f"{seconds:.1f} s"


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'s' if n != 1 else ''}"


def changed_text(run: RunNode) -> str:
    """What a run changed, in a few words: "312 files · 1 commit", with how much of it is undone."""
    parts = []
    if run.changes:
        parts.append(plural(len(run.changes), "file"))
    if run.git_changes:
        parts.append(plural(len(run.git_changes), "git ref"))
    text = " · ".join(parts)
    if run.undone_paths and not run.undone_by:
        text += f" ({len(run.undone_paths)} undone)"
    return text


def run_columns(run: RunNode) -> tuple[str, ...]:
    if run.undone_by:
        status = "↶ undone"
    elif run.undone_paths:
        status = "↶ partly undone"
    else:
        status = STATUS_TEXT[run.status]
    return run.tool, run.summary, status, duration(run.duration_s), changed_text(run), ""


ROLLUP = (("waiting", (RunStatus.BLOCKED_ON_USER,)), ("failed", (RunStatus.FAILED, RunStatus.TIMED_OUT)),
          ("running", (RunStatus.RUNNING,)), ("denied", (RunStatus.DENIED,)))
"""What a roll-up names besides the number of calls, most urgent first (a narrow column cuts the end), when
there are any."""


def rollup_text(counts: Counter[RunStatus]) -> str:
    """"42 calls · 1 waiting · 3 failed": what a row (collapsed or not) holds, its sub-agents' calls included."""
    parts = [plural(sum(counts.values()), "call")]
    for label, statuses in ROLLUP:
        n = sum(counts[status] for status in statuses)
        if n:
            parts.append(f"{n} {label}")
    return " · ".join(parts)


def rollup_colour(counts: Counter[RunStatus]) -> str | None:
    """The status cell of an agent takes the colour of what needs a look under it: waiting, else failed."""
    for status in (RunStatus.BLOCKED_ON_USER, RunStatus.FAILED):
        if counts[status] or (status == RunStatus.FAILED and counts[RunStatus.TIMED_OUT]):
            return STATUS_COLOR[status]
    return None


def agent_columns(agent: AgentNode, counts: Counter[RunStatus], tokens: int = 0) -> tuple[str, ...]:
    """The roll-up in the Summary column: a collapsed row must not hide its failures (what the agent is, the
    tree and the tooltip say); in the Changed column, the tokens its branch used, when its transcript is read."""
    return agent.name, rollup_text(counts), agent.status.value, "", tokens_short(tokens) if tokens else "", ""


def tokens_short(tokens: int) -> str:
    """"3,200 tokens", "48k tokens", "1.2M tokens"."""
    if tokens < 10_000:
        return f"{tokens:,} tokens"
    if tokens < 1_000_000:
        return f"{tokens / 1000:.0f}k tokens"
    return f"{tokens / 1_000_000:.1f}M tokens"


def agent_tip(agent: AgentNode, parent: AgentNode | None, counts: Counter[RunStatus]) -> str:
    role = f"sub-agent of {parent.name}" if parent is not None else f"{agent.agent_kind} agent"
    return f"{agent.name}, {role}: {rollup_text(counts)}, its sub-agents' included"


def batch_columns(batch: BatchNode, live: bool, counts: Counter[RunStatus] | None = None,
                  left_s: float | None = None) -> tuple[str, ...]:
    """"6 calls · max parallel 3", "running (3/6 done, ~4.2 s left)" or "done: 5 ok, 1 failed, 0 skipped";
    with the roll-up of what it holds, its sub-agents' calls included ("+12 by sub-agents · 1 waiting · 3
    failed").  `left_s`: how long the running batch expects to take still (core.timeline.nodes)."""
    seen = sum(batch.statuses.values())
    calls = max(batch.size, seen)
    summary = plural(calls, "call") + (f" · max parallel {batch.plan.max_parallelism}" if batch.plan else "")
    if counts is not None:
        deeper = sum(counts.values()) - seen
        rolled = rollup_text(counts).split(" · ")[1:]
        summary += "".join(f" · {part}" for part in ([f"+{deeper} by sub-agents"] if deeper else []) + rolled)
    finished = sum(n for status, n in batch.statuses.items() if status.final)
    totals = batch.totals
    if totals is not None:
        if totals.cache_hits:
            summary += f" · {totals.cache_hits} cached"
        status = f"done: {totals.succeeded} ok, {totals.failed} failed, {totals.skipped} skipped"
        return f"☰ {batch.name}", summary, status, duration(totals.duration_s), "", ""
    state = "running" if live else "stopped"
    left = f", ~{duration(left_s)} left" if live and left_s is not None and finished < calls else ""
    return f"☰ {batch.name}", summary, f"{state} ({finished}/{calls} done{left})", "", "", ""


def batch_state(batch: BatchNode, live: bool) -> RunStatus:
    """The run status whose colour the batch's status cell takes."""
    if batch.totals is not None:
        return RunStatus.FAILED if batch.totals.failed else RunStatus.DONE
    return RunStatus.RUNNING if live else RunStatus.SKIPPED


def batch_tip(batch: BatchNode, cells: tuple[str, ...]) -> str:
    """The row's cells in full (they are often cut short), then the plan's shape."""
    lines = [f"Batch {batch.name}: {cells[1]}", cells[2]]
    if batch.plan is None:
        lines.append("Its plan was not recorded.")
    else:
        lines.append(f"{plural(len(batch.plan.levels), 'level')} of dependencies; critical path: "
                     f"{' → '.join(batch.plan.critical_path) or '(none)'}")
    return "\n".join(lines)


MESSAGE_LABEL = {"prompt": "» prompt", "text": "✎ said", "thinking": "☁ thought", "note": "✉ your note"}
"""The Call column of a message's row: whose words, and what kind."""


def message_columns(message: Message) -> tuple[str, ...]:
    """A message's row: its kind, then its first line (the whole is in the tooltip and the conversation page)."""
    first = message.text.strip().splitlines()[0] if message.text.strip() else ""
    more = len(message.text.strip().splitlines()) > 1
    return MESSAGE_LABEL[message.kind], first + (" …" if more else ""), message.at.astimezone().strftime("%H:%M:%S"), \
        "", "", ""


def message_tip(message: Message) -> str:
    """The message's text, as much as a tooltip can hold."""
    text = message.text if len(message.text) <= 1_500 else message.text[:1_500] + " …"
    return text + ("\n[cut by Belay: the agent's transcript has the rest]" if message.cut else "")
