"""`belay run PLAN`: a plan run without the window, supervised from the terminal.

The same console as the window's (journal, policy, change capture), with a
terminal front end: a readable log of each call starting and ending (or,
with --json, every event as a JSON line), approvals answered at a prompt or
by --auto, and a summary.  The exit code says how it went: 0 when every
call succeeded, 1 when any did not, 2 when the plan or the options are bad
(then nothing runs).  No Qt is imported on this path.

Standard input is read by a daemon thread, a line at a time and only while
a question is open: a blocked read cannot be cancelled, and a thread in the
default executor would keep the program from exiting after a question went
away (its rule's timeout answered it) before the person did.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TextIO

from core import (AgentFinished, AgentStarted, ApprovalRequested, ApprovalResolved, AutoReviewer, BatchError,
                  BatchReport, BatchStarted, CallFinished, CallProgress, CallQueued, CallRetrying, CallStarted,
                  Console, Event, ExternalChangesRecorded, Lagged, RunStatus, run_script, unified_text)
from gui.plans import BatchPlan, Plan, PlanError, ScriptPlan, load_plan

Auto = Literal["approve", "deny"]
PROMPT = "Allow? [y]es / [n]o / [ya] always allow / [na] always deny: "
EOF_REASON = "no answer (stdin closed)"
MAX_DIFF_LINES = 400
"""Diff lines shown per approval; the window shows all of them."""
FAILED = {RunStatus.FAILED, RunStatus.DENIED, RunStatus.CANCELLED, RunStatus.TIMED_OUT, RunStatus.INTERRUPTED}


@dataclass(frozen=True)
class RunOptions:
    plan: str
    workspace: str | None = None
    state_dir: str | None = None
    auto: Auto | None = None
    as_json: bool = False
    fail_fast: bool = False
    concurrency: int | None = None


class BadRun(Exception):
    """The plan or the options are wrong: exit 2, nothing run."""


def run_plan(options: RunOptions, out: TextIO = sys.stdout, err: TextIO = sys.stderr) -> int:
    """Run a plan to the end; returns the exit code."""
    try:
        workspace, plan = _prepare(options, err)
    except (BadRun, PlanError) as e:
        err.write(f"belay run: {e}\n")
        return 2
    logging.basicConfig(level=logging.WARNING, format="belay: %(levelname)s %(name)s: %(message)s")
    try:
        return asyncio.run(_run(options, plan, workspace, out, err))
    except BadRun as e:
        err.write(f"belay run: {e}\n")
        return 2


def _prepare(options: RunOptions, err: TextIO) -> tuple[Path, Plan]:
    if options.as_json and options.auto is None:
        raise BadRun("--json never prompts, so it needs --auto approve or --auto deny")
    workspace = Path(options.workspace or os.getcwd()).expanduser().resolve()
    if not workspace.is_dir():
        raise BadRun(f"the workspace {workspace} is not a directory")
    plan = load_plan(options.plan, workspace)
    if isinstance(plan, ScriptPlan) and (options.fail_fast or options.concurrency):
        err.write("belay run: note: --fail-fast and --concurrency apply to batches; a scripted agent runs its "
                  "steps one by one and goes on after a failed step\n")
    return workspace, plan


# -- output -------------------------------------------------------------------


class Output:
    """Lines to the terminal, held back while a question is open so they do not cut through it."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self._held: list[str] | None = None

    def line(self, text: str) -> None:
        if self._held is not None:
            self._held.append(text)
        else:
            self.now(text)

    def now(self, text: str, end: str = "\n") -> None:
        self.stream.write(text + end)
        self.stream.flush()

    def hold(self) -> None:
        self._held = []

    def release(self) -> None:
        held, self._held = self._held or [], None
        for text in held:
            self.now(text)


