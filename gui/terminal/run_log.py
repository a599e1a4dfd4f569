"""The readable log of a headless run: what the event stream says, one line per call start and end.

`Watch` keeps what the events say about each call (its label, how it
ended, how many ran at once); `LogView` turns events into lines such as
`[12:03:04.512] ✓ read_cfg  done in 12 ms (cached)`; `Output` writes them,
holding them back while a question is open at the terminal.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, TextIO

from core import (
    AgentFinished,
    AgentStarted,
    ApprovalRequested,
    ApprovalResolved,
    BatchStarted,
    CallFinished,
    CallProgress,
    CallQueued,
    CallRetrying,
    CallStarted,
    Event,
    ExternalChangesRecorded,
    Lagged,
    PlanInfo,
    RunStatus,
)

Auto = Literal["approve", "deny"]
"""How --auto answers approvals."""


class Output:
    """Lines to the terminal, held back while a question is open so they do not cut through it."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self._held: list[str] | None = None
        self._mid_line = False
        """A prompt is waiting on the current line."""

    def line(self, text: str) -> None:
        if self._held is not None:
            self._held.append(text)
        else:
            self.now(text)

    def now(self, text: str, end: str = "\n") -> None:
        """Write at once (held or not), on a line of its own."""
        self._write(("\n" if self._mid_line else "") + text + end)

    def finish_line(self, text: str = "") -> None:
        """End the prompt's line with `text` (an answer read from a pipe, which nothing echoed)."""
        self._write(text + "\n" if self._mid_line else "")

    def line_ended(self) -> None:
        """The terminal ended the prompt's line itself (it echoed the person's Enter)."""
        self._mid_line = False

    def hold(self) -> None:
        self._held = []

    def release(self) -> None:
        held, self._held = self._held or [], None
        for text in held:
            self.now(text)

    def __repr__(self) -> str:
        held = "no" if self._held is None else len(self._held)
        return f"<Output held={held} mid_line={self._mid_line}>"

    def _write(self, text: str) -> None:
        if text:
            self.stream.write(text)
            self.stream.flush()
            self._mid_line = not text.endswith("\n")


@dataclass
class LogRow:
    """One call as the run saw it."""

    label: str
    tool: str
    summary: str
    status: RunStatus = RunStatus.QUEUED
    cached: bool = False
    attempts: int = 1
    duration_s: float | None = None
    message: str = ""
    asked: str = ""
    """Why the policy asked, when it did."""


@dataclass
class Watch:
    """What the event stream says about the calls: labels, outcomes, how many ran at once."""

    agents: dict[str, tuple[str, str]] = field(default_factory=dict)
    """agent id -> (name, kind)"""
    roots: set[str] = field(default_factory=set)
    rows: dict[str, LogRow] = field(default_factory=dict)
    running: set[str] = field(default_factory=set)
    batches: list[tuple[str, PlanInfo]] = field(default_factory=list)
    """(agent id, plan) of every batch started."""
    max_running: int = 0
    _counts: dict[str, int] = field(default_factory=dict)

    def apply(self, event: Event) -> None:
        if isinstance(event, AgentStarted):
            self.agents[event.agent_id] = (event.name, event.agent_kind)
            if event.parent_id is None:
                self.roots.add(event.agent_id)
        elif isinstance(event, BatchStarted):
            self.batches.append((event.agent_id, event.plan))
        elif isinstance(event, CallQueued):
            self.rows[event.call_id] = LogRow(self._label(event), event.tool, event.summary)
        elif isinstance(event, CallStarted):
            self.running.add(event.call_id)
            self.max_running = max(self.max_running, len(self.running))
        elif isinstance(event, ApprovalRequested) and event.call_id in self.rows:
            self.rows[event.call_id].asked = event.reason
        elif isinstance(event, CallFinished):
            self.running.discard(event.call_id)
            row = self.rows.setdefault(event.call_id, LogRow(event.call_id, "?", ""))
            row.status, row.cached, row.attempts = event.status, event.cached, event.attempts
            row.duration_s, row.message = event.duration_s, event.error.message if event.error else ""

    def __repr__(self) -> str:
        return f"<Watch calls={len(self.rows)} running={len(self.running)} max_running={self.max_running}>"

    def label(self, call_id: str) -> str:
        row = self.rows.get(call_id)
        return row.label if row else call_id

    def _label(self, event: CallQueued) -> str:
        """The batch id when there is one; else `#n` for the plan's agent, `name#n` for a sub-agent."""
        if event.batch_key:
            return event.batch_key
        count = self._counts[event.agent_id] = self._counts.get(event.agent_id, 0) + 1
        if event.agent_id in self.roots:
            return f"#{count}"
        return f"{self.agents.get(event.agent_id, ('?', ''))[0]}#{count}"


