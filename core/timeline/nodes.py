"""The timeline's nodes (agents, batches, runs, shells, outside changes) and their Gantt spans.

A `GanttSpan` says when a run or a batch waited, asked, ran and ended, in
seconds on its group's time axis (its batch's for a call of a batch, its
agent's otherwise), for a front end to scale into a bar.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, NamedTuple

from core.errors import ErrorInfo
from core.events import ApprovalRequested
from core.models.batches import PlanInfo
from core.models.records import AgentStatus, DecidedBy, DecidedVia, Decision, FileChange, GitChange, RunStatus
from core.timeline.keys import NodeKey, RunKey


@dataclass
class AgentNode:
    agent_id: str
    name: str
    agent_kind: str
    session_id: str
    parent_id: str | None
    spawned_by: str | None
    status: AgentStatus
    started_at: datetime
    ended_at: datetime | None = None
    message: str = ""
    children: list[NodeKey] = field(default_factory=list)
    statuses: Counter[RunStatus] = field(default_factory=Counter)
    """Its runs by status, those in its batches included: its time window grows while one is unfinished."""
    last_at: datetime | None = None
    """The latest moment one of its runs or batches reached: where its time window ends when none is live."""
    open_batches: set[str] = field(default_factory=set)
    """Its batches not finished yet (its time window grows while one is, even between two calls)."""


@dataclass(frozen=True)
class BatchTotals:
    """How a batch ended, as its BatchFinished said."""

    succeeded: int
    failed: int
    skipped: int
    cache_hits: int
    duration_s: float
    max_running: int


@dataclass
class BatchNode:
    """Calls an agent submitted together: one row holding them (and the sub-agents they spawn)."""

    batch_id: str
    agent_id: str
    name: str
    size: int
    """How many calls it names (0 while only its calls, not its BatchStarted, have been seen)."""
    plan: PlanInfo | None
    started_at: datetime
    finished_at: datetime | None = None
    totals: BatchTotals | None = None
    children: list[NodeKey] = field(default_factory=list)
    statuses: Counter[RunStatus] = field(default_factory=Counter)
    """Its runs by status, kept as they change."""
    last_at: datetime | None = None
    interrupted: bool = False
    """Never finished: reloaded from the journal of a session that ended first."""


@dataclass(frozen=True, slots=True)
class GanttSpan:
    """A run (or a batch) on its group's time axis, in seconds from the group's start.

    A phase that never came is None.  `queued` is when it began to wait: for a
    call of a batch that is the batch's start (it waits for its dependencies
    and a free slot before the pipeline queues it).  While `live`, `ended` is
    the moment the span was taken ("now").
    """

    queued: float
    waiting_from: float | None
    """When it began to wait for a person's approval."""
    running_from: float | None
    ended: float
    live: bool
    status: RunStatus
    cached: bool = False
    attempts: int = 1


@dataclass(slots=True)
class RunNode:
    """One call as the timeline keeps it: its metadata in full, its arguments and output as excerpts
    (core.timeline.excerpts); the whole call is in the journal (`Console.call_record`).  Slotted: there is
    one per call for as long as the console runs, and a per-instance dict of its many fields cost more than
    the fields."""

    call_id: str
    agent_id: str
    tool: str
    summary: str
    args: dict[str, Any]
    """An excerpt of the arguments: long strings cut with a marker, the whole bounded."""
    status: RunStatus
    queued_at: datetime
    started_at: datetime | None = None
    ended_at: datetime | None = None
    duration_s: float | None = None
    output: str = ""
    """An excerpt of what the agent was told: its beginning and its end when long."""
    error: ErrorInfo | None = None
    """What went wrong (its message an excerpt, like `output`)."""
    args_cut: bool = False
    """`args` leaves something out: the journal has the rest."""
    output_cut: bool = False
    """`output` (or the error's message) leaves something out: the journal has the rest."""
    changes: tuple[FileChange, ...] = ()
    git_changes: tuple[GitChange, ...] = ()
    undone_by: str | None = None
    """A rollback undoing the whole call now (None when some or none of it is undone)."""
    undone_paths: tuple[str, ...] = ()
    """The changed paths undone now."""
    git_undone: bool = False
    """Its git reference moves are undone now."""
    approval: ApprovalRequested | None = None
    """The question put to a person: whole while it waits (the approval panel shows its diffs), then
    lightened once answered (its arguments an excerpt, its diffs and proposed contents dropped)."""
    decision: Decision | None = None
    decision_reason: str = ""
    decided_by: DecidedBy | None = None
    """Who made `decision` (a person, a rule, the mode, the policy, an auto-approver, a timeout...)."""
    decision_rule: str | None = None
    """The rule that decided, when one did."""
    decided_via: DecidedVia | None = None
    """Where a person answered (the window, a notification, the terminal), when a person did."""
    live_output: str = ""
    """The tail of the output streamed while it runs (bounded); emptied when it ends (`output` says it then)."""
    batch_id: str | None = None
    batch_key: str | None = None
    """Its id within its batch."""
    use_id: str | None = None
    """The outside agent's own id for the call (its transcript names the call by it)."""
    approval_at: datetime | None = None
    """When it began to wait for a person (None: it never asked)."""
    cached: bool = False
    """Answered from the result cache: the tool did not run."""
    attempts: int = 1
    progress: float | None = None
    """Seconds it had been working at its last heartbeat."""
    key: RunKey | None = field(default=None, repr=False, compare=False)
    """Its row's key, once the timeline has it (kept: each event about the run names its row)."""


