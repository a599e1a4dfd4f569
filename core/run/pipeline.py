"""A call Belay runs itself, from the agent's request to its outcome: validate, decide, run, record.

The steps every call shares (open, decide, permit, start, capture, finish)
are `core.run.calls`; this adds what only Belay's own tools need: checking
the arguments against the tool's model, answering from the result cache,
a file tool's plan of writes applied atomically after approval, and a
command's changes captured by comparing the workspace before and after.

`Pipeline.execute` never raises for anything a tool or an agent did wrong:
every problem ends as a run with a final status and an `ErrorInfo`.
Cancellation (from the window, or the agent going away) is recorded, then
re-raised.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from core.changes.partial import PartialError
from core.changes.tracker import ChangeTracker
from core.errors import BelayError, ErrorInfo, ErrorKind, ToolError
from core.ids import BatchId, CallId
from core.models.records import Decision, FileChange, RunStatus
from core.paths import Workspace, one_look, resolved_paths
from core.policy.verdicts import PolicyRequest, Verdict
from core.process.overlay import Layer, LayerChange, overlay_support
from core.run import arguments
from core.run.apply import apply_plan, replace_contents
from core.run.cache import CallCache
from core.run.calls import AgentHandle, Allowed, CallOutcome, Calls, OpenCall, Refused, error_text
from core.run.limits import Deadlines, Heartbeats, run_limited
from core.run.preview import CLASH, LIMITS, REASON, chosen, described, layer_plan, merge, told
from core.store import fsio
from core.store.blobs import BlobStore
from core.store.journal import Journal
from core.tasks import shielded
from core.tools.base import (
    ReadState,
    RunTool,
    SpawnAgent,
    Tool,
    ToolArgs,
    ToolContext,
    ToolOutput,
    WritePlan,
    WriteTool,
)
from core.tools.registry import ToolRegistry

log = logging.getLogger(__name__)
EDITED_NOTE = " The user edited the content before it was written; read the file to see it."
SHOWN_OUTPUT = 4_000
"""The end of a previewed command's output its approval shows (the journal keeps it all)."""


