"""`belay run PLAN`: a plan run without the window, supervised from the terminal.

The same console as the window's (journal, policy, change capture), with a
terminal front end: a readable log of each call starting and ending (or,
with --json, every event as a JSON line), approvals answered at a prompt or
by --auto, and a summary.  The exit code says how it went: 0 when every
call succeeded, 1 when any did not, 2 when the plan or the options are bad
(then nothing runs; see `plans` for the bounds a plan must keep) or the
journal cannot be used (said by the command line's boundary, `cli.main`).
No Qt is imported on this path.

Before the plan runs, the configured MCP servers get their own startup
timeout to list their tools or fail (the terminal says what it waits for
after a second): a plan whose first call is an MCP tool would otherwise
find no such tool.  A plan that calls a server that did not start is not
run (exit 2, one line naming the server and why).

A scripted-agent plan runs as `belay demo` runs it, minus the window and
the pacing: under --auto approve its `review` rules still deny what they
name, and its `undo_after` (a demo's flourish) is not applied.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from core import (
    AgentHandle,
    ApprovalRequested,
    ApprovalResolved,
    AutoReviewer,
    BatchError,
    BatchReport,
    Console,
    Event,
    RunStatus,
    ServerState,
    ServerStatus,
    Subscription,
    run_script,
    spawn,
)
from gui.terminal.approver import StdinLines, TerminalApprover
from gui.terminal.plans import BatchPlan, Plan, PlanError, ScriptPlan, load_plan
from gui.terminal.run_log import Auto, LogView, Output, Watch, duration_text, plural

FAILED = {RunStatus.FAILED, RunStatus.DENIED, RunStatus.CANCELLED, RunStatus.TIMED_OUT, RunStatus.INTERRUPTED}
WAIT_NOTE_S = 1.0
"""How long MCP servers may take to start before the terminal says that it waits for them."""


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


def run_plan(options: RunOptions, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Run a plan to the end; returns the exit code.  `out` and `err` are the standard streams as they are when
    called (not as they were when this module was imported: a caller may have replaced them since)."""
    out, err = out or sys.stdout, err or sys.stderr
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
    except KeyboardInterrupt:  # the console was closed on the way out: waiting calls denied, running ones ended
        err.write("belay run: interrupted\n")
        return 130


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


# -- the run ------------------------------------------------------------------


@dataclass(frozen=True)
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
    console = Console(workspace, state_dir=options.state_dir, holder="belay run", mcp="configured")
    await console.open()
    try:  # what opening recovered after a crash is logged by the core: not said twice
        _check_servers(await _servers_started(console, stderr), plan, stderr)
        return await _supervise(console, options, plan, Output(stdout))
    finally:
        await console.close()


async def _servers_started(console: Console, err: TextIO) -> list[ServerStatus]:
    """The MCP servers' statuses once each has listed its tools or failed; after a second, the terminal says
    which ones it waits for."""
    note = spawn(_say_waiting(console, err), "belay run: waiting for MCP servers")
    try:
        return await console.mcp_started()
    finally:
        note.cancel()
        await asyncio.wait([note])


async def _say_waiting(console: Console, err: TextIO) -> None:
    await asyncio.sleep(WAIT_NOTE_S)
    starting = [s.name for s in console.mcp_servers() if s.state == ServerState.STARTING]
    if starting:
        err.write(f"belay run: waiting for MCP server{'s' if len(starting) > 1 else ''} {', '.join(starting)}…\n")
        err.flush()


def _check_servers(statuses: list[ServerStatus], plan: Plan, err: TextIO) -> None:
    """Refuse the plan if it calls a server that is not ready (its calls would find no such tool); a note
    for one it does not call."""
    named = _tools_named(plan)
    for status in statuses:
        if status.state == ServerState.READY:
            continue
        why = (f"failed to start: {status.reason}" if status.state == ServerState.FAILED
               else "did not start in time" if status.state == ServerState.STARTING else "is stopped")
        needed = sorted(t for t in named if t.startswith(f"mcp__{status.name}__"))
        if needed:
            raise BadRun(f"MCP server {status.name!r} {why}; the plan calls {', '.join(needed)}, "
                         "so nothing was run")
        err.write(f"belay run: note: MCP server {status.name!r} {why}\n")


def _tools_named(plan: Plan) -> set[str]:
    """Every tool the plan names: its calls, its steps, their batches and its sub-agents' steps."""
    if isinstance(plan, BatchPlan):
        return {call.tool for call in plan.calls}
    return _step_tools([step.model_dump() for step in plan.script.steps])