@dataclass
class Row:
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
    rows: dict[str, Row] = field(default_factory=dict)
    running: set[str] = field(default_factory=set)
    max_running: int = 0
    lagged: int = 0
    _counts: dict[str, int] = field(default_factory=dict)

    def apply(self, event: Event) -> None:
        if isinstance(event, AgentStarted):
            self.agents[event.agent_id] = (event.name, event.agent_kind)
            if event.parent_id is None:
                self.roots.add(event.agent_id)
        elif isinstance(event, CallQueued):
            self.rows[event.call_id] = Row(self._label(event), event.tool, event.summary)
        elif isinstance(event, CallStarted):
            self.running.add(event.call_id)
            self.max_running = max(self.max_running, len(self.running))
        elif isinstance(event, ApprovalRequested) and event.call_id in self.rows:
            self.rows[event.call_id].asked = event.reason
        elif isinstance(event, CallFinished):
            self.running.discard(event.call_id)
            row = self.rows.setdefault(event.call_id, Row(event.call_id, "?", ""))
            row.status, row.cached, row.attempts = event.status, event.cached, event.attempts
            row.duration_s, row.message = event.duration_s, event.error.message if event.error else ""
        elif isinstance(event, Lagged):
            self.lagged += event.missed

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
        return f"Batch {event.name}: {event.size} calls in {levels} levels, up to {wide} at once"

    def _agent_started(self, event: AgentStarted) -> str:
        return "" if event.agent_kind == "batch" else f"● agent {event.name} started"

    def _agent_finished(self, event: AgentFinished) -> str:
        name, kind = self.watch.agents.get(event.agent_id, ("?", "batch"))
        return "" if kind == "batch" else f"● agent {name} {event.status.value}: {event.message}"

    def _started(self, event: CallStarted) -> str:
        row = self.watch.rows.get(event.call_id)
        return self._call("▶", event.call_id, row.summary) if row else ""

    def _finished(self, event: CallFinished) -> str:
        return self._call(_MARKS.get(event.status, "✗"), event.call_id, _ending(event))

    def _retrying(self, event: CallRetrying) -> str:
        return self._call("↻", event.call_id, f"try {event.attempt} failed ({event.error.message}); "
                                              f"trying again in {_duration(event.delay_s)}")

    def _progress(self, event: CallProgress) -> str:
        note = f": {event.note}" if event.note else ""
        return self._call("…", event.call_id, f"still running after {_duration(event.elapsed_s)}{note}")

    def _resolved(self, event: ApprovalResolved) -> str:
        """Answers the person did not type: --auto's, a rule's timeout, the console closing."""
        if not self.auto and event.by == "user":
            return ""
        by = f"--auto {self.auto}" if self.auto and event.by == "user" else event.by
        row = self.watch.rows.get(event.call_id)
        asked = f" (asked: {row.asked})" if row and row.asked else ""
        return self._call("?", event.call_id, f"{event.decision.value.replace('_', ' ')} by {by}{asked}")

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
        return f"done in {_duration(event.duration_s)}{extra}"
    if event.status == RunStatus.SKIPPED:
        return message if message.startswith("skipped") else f"skipped: {message}"
    status = event.status.value.replace("_", " ")
    return f"{status}: {message}" if message else status


def _duration(seconds: float) -> str:
    if seconds < 1:
        return f"{seconds * 1000:.0f} ms"
    if seconds < 60:
        return f"{seconds:.1f} s"
    return f"{int(seconds // 60)} min {seconds % 60:.0f} s"


# -- approvals ----------------------------------------------------------------


