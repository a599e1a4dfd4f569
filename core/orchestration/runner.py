"""A batch from submission to report: the graph, the plan, the journal and events around the scheduler.

`BatchRunner` is what `Console.run_batch` uses.  It builds the graph (a
cycle or an unknown dependency refuses the whole batch before anything
runs), adds the dependencies tools declare (a call that writes a path comes
after the earlier calls in the batch that read or write it, so a Read
meant to precede an Edit of the same file does), journals the batch, runs
the scheduler, and announces the start and the totals.  Calls that are
skipped are journaled too, so the timeline and the audit trail show every
call the batch named.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from core.errors import BelayError, ErrorInfo, ErrorKind
from core.ids import BatchId, new_batch_id, new_call_id
from core.models.batches import BatchCall, BatchReport, PlanInfo
from core.models.records import RunStatus
from core.orchestration.estimates import SAMPLES, History, estimates
from core.orchestration.graph import Graph, build_graph, plan_info, remaining
from core.orchestration.refs import BadReference, find_references
from core.orchestration.scheduler import Scheduler, same_place
from core.paths import Workspace
from core.process.overlay import overlay_support
from core.recorder import Recorder
from core.run import arguments
from core.run.calls import AgentHandle, CallOutcome
from core.store.journal_reads import JournalReads
from core.tools.base import RunTool
from core.tools.registry import ToolRegistry

DECLARED_EDGES_UP_TO = 1000
"""Past this many calls, same-path ordering is left to the scheduler alone (the pairwise check is quadratic)."""

Call = Callable[..., Awaitable[CallOutcome]]


class BatchRunner:
    """Runs batches for one console."""

    def __init__(self, *, workspace: Workspace, registry: ToolRegistry, recorder: Recorder, call: Call) -> None:
        self.workspace, self.registry, self.recorder, self._call = workspace, registry, recorder, call
        self._layers = False
        """Whether commands run in layers of their own here (then they change nothing until they end)."""

    async def run(self, agent: AgentHandle, calls: Sequence[BatchCall], *, name: str = "batch",
                  concurrency: int = 10, fail_fast: bool = False) -> BatchReport:
        """Run every call; raises BatchError (nothing run) when the batch itself is malformed."""
        self._layers = (await asyncio.to_thread(overlay_support)).available
        history = await self.recorder.read(_history, {call.tool for call in calls})
        # Off the loop: what each call touches is resolved on disk, the pairwise check grows quadratically, and
        # each call's estimate validates its arguments.
        explicit, graph, plan = await asyncio.to_thread(self._plan, calls, history)
        batch_id = new_batch_id()
        await self.recorder.batch_started(batch_id, agent.agent_id, name, plan, len(calls))
        started = time.monotonic()

        async def submit(call: BatchCall, args: dict[str, Any]) -> CallOutcome:
            return await self._call(agent, call.tool, args, timeout_s=call.timeout_s,
                                    batch=(batch_id, call.id), ask=call.requires_approval)

        async def skip(call: BatchCall, why: str) -> str:
            return await self._record_skipped(agent, batch_id, call, why)

        scheduler = Scheduler(submit, self._touches, skip, concurrency=concurrency, fail_fast=fail_fast)
        results, max_running = await scheduler.run(calls, graph, data_needs=explicit.needs,
                                                   first=remaining(graph, plan.estimates))
        report = BatchReport(batch_id=batch_id, plan=plan, results=tuple(results),
                             duration_s=time.monotonic() - started, max_running=max_running)
        await self.recorder.batch_finished(batch_id, succeeded=report.succeeded, failed=report.failed,
                                           skipped=report.skipped, cache_hits=report.cache_hits,
                                           duration_s=report.duration_s, max_running=max_running)
        return report

    def _plan(self, calls: Sequence[BatchCall], history: History) -> tuple[Graph, Graph, PlanInfo]:
        """The batch's own graph (cycles and unknown ids refused), that graph plus the declared edges, its plan
        (its critical path by each call's estimate, `history` refining the tools' own)."""
        explicit = build_graph(calls)
        graph = build_graph(calls, self._declared(calls, plan_info(explicit).levels))
        return explicit, graph, plan_info(graph, estimates(calls, self.registry, history))

    def _touches(self, call: BatchCall, args: dict[str, Any]) -> tuple[frozenset[str], frozenset[str]]:
        """What a call reads and writes, as far as its tool can say before it runs (nothing, if it cannot)."""
        tool = self.registry.get(call.tool)
        if tool is None:
            return frozenset(), frozenset()
        try:
            valid = arguments.validate(tool, args)
        except BelayError:
            return frozenset(), frozenset()
        if self._layers and isinstance(tool, RunTool) and tool.layerable(valid):
            # In a layer of its own it sees the workspace as it is and changes it only when it ends (the
            # pipeline runs it so): it waits for the writes before it, and only they wait for it.
            return EVERYTHING, frozenset()
        reads = tool.reads(valid, self.workspace) or frozenset()
        return reads, tool.writes(valid, self.workspace) or frozenset()

    def _declared(self, calls: Sequence[BatchCall], levels: Sequence[Sequence[str]]) -> dict[str, set[str]]:
        """A call writing a path waits for the calls before it touching that path; a call touching a path
        written before it waits for that write.  "Before" is the order the batch's own dependencies give
        (then the batch's order), so these edges never contradict them.  Calls with references in their
        arguments cannot say yet what they touch: the scheduler still keeps them apart at run time."""
        if len(calls) > DECLARED_EDGES_UP_TO:
            return {}
        by_id = {c.id: c for c in calls}
        ordered = [by_id[cid] for level in levels for cid in level]
        touched = [self._touches(c, c.args) if not _has_references(c) else (frozenset(), frozenset())
                   for c in ordered]
        edges: dict[str, set[str]] = {}
        for i, (reads, writes) in enumerate(touched):
            for j in range(i):
                earlier_reads, earlier_writes = touched[j]
                if _meets(writes, earlier_reads | earlier_writes) or _meets(earlier_writes, reads):
                    edges.setdefault(ordered[i].id, set()).add(ordered[j].id)
        return edges

    async def _record_skipped(self, agent: AgentHandle, batch_id: BatchId, call: BatchCall, why: str) -> str:
        call_id = new_call_id()
        await self.recorder.call_queued(call_id, agent.agent_id, call.tool, call.args, f"{call.id} (skipped)",
                                        (batch_id, call.id))
        error = ErrorInfo(kind=ErrorKind.SKIPPED, message=why)
        await self.recorder.call_finished(call_id, RunStatus.SKIPPED, why, error, 0.0)
        return call_id

    def __repr__(self) -> str:
        return f"<BatchRunner {self.workspace.root}>"


def _history(journal: JournalReads, tools: set[str]) -> History:
    """The journal's latest done calls of each of `tools`, with how long they took (on the journal's thread)."""
    return {tool: journal.recent_durations(tool, SAMPLES) for tool in sorted(tools)}


def _has_references(call: BatchCall) -> bool:
    try:
        return bool(find_references(call.args))
    except BadReference:
        return True  # malformed: the graph refuses it with the reason


EVERYTHING = frozenset({""})
"""The whole workspace, as a tool's reads or writes say it."""


def _meets(a: frozenset[str], b: frozenset[str]) -> bool:
    return any(same_place(x, y) for x in a for y in b)