class Pipeline:
    """Carries calls to Belay's own tools through the shared steps, running the tool in between."""

    def __init__(self, *, calls: Calls, registry: ToolRegistry, blobs: BlobStore, tracker: ChangeTracker | None = None,
                 cache: CallCache | None = None, timeouts: Any = dict) -> None:
        self.calls, self.registry, self.blobs = calls, registry, blobs
        self.workspace: Workspace = calls.workspace
        self.recorder = calls.recorder
        self.tracker = tracker
        """Attributes file changes to calls, one changing call at a time (None: nothing is tracked)."""
        self.cache = cache
        """Answers read-only calls whose files have not changed (None: every call runs)."""
        self.timeouts = timeouts
        """Per-tool limits from settings (`[timeouts]`, a callable giving seconds by tool); 0 means none."""
        self._written = 0
        self._last_written: dict[str, int] = {}
        """Which of this pipeline's writes (counted in `_written`) last changed each path: a command run in a
        layer beside others finds what they changed while it ran."""
        self._heartbeats = Heartbeats()
        self._deadlines = Deadlines()
        self.tool_starting: Callable[[str], Awaitable[None]] | None = None
        """Waits, bounded, while the MCP server that would offer a tool not yet registered is still starting (the
        console's MCP manager); None: a tool not registered is unknown at once."""

    async def execute(self, call_id: CallId, agent: AgentHandle, tool_name: str, raw_args: object,
                      spawn: SpawnAgent | None = None, *, timeout_s: float | None = None,
                      batch: tuple[BatchId, str] | None = None, ask: bool = False) -> CallOutcome:
        """Carry one call to its end.  `timeout_s` overrides the tool's limit; `batch` is (batch id, id in it);
        `ask` has a person approve it even where the policy would allow it."""
        if self.tool_starting is not None and isinstance(tool_name, str) and tool_name not in self.registry:
            await self.tool_starting(tool_name)  # before the call is opened: it is journaled with its tool
        with one_look() as seen:  # its checks, its summary and the policy resolve each path it names once
            tool, args, problem = self._prepare(agent, tool_name, raw_args)
            summary, shown_args = _shown(tool, args, raw_args, self.workspace)
        call = await self.calls.open(call_id, agent, arguments.shown(tool_name), shown_args, summary, batch, wait=False)
        try:
            if problem is not None:
                raise problem
            assert tool is not None and args is not None
            ctx = ToolContext(self.workspace, agent.agent_id, call_id, agent.read_state, spawn,
                              emit_output=functools.partial(self.recorder.output, call_id),
                              may_read=self.calls.policy.read_filter())
            with one_look(seen):
                request = self._request(tool, args)
            done = await self._decide_and_run(call, tool, args, ctx, timeout_s, ask, request, batch is not None)
        except asyncio.CancelledError:
            await shielded(self._finish(call, RunStatus.CANCELLED, "The call was cancelled.",
                                        ErrorInfo(kind=ErrorKind.CANCELLED, message="cancelled")))
            raise
        except BelayError as e:
            status = RunStatus.TIMED_OUT if e.info.kind == ErrorKind.TIMEOUT else RunStatus.FAILED
            return await self._finish(call, status, error_text(e.info), e.info)
        except Exception as e:  # a bug in a tool must not take the console down
            log.exception("tool %s crashed on call %s", call.tool, call_id)
            info = ErrorInfo(kind=ErrorKind.SYSTEM, message=f"{call.tool} failed unexpectedly: {e!r}")
            return await self._finish(call, RunStatus.FAILED, error_text(info), info)
        if isinstance(done, Refused):
            return await self._finish(call, done.status, done.text, done.error)
        output, cached, attempts = done
        return await self._finish(call, RunStatus.DONE, output.text, data=output.data, cached=cached,
                                  attempts=attempts, full_output=output.full_text)

    async def _finish(self, call: OpenCall, status: RunStatus, text: str, error: ErrorInfo | None = None,
                      **details: Any) -> CallOutcome:
        """End the call with its text writable: a tool's output can hold characters UTF-8 cannot encode (a file
        name that is not UTF-8 reads as lone surrogates), which the journal cannot store; they are shown as
        escapes.  Should recording the ending fail all the same, the call ends failed, saying so."""
        if error is not None:
            error = error.model_copy(update={"message": arguments.shown(error.message),
                                             "suggestion": arguments.shown(error.suggestion)})
        full = details.get("full_output")
        if full is not None:
            details["full_output"] = arguments.shown(full)
        try:
            return await self.calls.finish(call, status, arguments.shown(text), error, **details)
        except Exception as e:  # the journal refused the ending: record that instead, so no call stays open
            log.exception("could not record how call %s ended", call.call_id)
            info = ErrorInfo(kind=ErrorKind.SYSTEM, message=f"Belay could not record how {call.tool} ended: {e!r}")
            return await self.calls.finish(call, RunStatus.FAILED, error_text(info), info)

    def _prepare(self, agent: AgentHandle, tool_name: str,
                 raw_args: object) -> tuple[Tool | None, ToolArgs | None, BelayError | None]:
        try:
            arguments.check_text(tool_name, raw_args)  # before anything else reads (or journals) the call
        except BelayError as e:
            return None, None, e
        tool = self.registry.get(tool_name)
        if tool is None or not agent.may_call(tool_name):
            allowed = sorted(n for n in self.registry.names() if agent.may_call(n))
            return tool, None, ToolError(ErrorKind.UNKNOWN_TOOL, f"{agent.name} has no tool named {tool_name!r}",
                                         f"Available tools: {', '.join(allowed)}.")
        try:
            return tool, arguments.validate(tool, arguments.decode(raw_args)), None
        except BelayError as e:
            return tool, None, e
        except Exception as e:  # a bug in a tool's own checks (an MCP schema, say) fails this call only
            log.exception("checking the arguments of %s crashed", tool_name)
            return tool, None, ToolError(ErrorKind.SYSTEM, f"{tool_name} failed unexpectedly checking its"
                                         f" arguments: {e!r}")

    async def _decide_and_run(self, call: OpenCall, tool: Tool, args: ToolArgs, ctx: ToolContext,
                              timeout_s: float | None, ask: bool, request: PolicyRequest, in_batch: bool
                              ) -> tuple[ToolOutput, bool, int] | Refused:
        """The tool's output, whether it came from the cache, and how many tries it took; or the refusal.  A
        command `in_batch` runs in a layer of its own where it can, beside the batch's others."""
        verdict = await self.calls.decide(lambda: request, ask=ask)
        if timeout_s is not None and tool.own_timeout:
            args, limit = tool.with_limit(args, timeout_s), None  # it stops itself, keeping its output so far
        else:
            limit = self._timeout(tool, timeout_s)
        if verdict.action == "allow" and self.cache is not None and tool.cacheable:
            hit = await self.cache.lookup(tool, args, ctx)
            if hit is not None:
                self.recorder.answered_from_cache(call.call_id)
                return ToolOutput(hit.text, dict(hit.data)), True, 1
        plan = await self._plan(tool, args, ctx, limit) if isinstance(tool, WriteTool) else None
        permission = await self.calls.permit(call, verdict, plan, wait=False)
        if isinstance(permission, Refused):
            return permission
        await self.calls.start(call, wait=not _only_reads(tool))
        if plan is not None:
            return await self._write(call, plan, permission, ctx.read_state), False, 1
        assert isinstance(tool, RunTool)
        read_only = verdict.analysis is not None and verdict.analysis.read_only
        with self._heartbeats.beating(functools.partial(self.recorder.progress, call.call_id)):
            if tool.captures_workspace and self.tracker is not None and not read_only:
                previewed = tool.previews(args, permission.preview or verdict.preview)
                if (previewed or in_batch and tool.layerable(args)) and await self.layers():
                    return await self._run_in_layer(call, tool, args, ctx, limit, review=previewed), False, 1
                return await self._run_capturing(call, tool, args, ctx, limit), False, 1
            stored = self.cache.begin() if self.cache is not None and tool.cacheable else None
            done = await run_limited(tool, args, ctx, limit, functools.partial(self._retrying, call.call_id),
                                     self._deadlines)
        if stored is not None and self.cache is not None:
            await self.cache.store(stored, tool, args, done.output)
        return done.output, False, done.attempts

    async def preview_outside(self, call: OpenCall, tool: RunTool, args: ToolArgs) -> ToolOutput:
        """An outside agent's command that is to run in preview, run here instead: in a private layer over the
        workspace, inside Belay's own sandbox, its changes put before a person and the ones they keep applied as
        the call's (`core.outside.intercept` gives the agent the output to show as its command's).  The call is
        started; errors (a timeout, a limit) are raised as the pipeline's tools raise them."""
        ctx = ToolContext(self.workspace, call.agent.agent_id, call.call_id, call.agent.read_state,
                          emit_output=functools.partial(self.recorder.output, call.call_id),
                          may_read=self.calls.policy.read_filter())
        with self._heartbeats.beating(functools.partial(self.recorder.progress, call.call_id)):
            return await self._run_in_layer(call, tool, args, ctx, self._timeout(tool, None), review=True)

    @staticmethod
    async def layers() -> bool:
        """Whether commands can run in a private layer here (probed once, off the loop)."""
        return (await asyncio.to_thread(overlay_support)).available

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
        self.recorder.retrying(call_id, attempt, delay, error.info)

    async def _run_capturing(self, call: OpenCall, tool: RunTool, args: ToolArgs, ctx: ToolContext,
                             limit: float | None) -> ToolOutput:
        """Run a tool whose file changes are found by comparing the workspace before and after it.

        Whatever way the run ends (done, failed, timed out, cancelled), what it changed is recorded.
        """
        tracker = self.tracker
        assert tracker is not None
        async with tracker.mutation(f"call {call.call_id}"):
            try:
                done = await run_limited(tool, args, ctx, limit, functools.partial(self._retrying, call.call_id),
                                     self._deadlines)
            finally:
                await shielded(self._capture(call))
        return done.output

    async def _capture(self, call: OpenCall) -> None:
        """Inside the one-author lock: what changed since it was taken is the call's, journaled at once."""
        assert self.tracker is not None
        captured = await self.tracker.capture()
        if captured.changes or captured.git:
            await self.calls.captured(call, captured.changes, captured.git)
            self._note_written(captured.changes)

    async def _run_in_layer(self, call: OpenCall, tool: RunTool, args: ToolArgs, ctx: ToolContext,
                            limit: float | None, *, review: bool) -> ToolOutput:
        """Run a tool in a private layer over the workspace (it holds no lock while it runs: the workspace is not
        touched), then, the layer going either way:

        - `review` (a preview): put what it changed before a person, and apply the files they keep as a file
          tool's writes are (`core.run.preview`);
        - otherwise (a command of a batch, run beside others): make its changes in the workspace at once, each
          its own, except those to a path another call changed while it ran, differently: a person chooses.
        """
        started = self._written
        layer = await asyncio.to_thread(Layer.create, self.workspace.root)
        try:
            done = await run_limited(tool, args, dataclasses.replace(ctx, layer=layer), limit,
                                     functools.partial(self._retrying, call.call_id), self._deadlines)
            changes = await asyncio.to_thread(layer.changes)
            reason = f"{REASON} {LIMITS}"
            if not review:
                changes = await self._merge(call, layer, changes, started)
                if not changes:
                    return done.output
                reason = CLASH.format(paths=", ".join(c.path for c in changes))
            return await self._review(call, layer, changes, done.output, ctx.read_state, reason)
        finally:
            await shielded(asyncio.to_thread(layer.discard))

    async def _merge(self, call: OpenCall, layer: Layer, changes: list[LayerChange], started: int
                     ) -> list[LayerChange]:
        """Make a layer's changes in the workspace under the one-author lock, recorded as the call's; the changes
        to paths another call changed since `started` (to something else) are left out and returned."""
        assert self.tracker is not None
        async with self.tracker.mutation(f"call {call.call_id}"):
            clashes = await asyncio.to_thread(self._clashes, layer, changes, started)
            kept = [c for c in changes if c not in clashes]
            if kept:
                try:
                    await shielded(asyncio.to_thread(merge, layer, kept, self.workspace))
                finally:
                    await shielded(self._capture(call))
        return clashes

    def _clashes(self, layer: Layer, changes: Sequence[LayerChange], started: int) -> list[LayerChange]:
        """Blocking: the changes to a file another call wrote since `started` that leave it other than it is now
        (the same end on both sides is no clash)."""
        found = []
        for change in changes:
            if change.is_dir or all(self._last_written.get(p, 0) <= started for p in (change.path, change.old_path)
                                    if p is not None):
                continue
            if not layer.agrees(change.path):
                found.append(change)
        return found

    def _note_written(self, changes: Sequence[FileChange]) -> None:
        self._written += 1
        for change in changes:
            self._last_written[change.path] = self._written
            if change.old_path is not None:
                self._last_written[change.old_path] = self._written

    async def _review(self, call: OpenCall, layer: Layer, changes: Sequence[LayerChange], output: ToolOutput,
                      read_state: ReadState, reason: str) -> ToolOutput:
        """Put a layer's changes before a person as a pending write, apply the files they keep, and tell the
        agent what became of each."""
        plan, extras, left = await asyncio.to_thread(layer_plan, layer, changes, self.workspace)
        if not plan.writes and not extras:
            note = "[Belay ran this command in preview: it changed no files]"
            return _noted(output, told([], [], left, None) if left else note, {"applied": [], "left": left})
        if extras:
            reason += f" Besides its files it changes these folders and links, applied with them: " \
                      f"{await asyncio.to_thread(described, extras, layer)}."
        answer = await self.calls.ask(call, Verdict(action="ask", reason=reason), plan, in_part=False,
                                      output=output.text[-SHOWN_OUTPUT:])
        if answer.decision not in (Decision.APPROVED, Decision.APPROVED_EDITED, Decision.ALWAYS_ALLOWED):
            denied = answer.reason or f"the approval was {answer.decision.value.replace('_', ' ')}"
            return _noted(output, told([], [], left, denied), {"applied": [], "left": left})
        try:
            choice = await asyncio.to_thread(chosen, plan, self.workspace, hunks=answer.hunks, edited=answer.edited)
        except PartialError as e:
            return _noted(output, told([], [], left, f"the part chosen could not be applied: {e}"),
                          {"applied": [], "left": left})
        applied: tuple[FileChange, ...] = ()
        if choice.plan.writes:
            applied = await self._apply(call.call_id, choice.plan, read_state, before=call.changes)
            call.changes += applied
        paths = [c.path for c in applied]
        if extras:  # folders and links, as the layer has them (a folder removed only if nothing kept is in it)
            await self._merge(call, layer, extras, self._written)
            paths += [f"{c.path}/" if c.is_dir else c.path for c in extras]
        return _noted(output, told(paths, choice.discarded, left, None),
                      {"applied": paths, "discarded": list(choice.discarded), "left": left})

    def _request(self, tool: Tool, args: ToolArgs) -> PolicyRequest:
        """The call as the policy sees it (blocking: resolves paths on disk)."""
        return PolicyRequest(tool=tool.name, args=args.model_dump(by_alias=True), workspace=self.workspace.root,
                             annotations=tool.annotations, paths=resolved_paths(dict(args)))

    async def _write(self, call: OpenCall, plan: WritePlan, permission: Allowed, read_state: ReadState) -> ToolOutput:
        """Apply a file tool's plan (with the person's edits, if any): blobs, change set, files, in that order."""
        if permission.edited:
            plan = replace_contents(plan, {p: c.encode() for p, c in permission.edited.items()}, self.workspace)
        call.changes = await self._apply(call.call_id, plan, read_state)
        note = f" {permission.note}" if permission.note else EDITED_NOTE if permission.edited else ""
        return ToolOutput(plan.message + note, {"paths": [c.path for c in call.changes]})

    async def _apply(self, call_id: CallId, plan: WritePlan, read_state: ReadState, *,
                     before: Sequence[FileChange] = ()) -> tuple[FileChange, ...]:
        """Apply a plan of writes, journaled as the call's changes (after those it made `before`)."""
        def record(changes: Any) -> None:  # on the worker thread, between the blobs and the files (see Recorder)
            self.recorder.write_from_worker(Journal.add_changes, call_id, [*before, *changes])

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
            self._note_written(changes)
        return changes

    def __repr__(self) -> str:
        return f"<Pipeline {self.workspace.root} tools={len(self.registry.names())}>"