class StdinLines:
    """Lines of standard input, read by a daemon thread only while someone waits for one."""

    def __init__(self, fd: int = 0) -> None:
        self._fd = fd
        self._buffer = b""
        self._eof = False
        self._asked = False
        self._wanted = threading.Semaphore(0)
        self._chunks: asyncio.Queue[bytes] = asyncio.Queue()
        self._thread: threading.Thread | None = None

    async def readline(self) -> str | None:
        """The next line without its ending; None at the end of input."""
        while b"\n" not in self._buffer and not self._eof:
            if self._thread is None:
                loop = asyncio.get_running_loop()
                self._thread = threading.Thread(target=self._read, args=(loop,), name="belay stdin", daemon=True)
                self._thread.start()
            if not self._asked:
                self._asked = True
                self._wanted.release()
            chunk = await self._chunks.get()
            self._asked = False
            self._buffer += chunk
            self._eof = not chunk
        if not self._buffer:
            return None
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line.decode("utf-8", "replace").rstrip("\r")

    def _read(self, loop: asyncio.AbstractEventLoop) -> None:
        while True:
            self._wanted.acquire()
            try:
                chunk = os.read(self._fd, 65536)
            except OSError:  # no standard input at all: as good as closed
                chunk = b""
            try:
                loop.call_soon_threadsafe(self._chunks.put_nowait, chunk)
            except RuntimeError:  # the run ended while this read waited
                return
            if not chunk:
                return


class TerminalApprover:
    """Asks the person at the terminal about each request, one at a time, in the order they came."""

    def __init__(self, console: Console, out: Output, watch: Watch, lines: StdinLines, echo: bool) -> None:
        self.console, self.out, self.watch, self.lines = console, out, watch, lines
        self.echo = echo
        """Print each answer after its prompt (input from a pipe is not echoed by a terminal)."""
        self._queue: asyncio.Queue[ApprovalRequested] = asyncio.Queue()

    def offer(self, request: ApprovalRequested) -> None:
        self._queue.put_nowait(request)

    async def run(self) -> None:
        while True:
            request = await self._queue.get()
            if any(r.call_id == request.call_id for r in self.console.pending_approvals()):
                self.out.hold()
                try:
                    await self._ask(request)
                finally:
                    self.out.release()

    async def _ask(self, request: ApprovalRequested) -> None:
        self.out.now(card(request, self.watch.label(request.call_id)), end="")
        while True:
            answer = await self._prompt(PROMPT)
            if answer is None:
                self.out.now(f"  denied: {EOF_REASON}")
                self._done(self.console.deny(request.call_id, EOF_REASON))
                return
            choice = answer.strip().lower()
            if choice in ("y", "yes"):
                self._done(self.console.approve(request.call_id))
            elif choice in ("n", "no"):
                reason = await self._prompt("Reason for the agent (optional): ")
                self._done(self.console.deny(request.call_id, reason or ""))
            elif choice == "ya":
                await self._always_allow(request)
            elif choice == "na":
                await self._always_deny(request)
            else:
                self.out.now("  Please answer y, n, ya or na.")
                continue
            return

    async def _always_allow(self, request: ApprovalRequested) -> None:
        if self._done(self.console.always_allow(request.call_id, "session")):
            if request.suggested_rule:
                self.out.now(f"  Allowed; the session rule {request.suggested_rule} allows calls like it from now on.")
            else:
                self.out.now("  Allowed once: no rule can allow calls like this one, so they will be asked again.")

    async def _always_deny(self, request: ApprovalRequested) -> None:
        rule = request.suggested_rule or request.tool
        try:
            stored = await self.console.add_rule(rule, "deny", "session")
        except ValueError as e:
            self.out.now(f"  Could not add the deny rule {rule}: {e}")
            self._done(self.console.deny(request.call_id))
            return
        self.out.now(f"  Denied; the session rule {stored} denies calls like it from now on.")
        self._done(self.console.deny(request.call_id, f"always denied for this session (rule {stored})"))

    def _done(self, resolved: bool) -> bool:
        if not resolved:
            self.out.now("  Too late: the request had already been answered (its time ran out).")
        return resolved

    async def _prompt(self, prompt: str) -> str | None:
        self.out.now(prompt, end="")
        line = await self.lines.readline()
        if self.echo or line is None:
            self.out.now(line if line is not None else "")
        return line