def _step_tools(steps: object) -> set[str]:
    names: set[str] = set()
    for step in steps if isinstance(steps, list) else []:
        if not isinstance(step, dict):
            continue
        tool, args, batch = step.get("tool"), step.get("args"), step.get("batch")
        names |= {tool} if isinstance(tool, str) else set()
        names |= _step_tools(batch.get("calls")) if isinstance(batch, dict) else set()
        names |= _step_tools(args.get("steps")) if isinstance(args, dict) else set()  # a Task's sub-agent
    return names


async def _supervise(console: Console, options: RunOptions, plan: Plan, out: Output) -> int:
    watch = Watch()
    view = LogView(out, watch, options.auto, _label_width(plan))
    lines = StdinLines()
    asker = TerminalApprover(console, out, watch, lines, echo=not _is_tty(0)) if not options.auto else None
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
        elif isinstance(event, ApprovalResolved) and asker is not None:
            asker.resolved(event)

    follower = spawn(_follow(sub, handle), "belay run: events")
    asking = spawn(asker.run(), "belay run: approvals") if asker else None
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
        lines.close()
    _show_totals(out, totals, console, options.as_json)
    return totals.exit_code


def _auto_answer(console: Console, auto: Auto, plan: Plan) -> Callable[[ApprovalRequested], None]:
    """--auto deny denies; --auto approve approves, unless a script's review rules say to deny."""
    if auto == "deny":
        def deny(request: ApprovalRequested) -> None:
            console.deny(request.call_id, "denied by --auto deny", by="auto-approver")
        return deny
    reviewer = AutoReviewer(console, plan.script.review if isinstance(plan, ScriptPlan) else ())
    return reviewer.answer


async def _follow(sub: Subscription, handle: Callable[[Event], None]) -> None:
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

    concurrency = options.concurrency or plan.concurrency  # the option, else the plan's, else the console's
    limits: dict[str, Any] = {"concurrency": concurrency} if concurrency else {}

    async def body(agent: AgentHandle) -> str:
        try:
            report = await console.run_batch(agent, plan.calls, name=plan.name,
                                             fail_fast=options.fail_fast or plan.fail_fast, **limits)
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
    """A script's counts come from its calls (its sub-agents' too).

    Its steps form a chain: one level per step, or a batch step's own levels; a batch step that
    could not start (a cycle) counts as one failed call, as the agent itself counts it.
    """
    rows = list(watch.rows.values())
    results = [{"id": r.label, "tool": r.tool, "status": r.status.value, "cached": r.cached,
                "attempts": r.attempts, "duration_s": r.duration_s, "message": r.message} for r in rows]
    own = [info for agent, info in watch.batches if agent in watch.roots]
    batch_steps = sum(step.batch is not None for step in plan.script.steps)
    refused = max(0, batch_steps - len(own))
    levels = len(plan.script.steps) - batch_steps + sum(len(info.levels) for info in own)
    widest = max([1, *(info.max_parallelism for _, info in watch.batches)])
    return Totals("script", plan.script.name, len(rows) + refused, sum(r.status == RunStatus.DONE for r in rows),
                  sum(r.status in FAILED for r in rows) + refused, sum(r.status == RunStatus.SKIPPED for r in rows),
                  sum(r.cached for r in rows), levels, widest, watch.max_running, duration_s, results)


def _show_totals(out: Output, totals: Totals, console: Console, as_json: bool) -> None:
    if as_json:
        summary = {"kind": "summary", "plan": totals.kind, "name": totals.name,
                   "workspace": str(console.workspace.root), "session_id": console.session_id,
                   **{k: v for k, v in vars(totals).items() if k not in ("kind", "name", "results")},
                   "exit_code": totals.exit_code, "results": totals.results}
        out.line(json.dumps(summary, ensure_ascii=False))
        return
    out.line(f"Summary  {totals.name}: {plural(totals.calls, 'call')}, {totals.succeeded} succeeded, "
             f"{totals.failed} failed, {totals.skipped} skipped, {plural(totals.cache_hits, 'cache hit')}")
    out.line(f"         {plural(totals.levels, 'level')}, max parallelism {totals.max_parallelism} (plan), "
             f"max running {totals.max_running} (observed), {duration_text(totals.duration_s)}")


def _label_width(plan: Plan) -> int:
    if isinstance(plan, BatchPlan):
        return max(len(c.id) for c in plan.calls)
    return max([4, *(len(c.id) for step in plan.script.steps if step.batch for c in step.batch.calls)])


def _is_tty(fd: int) -> bool:
    try:
        return os.isatty(fd)
    except OSError:
        return False
