"""One call's way through the core: validate, policy, approve, capture, run, record.

`Pipeline.execute` never raises for anything a tool or an agent did wrong:
every problem ends as a run with a final status and an `ErrorInfo`, and
every step is journaled before it is announced.  Cancellation (from the
window, or the agent going away) is recorded, then re-raised.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from core.run import arguments

from core.store import fsio
from core.run.approvals import Answer, ApprovalBroker
from core.store.blobs import BlobStore
from core.bus import EventBus
from core.run.apply import apply_plan, replace_contents
from core.models.diffs import FileDiff
from core.changes.diffs import compute_diff
from core.errors import BelayError, ErrorInfo, ErrorKind, ToolError
from core.run.cache import CallCache
from core.events import (ApprovalRequested, ApprovalResolved, CallFinished, CallOutput, CallProgress, CallQueued,
                         CallRetrying, CallStarted, ProposedFile)
from core.run.limits import heartbeat, run_limited
from core.ids import AgentId, CallId
from core.store.journal import Journal
from core.models.records import Decision, FileChange, RunStatus
from core.paths import Workspace
from core.policy.decide import resolved_paths
from core.policy.engine import PolicyEngine
from core.policy.verdicts import PolicyRequest, Verdict
from core.changes.tracker import Captured, ChangeTracker
from core.tools.base import ReadState, RunTool, SpawnAgent, Tool, ToolArgs, ToolContext, WritePlan, WriteTool
from core.tools.registry import ToolRegistry
from core.tasks import shielded

log = logging.getLogger(__name__)
T = TypeVar("T")
MAX_OUTPUT_CHARS = 30_000
MAX_PROPOSED_BYTES = 1_000_000


@dataclass(frozen=True)
class CallOutcome:
    """What the agent learns about its call."""

    call_id: CallId
    status: RunStatus
    text: str
    data: dict[str, Any] = field(default_factory=dict)
    error: ErrorInfo | None = None
    cached: bool = False
    attempts: int = 1


@dataclass(frozen=True)
class Ran:
    """A call that ran (or was answered from the cache), before it is recorded."""

    text: str
    data: dict[str, Any]
    changes: tuple[FileChange, ...] = ()
    cached: bool = False
    attempts: int = 1


@dataclass
class AgentHandle:
    """A live agent: who it is, what it may call, what it has read."""

    agent_id: AgentId
    name: str
    session_id: str
    tools: frozenset[str] | None = None
    read_state: ReadState = field(default_factory=ReadState)

    def may_call(self, tool: str) -> bool:
        return self.tools is None or tool in self.tools


class Finished(Exception):
    """The run reached a final state (denied, not answered) before its tool ran: raised by the approval
    path, caught where the call is recorded (here and in core.outside.intercept)."""

    def __init__(self, status: RunStatus, text: str, error: ErrorInfo | None = None) -> None:
        self.status, self.text, self.error = status, text, error


class Pipeline:
    """Carries calls through validation, policy, approval, capture, run and record."""

    def __init__(self, *, workspace: Workspace, registry: ToolRegistry, policy: PolicyEngine,
                 approvals: ApprovalBroker, bus: EventBus, journal: Journal, blobs: BlobStore,
                 io: Callable[..., Awaitable[Any]], session_id: str,
                 always_allow: Callable[[str, str], Awaitable[None]],
                 sandbox: Callable[[], str] = lambda: "", tracker: ChangeTracker | None = None,
                 cache: CallCache | None = None,
                 timeouts: Callable[[], dict[str, float]] = dict) -> None:
        self.workspace, self.registry, self.policy = workspace, registry, policy
        self.approvals, self.bus, self.journal, self.blobs = approvals, bus, journal, blobs
        self._io = io
        self.session_id = session_id
        self._always_allow = always_allow
        """Adds an allow rule at a scope (the console's, so that it is announced)."""
        self._sandbox = sandbox
        """Describes what Bash commands run in, for the approval card."""
        self.tracker = tracker
        """Attributes file changes to calls, one changing call at a time (None: nothing is tracked)."""
        self.cache = cache
        """Answers read-only calls whose files have not changed (None: every call runs)."""
        self.timeouts = timeouts
        """Per-tool limits from settings (`[timeouts]`), seconds; 0 means none."""
        self._captured: dict[str, Captured] = {}

    async def execute(self, call_id: CallId, agent: AgentHandle, tool_name: str, raw_args: object,
                      spawn: SpawnAgent | None = None, *, timeout_s: float | None = None,
                      batch: tuple[str, str] | None = None, ask: bool = False) -> CallOutcome:
        """Carry one call to its end.  `timeout_s` overrides the tool's limit; `batch` is (batch id, id in it);
        `ask` has a person approve it even where the policy would allow it."""
        started = time.monotonic()
        tool, args, problem = self._prepare(agent, tool_name, raw_args)
        summary = tool.summary(args, self.workspace) if tool and args else _raw_summary(raw_args)
        shown_args = args.model_dump(by_alias=True) if args else _shown_raw(raw_args)
        await self._io(self.journal.add_call, call_id, self.session_id, agent.agent_id, tool_name,
                       shown_args, summary, batch)
        self.bus.publish(CallQueued(call_id=call_id, agent_id=agent.agent_id, tool=tool_name,
                                    args=shown_args, summary=summary, batch_id=batch[0] if batch else None,
                                    batch_key=batch[1] if batch else None))
        try:
            if problem is not None:
                raise problem
            assert tool is not None and args is not None
            ctx = ToolContext(self.workspace, agent.agent_id, call_id, agent.read_state, spawn,
                              emit_output=lambda text: self.bus.publish(CallOutput(call_id=call_id, text=text)))
            ran = await self._decide_and_run(call_id, agent, tool, args, summary, ctx, timeout_s, ask)
        except asyncio.CancelledError:
            await shielded(self._finish(call_id, started, RunStatus.CANCELLED, "The call was cancelled.",
                                              ErrorInfo(kind=ErrorKind.CANCELLED, message="cancelled")))
            raise
        except Finished as f:
            return await self._finish(call_id, started, f.status, f.text, f.error)
        except BelayError as e:
            status = RunStatus.TIMED_OUT if e.info.kind == ErrorKind.TIMEOUT else RunStatus.FAILED
            return await self._finish(call_id, started, status, _error_text(e.info), e.info)
        except Exception as e:  # a bug in a tool must not take the console down
            log.exception("tool %s crashed on call %s", tool_name, call_id)
            info = ErrorInfo(kind=ErrorKind.SYSTEM, message=f"{tool_name} failed unexpectedly: {e!r}")
            return await self._finish(call_id, started, RunStatus.FAILED, _error_text(info), info)
        return await self._finish(call_id, started, RunStatus.DONE, ran.text, None, ran.data, ran.changes,
                                  cached=ran.cached, attempts=ran.attempts)

    def _prepare(self, agent: AgentHandle, tool_name: str,
                 raw_args: object) -> tuple[Tool | None, ToolArgs | None, BelayError | None]:
        tool = self.registry.get(tool_name)
        if tool is None or not agent.may_call(tool_name):
            allowed = sorted(n for n in self.registry.names() if agent.may_call(n))
            return tool, None, ToolError(ErrorKind.UNKNOWN_TOOL, f"{agent.name} has no tool named {tool_name!r}",
                                         f"Available tools: {', '.join(allowed)}.")
        try:
            return tool, arguments.validate(tool, arguments.decode(raw_args)), None
        except BelayError as e:
            return tool, None, e

    async def _decide_and_run(self, call_id: CallId, agent: AgentHandle, tool: Tool, args: ToolArgs,
                              summary: str, ctx: ToolContext, timeout_s: float | None, ask: bool = False) -> Ran:
        # Off the loop: paths are resolved on disk, and a long command line takes a while to analyse.
        verdict = await asyncio.to_thread(lambda: self.policy.evaluate(self._request(tool, args)))
        if ask and verdict.action == "allow":
            verdict = verdict.model_copy(update={"action": "ask", "reason": "the plan asks for a person's approval "
                                                 f"of this call (the policy alone would allow it: {verdict.reason})"})
        if verdict.action == "deny":
            raise Finished(RunStatus.DENIED, f"Denied by policy: {verdict.reason}.",
                            ErrorInfo(kind=ErrorKind.DENIED, message=verdict.reason))
        if timeout_s is not None and tool.own_timeout:
            args, limit = tool.with_limit(args, timeout_s), None  # it stops itself, keeping its output so far
        else:
            limit = self._timeout(tool, timeout_s)
        if verdict.action == "allow" and self.cache is not None and tool.cacheable:
            hit = await self.cache.lookup(tool, args, ctx)
            if hit is not None:
                self.bus.publish(CallStarted(call_id=call_id))
                return Ran(hit.text, dict(hit.data), cached=True)
        plan = await self._plan(tool, args, ctx, limit) if isinstance(tool, WriteTool) else None
        edited_note = ""
        if verdict.action == "ask":
            answer = await self.ask(call_id, agent, tool.name, args.model_dump(by_alias=True), summary, verdict,
                                    plan)
            if answer.edited and plan is not None:
                plan = replace_contents(plan, {p: c.encode() for p, c in answer.edited.items()}, self.workspace)
                edited_note = " The user edited the content before it was written; read the file to see it."
        await self._io(self.journal.set_status, call_id, RunStatus.RUNNING)
        self.bus.publish(CallStarted(call_id=call_id))
        if plan is not None:
            changes = await self._apply(call_id, plan, agent.read_state)
            return Ran(plan.message + edited_note, {"paths": [c.path for c in changes]}, changes)
        assert isinstance(tool, RunTool)
        read_only = verdict.analysis is not None and verdict.analysis.read_only
        async with heartbeat(lambda elapsed: self.bus.publish(CallProgress(call_id=call_id, elapsed_s=elapsed))):
            if tool.captures_workspace and self.tracker is not None and not read_only:
                return await self._run_capturing(call_id, tool, args, ctx, limit)
            stored = self.cache.begin() if self.cache is not None and tool.cacheable else None
            done = await run_limited(tool, args, ctx, limit, functools.partial(self._retrying, call_id))
        if stored is not None and self.cache is not None:
            await self.cache.store(stored, tool, args, done.output)
        return Ran(done.output.text, done.output.data, attempts=done.attempts)

    def _timeout(self, tool: Tool, asked: float | None) -> float | None:
        """The call's own limit, else the settings' for the tool, else the tool's default (None: no limit).

        A tool that times itself gets no timer from the pipeline (a call's own limit goes in its args)."""
        if tool.own_timeout:
            return None
        if asked is not None:
            return asked
        configured = self.timeouts().get(tool.name)
        if configured is not None:
            return configured or None  # 0 in settings means no limit
        return tool.timeout_s

    async def _plan(self, tool: WriteTool, args: ToolArgs, ctx: ToolContext, limit: float | None) -> WritePlan:
        try:
            async with asyncio.timeout(limit):
                return await asyncio.to_thread(tool.plan, args, ctx)
        except TimeoutError:
            raise ToolError(ErrorKind.TIMEOUT, f"{tool.name} timed out after {limit:g} s preparing its changes",
                            "Raise the timeout for this call or in settings ([timeouts]).") from None

    def _retrying(self, call_id: CallId, attempt: int, delay: float, error: BelayError) -> None:
        log.info("call %s failed (%s), trying again in %.2f s", call_id, error.info.message, delay)
        self.bus.publish(CallRetrying(call_id=call_id, attempt=attempt, delay_s=delay, error=error.info))

    async def _run_capturing(self, call_id: CallId, tool: RunTool, args: ToolArgs, ctx: ToolContext,
                             limit: float | None) -> Ran:
        """Run a tool whose file changes are found by comparing the workspace before and after it.

        Whatever way the run ends (done, failed, timed out, cancelled), what it changed is recorded.
        """
        tracker = self.tracker
        assert tracker is not None
        async with tracker.mutation(f"call {call_id}"):
            try:
                done = await run_limited(tool, args, ctx, limit, functools.partial(self._retrying, call_id))
            finally:
                captured = await shielded(tracker.capture())
                if captured.changes or captured.git:
                    self._captured[call_id] = captured
                    await shielded(self._record_captured(call_id, captured))
        return Ran(done.output.text, done.output.data, captured.changes)

    async def _record_captured(self, call_id: CallId, captured: Captured) -> None:
        if captured.changes:
            await self._io(self.journal.add_changes, call_id, captured.changes)
        if captured.git:
            await self._io(self.journal.add_git_changes, call_id, captured.git)

    def _request(self, tool: Tool, args: ToolArgs) -> PolicyRequest:
        """The call as the policy sees it (blocking: resolves paths on disk)."""
        return PolicyRequest(tool=tool.name, args=args.model_dump(by_alias=True), workspace=self.workspace.root,
                             annotations=tool.annotations, paths=resolved_paths(dict(args)))

    async def ask(self, call_id: CallId, agent: AgentHandle, tool_name: str, shown_args: dict[str, Any],
                  summary: str, verdict: Verdict, plan: WritePlan | None) -> Answer:
        """Put the call before a person (the window) and wait; raises Finished when it is not approved."""
        diffs, proposed = await asyncio.to_thread(self._preview, plan) if plan else ((), ())
        bash = tool_name == "Bash"
        request = ApprovalRequested(call_id=call_id, agent_id=agent.agent_id, tool=tool_name, summary=summary,
                                    reason=verdict.reason, args=shown_args, diffs=diffs,
                                    proposed=proposed, timeout_s=verdict.timeout_s, on_timeout=verdict.on_timeout,
                                    rule=verdict.rule, impact=verdict.impact, analysis=verdict.analysis,
                                    suggested_rule=verdict.suggested_rule,
                                    cwd=str(self.workspace.root) if bash else "",
                                    sandbox=self._sandbox() if bash else "")
        if not self.approvals.approvers:
            answer = Answer(decision=Decision.DENIED, by="headless",
                            reason="it needs approval and no window is attached to give it")
        else:
            await self._io(self.journal.set_status, call_id, RunStatus.BLOCKED_ON_USER)
            self.bus.publish(request)
            answer = await self.approvals.wait(request, verdict.timeout_s)
            if answer.decision == Decision.TIMED_OUT and verdict.on_timeout == "allow":
                answer = answer.model_copy(update={"decision": Decision.APPROVED,
                                                   "reason": f"{answer.reason}; the rule allows it then"})
        await self._io(self.journal.add_decision, call_id, answer.decision.value, answer.reason, answer.by)
        self.bus.publish(ApprovalResolved(call_id=call_id, decision=answer.decision, reason=answer.reason,
                                          by=answer.by))
        if answer.decision == Decision.ALWAYS_ALLOWED and answer.scope != "once":
            rule = answer.rule or verdict.suggested_rule
            if rule is not None:
                try:
                    await self._always_allow(rule, answer.scope)
                except (ValueError, OSError) as e:  # the call is approved; only the rule could not be kept
                    log.warning("could not add the rule %s to %s: %s", rule, answer.scope, e)
        if answer.decision == Decision.TIMED_OUT:
            raise Finished(RunStatus.TIMED_OUT,
                            f"Nobody approved this {tool_name} call in time ({answer.reason}); it was not run.",
                            ErrorInfo(kind=ErrorKind.TIMEOUT, message=f"approval timed out: {answer.reason}",
                                      suggestion="Try again later, or ask the person to raise the timeout."))
        if answer.decision == Decision.DENIED:
            said = f" Reason: {answer.reason}" if answer.reason else ""
            who = "The user denied" if answer.by == "user" else "Belay denied"
            raise Finished(RunStatus.DENIED, f"{who} this {tool_name} call.{said}",
                            ErrorInfo(kind=ErrorKind.DENIED, message=answer.reason or "denied by the user"))
        return answer

    def _preview(self, plan: WritePlan) -> tuple[tuple[FileDiff, ...], tuple[ProposedFile, ...]]:
        diffs, proposed = [], []
        for w in plan.writes:
            rel = self.workspace.relative(w.path)
            before, after = w.shown if w.shown is not None else (w.before, w.after)
            diffs.append(compute_diff(rel, before, after))
            proposed.append(ProposedFile(path=rel, content=_text_or_none(w.after)))
        return tuple(diffs), tuple(proposed)

    async def _apply(self, call_id: CallId, plan: WritePlan, read_state: ReadState) -> tuple[FileChange, ...]:
        def record(changes: Any) -> None:
            self.journal.add_changes(call_id, changes)

        def work() -> tuple[FileChange, ...]:
            applied = apply_plan(self.workspace, self.blobs, plan, record)
            for w in plan.writes:
                st = fsio.stat_path(self.workspace, w.path)
                if st is not None:
                    read_state.seen[w.path] = (st.st_mtime_ns, st.st_size)
            return applied.changes

        if self.tracker is None:
            return await shielded(asyncio.to_thread(work))
        async with self.tracker.mutation(f"call {call_id}"):
            # Once files are being written, finish writing and recording even if cancelled.
            changes = await shielded(asyncio.to_thread(work))
            await shielded(self.tracker.absorb(changes))
        return changes

    async def _finish(self, call_id: CallId, started: float, status: RunStatus, text: str,
                      error: ErrorInfo | None, data: dict[str, Any] | None = None,
                      changes: tuple[FileChange, ...] = (), *, cached: bool = False, attempts: int = 1) -> CallOutcome:
        text = _cap(text)
        captured = self._captured.pop(call_id, None)
        changes = changes or (captured.changes if captured else ())
        git = captured.git if captured else ()
        duration = time.monotonic() - started
        data = dict(data or {})
        full = data.pop("journal_output", None)
        if isinstance(full, str) and full and full != text:
            await self._io(self.journal.add_full_output, call_id, full)
        await self._io(self.journal.finish_run, call_id, status, text, error, duration, cached, attempts,
                       bool(changes or git))
        self.bus.publish(CallFinished(call_id=call_id, status=status, output=text, error=error,
                                      changes=changes, git_changes=git, duration_s=duration, cached=cached,
                                      attempts=attempts))
        return CallOutcome(call_id, status, text, data or {}, error, cached=cached, attempts=attempts)


def _cap(text: str) -> str:
    if len(text) <= MAX_OUTPUT_CHARS:
        return text
    half = MAX_OUTPUT_CHARS // 2
    cut = len(text) - 2 * half
    return f"{text[:half]}\n[... {cut:,} characters cut ...]\n{text[-half:]}"


def _error_text(info: ErrorInfo) -> str:
    return f"Error ({info.kind.value}): {info.message}" + (f" {info.suggestion}" if info.suggestion else "")


def _text_or_none(data: bytes | None) -> str | None:
    if data is None or len(data) > MAX_PROPOSED_BYTES or b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _raw_summary(raw: object) -> str:
    return "invalid arguments" if not isinstance(raw, dict) else ""


def _shown_raw(raw: object) -> dict[str, Any]:
    if isinstance(raw, dict):
        return {str(k): v if isinstance(v, (str, int, float, bool, type(None))) else repr(v)[:200]
                for k, v in raw.items()}
    return {"_raw": repr(raw)[:2000]}