def card(request: ApprovalRequested, label: str) -> str:
    """What the person reads before answering: tool, summary, reason, then the diff or the command."""
    lines = [f"── approval needed: {label} ──", f"tool:    {request.tool}", f"summary: {request.summary}",
             f"reason:  {request.reason}"]
    if request.impact.reasons:
        lines.append(f"impact:  {request.impact.level}: {'; '.join(request.impact.reasons)}")
    if request.timeout_s:
        lines.append(f"timeout: {request.timeout_s:g} s, then {request.on_timeout}")
    if request.analysis is not None:
        lines += _bash_lines(request)
    diff = "".join(unified_text(d) for d in request.diffs).splitlines()
    lines += diff[:MAX_DIFF_LINES]
    if len(diff) > MAX_DIFF_LINES:
        lines.append(f"… {len(diff) - MAX_DIFF_LINES} more diff lines (the window shows them all)")
    return "\n".join(lines) + "\n"


def _bash_lines(request: ApprovalRequested) -> list[str]:
    analysis = request.analysis
    assert analysis is not None
    lines = [f"command: {analysis.command}", f"in:      {request.cwd}"]
    if request.sandbox:
        lines.append(f"sandbox: {request.sandbox}")
    for problem in (analysis.hidden_character, analysis.syntax_error):
        if problem:
            lines.append(f"  ! {problem}")
    lines += [f"  ! {c.text}  ({c.effect}: {c.why})" for c in analysis.commands if c.effect not in ("read", "edit")]
    return lines


# -- the run ------------------------------------------------------------------


@dataclass
class Totals:
    """The summary, in both modes."""

    kind: str
    name: str
    calls: int
    succeeded: int
    failed: int
    skipped: int
    cache_hits: int
    levels: int
    max_parallelism: int
    max_running: int
    duration_s: float
    results: list[dict[str, Any]]

    @property
    def exit_code(self) -> int:
        return 0 if self.failed == 0 and self.skipped == 0 else 1


async def _run(options: RunOptions, plan: Plan, workspace: Path, stdout: TextIO, stderr: TextIO) -> int:
    console = Console(workspace, state_dir=options.state_dir)
    await console.open()
    try:
        for note in console.recovery_notes:
            stderr.write(f"belay run: note: {note}\n")
        return await _supervise(console, options, plan, Output(stdout))
    finally:
        await console.close()


async def _supervise(console: Console, options: RunOptions, plan: Plan, out: Output) -> int:
    watch = Watch()
    view = LogView(out, watch, options.auto, _label_width(plan))
    asker = TerminalApprover(console, out, watch, StdinLines(), echo=not _is_tty(0)) if not options.auto else None
    answer = asker.offer if asker else _auto_answer(console, options.auto or "deny", plan)
    sub = console.subscribe(maxsize=100_000)
    unregister = console.register_approver(f"terminal (--auto {options.auto})" if options.auto else "terminal")

    def handle(event: Event) -> None:
        watch.apply(event)
        if options.as_json:
            out.line(json.dumps(event.model_dump(mode="json"), ensure_ascii=False))
        else:
            view.show(event)
        if isinstance(event, ApprovalRequested):
            answer(event)

    follower = asyncio.create_task(_follow(sub, handle), name="belay run: events")
    asking = asyncio.create_task(asker.run(), name="belay run: approvals") if asker else None
    try:
        totals = await console.launch(_work(console, options, plan, watch), f"belay run {options.plan}")
    finally:
        for task in (follower, asking):
            if task is not None:
                task.cancel()
                await asyncio.wait([task])
        while batch := sub.drain():  # what was published after the follower's last look
            for event in batch:
                handle(event)
        sub.close()
        unregister()
    _show_totals(out, totals, console, options.as_json)
    return totals.exit_code


def _auto_answer(console: Console, auto: Auto, plan: Plan) -> Callable[[ApprovalRequested], None]:
    """--auto deny denies; --auto approve approves, unless a script's review rules say to deny."""
    if auto == "deny":
        def deny(request: ApprovalRequested) -> None:
            console.deny(request.call_id, "denied by --auto deny")
        return deny
    reviewer = AutoReviewer(console, plan.script.review if isinstance(plan, ScriptPlan) else ())
    return reviewer.answer