class LogView:
    """The readable log: one line per call as it starts and as it ends, and what else matters."""

    def __init__(self, out: Output, watch: Watch, auto: Auto | None, width: int = 10) -> None:
        self.out, self.watch, self.auto, self.width = out, watch, auto, width
        self._lines: dict[type, Callable[[Any], str]] = {
            BatchStarted: self._batch, AgentStarted: self._agent_started, AgentFinished: self._agent_finished,
            CallStarted: self._started, CallFinished: self._finished, CallRetrying: self._retrying,
            CallProgress: self._progress, ApprovalResolved: self._resolved, Lagged: self._lagged,
            ExternalChangesRecorded: self._external,
        }

    def show(self, event: Event) -> None:
        line = self._lines.get(type(event))
        text = line(event) if line else ""
        if text:
            stamp = event.at.astimezone().strftime("%H:%M:%S.%f")[:-3]
            self.out.line(f"[{stamp}] {text}")

    def _call(self, mark: str, call_id: str, text: str) -> str:
        return f"{mark} {self.watch.label(call_id):<{self.width}}  {text}"

    def _batch(self, event: BatchStarted) -> str:
        levels, wide = len(event.plan.levels), event.plan.max_parallelism
        return f"Batch {event.name}: {plural(event.size, 'call')} in {plural(levels, 'level')}, up to {wide} at once"

    def _agent_started(self, event: AgentStarted) -> str:
        return "" if event.agent_kind == "batch" else f"● agent {event.name} started"

    def _agent_finished(self, event: AgentFinished) -> str:
        name, kind = self.watch.agents.get(event.agent_id, ("?", "batch"))
        return "" if kind == "batch" else f"● agent {name} {event.status.value}: {event.message}"

    def _started(self, event: CallStarted) -> str:
        row = self.watch.rows.get(event.call_id)
        return self._call("▶", event.call_id, f"{row.tool} {row.summary}") if row else ""

    def _finished(self, event: CallFinished) -> str:
        return self._call(_MARKS.get(event.status, "✗"), event.call_id, _ending(event))

    def _retrying(self, event: CallRetrying) -> str:
        return self._call("↻", event.call_id, f"try {event.attempt} failed ({event.error.message}); "
                                              f"trying again in {duration_text(event.delay_s)}")

    def _progress(self, event: CallProgress) -> str:
        note = f": {event.note}" if event.note else ""
        return self._call("…", event.call_id, f"still running after {duration_text(event.elapsed_s)}{note}")

    def _resolved(self, event: ApprovalResolved) -> str:
        """Answers the person did not type: --auto's, a script's review, a rule's timeout, the console closing."""
        if event.by in ("rule", "mode", "policy") or (not self.auto and event.by == "person"):
            return ""  # decided without asking, or typed at the prompt: the call's own lines say it
        how = event.decision.value.replace("_", " ")
        if event.by == "timeout":
            how += " (nobody answered in time)"
        elif event.by not in ("person", "auto-approver"):
            how += f" by {event.by}"
        elif self.auto == "approve" and event.decision.value == "denied":  # only a review rule denies then
            how += " by the script's review"
        else:
            how += f" by --auto {self.auto}"
        row = self.watch.rows.get(event.call_id)
        asked = f" (asked: {_cut(row.asked, 120)})" if row and row.asked else ""
        return self._call("?", event.call_id, how + asked)

    def _external(self, event: ExternalChangesRecorded) -> str:
        return f"! {len(event.changes)} file(s) changed outside Belay ({event.note})"

    def _lagged(self, event: Lagged) -> str:
        return f"! {event.missed} events were missed; a script's summary may undercount"


_MARKS = {RunStatus.DONE: "✓", RunStatus.SKIPPED: "↷"}


def _ending(event: CallFinished) -> str:
    message = event.error.message if event.error else ""
    if event.status == RunStatus.DONE:
        extra = " (cached)" if event.cached else ""
        extra += f" after {event.attempts} tries" if event.attempts > 1 else ""
        return f"done in {duration_text(event.duration_s)}{extra}"
    if event.status == RunStatus.SKIPPED:
        return message if message.startswith("skipped") else f"skipped: {message}"
    status = event.status.value.replace("_", " ")
    return f"{status}: {message}" if message and message != status else status


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"


def plural(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def duration_text(seconds: float) -> str:
    if seconds < 1:
        return f"{seconds * 1000:.0f} ms"
    if seconds < 60:
        return f"{seconds:.1f} s"
    return f"{int(seconds // 60)} min {seconds % 60:.0f} s"