def _noted(output: ToolOutput, note: str, preview: dict[str, Any]) -> ToolOutput:
    """A previewed command's output with what became of its changes, for the agent and the journal."""
    full = f"{output.full_text}\n\n{note}" if output.full_text is not None else None
    return ToolOutput(f"{output.text}\n\n{note}", {**output.data, "preview": preview}, full_text=full)


def _only_reads(tool: Tool) -> bool:
    """A tool whose start need not be journaled before it runs: it declares it only reads, and Belay does not
    compare the workspace around it (as it does around a command, which may write whatever it declares)."""
    return tool.annotations.read_only and not (isinstance(tool, RunTool) and tool.captures_workspace)


def _shown(tool: Tool | None, args: ToolArgs | None, raw: object, workspace: Workspace) -> tuple[str, dict[str, Any]]:
    """The call's summary and arguments as journaled and shown: the tool's own for valid arguments, else a
    readable, always-writable stand-in for what the agent sent (a bug in a tool's summary falls back to it)."""
    if tool is not None and args is not None:
        try:
            return tool.summary(args, workspace), args.model_dump(by_alias=True)
        except Exception:  # the call goes on to run (and fail or not) on its own; only its summary is lost
            log.exception("%s could not summarise its arguments", tool.name)
    return _raw_summary(raw), arguments.shown_raw(raw)


def _raw_summary(raw: object) -> str:
    return "invalid arguments" if not isinstance(raw, dict) else ""