async def _follow(sub: Any, handle: Callable[[Event], None]) -> None:
    while batch := await sub.next_batch():
        for event in batch:
            handle(event)


async def _work(console: Console, options: RunOptions, plan: Plan, watch: Watch) -> Totals:
    if isinstance(plan, BatchPlan):
        return await _run_batch(console, options, plan)
    started = time.monotonic()
    await run_script(console, plan.script)
    return _script_totals(plan, watch, time.monotonic() - started)


async def _run_batch(console: Console, options: RunOptions, plan: BatchPlan) -> Totals:
    handle = await console.start_agent(plan.name, "batch")
    reports: list[BatchReport] = []
    refused: list[BatchError] = []

    async def body(agent: Any) -> str:
        try:
            report = await console.run_batch(agent, plan.calls, name=plan.name,
                                             concurrency=options.concurrency or plan.concurrency or 10,
                                             fail_fast=options.fail_fast or plan.fail_fast)
        except BatchError as e:  # nothing ran: the plan is at fault, not the agent
            refused.append(e)
            return f"the batch was refused: {e}"
        reports.append(report)
        return f"{report.succeeded} of {len(report.results)} calls succeeded"

    await console.run_agent(handle, body)
    if refused:
        raise BadRun(f"the plan cannot run, nothing was run: {refused[0]}")
    return _batch_totals(plan, reports[0])


def _batch_totals(plan: BatchPlan, report: BatchReport) -> Totals:
    results = [{"id": r.id, "tool": r.tool, "status": r.status, "call_id": r.call_id, "cached": r.cached,
                "attempts": r.attempts, "duration_s": r.duration_s,
                "message": r.error.message if r.error else ""} for r in report.results]
    return Totals("batch", plan.name, len(report.results), report.succeeded, report.failed, report.skipped,
                  report.cache_hits, len(report.plan.levels), report.plan.max_parallelism, report.max_running,
                  report.duration_s, results)


def _script_totals(plan: ScriptPlan, watch: Watch, duration_s: float) -> Totals:
    """A script is a chain (one level per step, one call at a time); its counts come from its calls."""
    rows = list(watch.rows.values())
    results = [{"id": r.label, "tool": r.tool, "status": r.status.value, "cached": r.cached,
                "attempts": r.attempts, "duration_s": r.duration_s, "message": r.message} for r in rows]
    return Totals("script", plan.script.name, len(rows), sum(r.status == RunStatus.DONE for r in rows),
                  sum(r.status in FAILED for r in rows), sum(r.status == RunStatus.SKIPPED for r in rows),
                  sum(r.cached for r in rows), len(plan.script.steps), 1, watch.max_running, duration_s, results)


def _show_totals(out: Output, totals: Totals, console: Console, as_json: bool) -> None:
    if as_json:
        summary = {"kind": "summary", "plan": totals.kind, "name": totals.name,
                   "workspace": str(console.workspace.root), "session_id": console.session_id,
                   **{k: v for k, v in vars(totals).items() if k not in ("kind", "name", "results")},
                   "exit_code": totals.exit_code, "results": totals.results}
        out.line(json.dumps(summary, ensure_ascii=False))
        return
    out.line(f"Summary  {totals.name}: {totals.calls} calls, {totals.succeeded} succeeded, {totals.failed} failed, "
             f"{totals.skipped} skipped, {totals.cache_hits} cache hits")
    out.line(f"         {totals.levels} levels, max parallelism {totals.max_parallelism} (plan), "
             f"max running {totals.max_running} (observed), {_duration(totals.duration_s)}")


def _label_width(plan: Plan) -> int:
    if isinstance(plan, BatchPlan):
        return max((len(c.id) for c in plan.calls), default=1)
    return 4


def _is_tty(fd: int) -> bool:
    try:
        return os.isatty(fd)
    except OSError:
        return False