@dataclass
class ShellNode:
    """A background shell and the tail of its output."""

    shell_id: str
    call_id: str
    command: str
    output: str = ""
    running: bool = True
    exit_code: int | None = None


@dataclass(frozen=True)
class ExternalNode:
    """Changes made outside Belay (an editor, a build), as found."""

    op_id: str
    at: datetime
    note: str
    changes: tuple[FileChange, ...]


class Inserted(NamedTuple):
    """A row appended: `key` at `row` under `parent` (None: the top level).  A named tuple: a flood makes one per
    call, and a tuple is made in a third of a frozen dataclass's time."""

    parent: NodeKey | None
    row: int
    key: NodeKey


class Updated(NamedTuple):
    """A row whose cells changed."""

    key: NodeKey


RAN = (RunStatus.DONE, RunStatus.FAILED, RunStatus.TIMED_OUT)
"""Outcomes of calls that ran (a reloaded one knows how long it ran, not when it started)."""


def known_end(run: RunNode) -> datetime | None:
    """When a run ended; for a run reloaded from the journal, when it was queued plus how long it ran."""
    if run.ended_at is not None or not run.status.final:
        return run.ended_at
    return run.queued_at + timedelta(seconds=run.duration_s or 0.0)


def run_span(run: RunNode, start: datetime, batch_start: datetime | None, now: datetime) -> GanttSpan:
    def offset(at: datetime) -> float:
        return max((at - start).total_seconds(), 0.0)

    live = not run.status.final
    ended = now if live else known_end(run) or run.queued_at
    running = run.started_at
    if running is None and run.ended_at is None and run.status in RAN:
        running = run.queued_at  # reloaded: drawn from when it was queued, for as long as it ran
    return GanttSpan(offset(batch_start or run.queued_at),
                     offset(run.approval_at) if run.approval_at else None,
                     offset(running) if running else None, offset(ended), live, run.status, run.cached,
                     run.attempts)


def batch_span(batch: BatchNode, live: bool, start: datetime, now: datetime) -> GanttSpan:
    begun = max((batch.started_at - start).total_seconds(), 0.0)
    if live:
        return GanttSpan(begun, None, begun, max((now - start).total_seconds(), begun), True, RunStatus.RUNNING)
    ended = batch.finished_at or batch.last_at or batch.started_at
    if batch.totals is not None:
        status = RunStatus.FAILED if batch.totals.failed else RunStatus.DONE
    else:  # its session, or its agent, ended first
        status = RunStatus.INTERRUPTED if batch.interrupted else RunStatus.CANCELLED
    return GanttSpan(begun, None, begun, max((ended - start).total_seconds(), begun), False, status)


def expected_left_s(batch: BatchNode, runs: Iterable[RunNode], now: datetime) -> float | None:
    """About how long a running batch will take still, by its plan's estimates (core.orchestration.estimates):
    level by level, the slowest call left in each, a running call's estimate less the time it has run so far.
    None when its plan holds no estimates (a batch journaled before there were any)."""
    if batch.plan is None or not batch.plan.estimates:
        return None
    by_key = {run.batch_key: run for run in runs if run.batch_key}
    left = 0.0
    for level in batch.plan.levels:
        slowest = 0.0
        for key in level:
            run, expected = by_key.get(key), batch.plan.estimates.get(key, 0.0)
            if run is not None and run.status.final:
                continue
            if run is not None and run.started_at is not None:
                expected = max(0.0, expected - (now - run.started_at).total_seconds())
            slowest = max(slowest, expected)
        left += slowest
    return left
