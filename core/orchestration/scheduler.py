"""Running a batch as a dataflow graph: each call starts the moment what it needs is done.

Not level by level: a call waits only for its own dependencies, so one slow
call holds up its dependents and nothing else.  At most `concurrency` calls
run at once, and two calls that touch the same path (one of them writing
it) never run together: the later one waits for the earlier, in batch
order.  References in a call's arguments are resolved just before it
starts, from the results of the calls it depends on; a reference that
cannot be resolved, or a dependency that did not succeed, skips the call
with the reason, and its own dependents after it.  With `fail_fast`, the
first failure stops new calls from starting (those running finish) and
the rest are skipped.

Each call goes through `submit` (the console's full pipeline: policy,
approval, capture, journal); the scheduler only decides when.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from core.errors import ErrorInfo, ErrorKind
from core.models.batches import BatchCall, BatchResult, CallState
from core.models.records import RunStatus
from core.orchestration.graph import Graph
from core.orchestration.refs import BadReference, resolve
from core.run.calls import CallOutcome
from core.tasks import spawn

Submit = Callable[[BatchCall, dict[str, Any]], Awaitable[CallOutcome]]
"""Runs one call (its arguments resolved) through the pipeline."""
Skip = Callable[[BatchCall, str], Awaitable[str | None]]
"""Records a call that will not run, with why; returns its journaled call id."""
Touches = Callable[[BatchCall, dict[str, Any]], tuple[frozenset[str], frozenset[str]]]
"""What a call reads and writes (workspace-relative; "" is everything, "dir/" a tree)."""

_STATE: dict[RunStatus, CallState] = {
    RunStatus.DONE: "done", RunStatus.FAILED: "failed", RunStatus.DENIED: "denied",
    RunStatus.CANCELLED: "cancelled", RunStatus.TIMED_OUT: "timed_out", RunStatus.INTERRUPTED: "failed",
}


@dataclass
class _Running:
    call: BatchCall
    reads: frozenset[str]
    writes: frozenset[str]
    started: float


@dataclass
class _State:
    """The scheduler's bookkeeping for one batch run."""

    results: dict[str, BatchResult] = field(default_factory=dict)
    running: dict[asyncio.Task[CallOutcome], _Running] = field(default_factory=dict)
    max_running: int = 0
    stopped: str = ""
    """Set when fail-fast stopped the batch: the failure that did it."""
    failures: bool = False
    """Something failed or was skipped since the last look for calls it blocks."""
    unannounced: list[str] = field(default_factory=list)
    """Calls skipped but not yet recorded through `skip`."""
    data_needs: Mapping[str, frozenset[str]] = field(default_factory=dict)
    order: Sequence[str] = ()
    """The calls in the order they are started when more are ready than may run."""


class Scheduler:
    """Runs one batch's graph under a concurrency cap, serialising calls that touch the same path."""

    def __init__(self, submit: Submit, touches: Touches, skip: Skip | None = None, *, concurrency: int = 10,
                 fail_fast: bool = False) -> None:
        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        self.submit, self.touches, self.skip = submit, touches, skip
        self.concurrency, self.fail_fast = concurrency, fail_fast

    async def run(self, calls: Sequence[BatchCall], graph: Graph,
                  data_needs: Mapping[str, frozenset[str]] | None = None,
                  first: Mapping[str, float] | None = None) -> tuple[list[BatchResult], int]:
        """Every call's result (in batch order) and the most calls that ran at once.

        `data_needs` are the dependencies the batch itself states (depends_on, references): a call whose
        data need did not succeed is skipped.  The graph's other edges only order calls (two touching
        the same file): the later one waits for the earlier to end, however it ended.  Default: all.
        `first`: when more calls are ready than may run, those with the larger figure start first (the
        longest estimated path still ahead of them, `graph.remaining`); else the batch's order.
        """
        by_id = {c.id: c for c in calls}
        state = _State(data_needs=data_needs if data_needs is not None else graph.needs,
                       order=sorted(graph.order, key=lambda cid: -first.get(cid, 0.0)) if first else graph.order)
        started_at = time.monotonic()
        try:
            while len(state.results) < len(calls):
                if state.failures:
                    self._skip_unreachable(graph, by_id, state)
                    state.failures = False
                self._start_ready(graph, by_id, state, started_at)
                await self._announce_skips(state, by_id)
                if not state.running:
                    if state.failures:
                        continue  # a call skipped while starting others may stand in the way of the rest
                    if len(state.results) < len(calls):
                        raise AssertionError("a batch call can neither start nor be skipped")  # a bug, not input
                    break
                finished, _ = await asyncio.wait(state.running, return_when=asyncio.FIRST_COMPLETED)
                for task in finished:
                    self._record(task, state.running.pop(task), state, started_at)
        finally:
            await _cancel_all(state.running)
        return [state.results[c.id] for c in calls], state.max_running

    def _skip_unreachable(self, graph: Graph, by_id: dict[str, BatchCall], state: _State) -> None:
        """Skip, in batch order, every call a failed or skipped call stands in the way of (or all, fail-fast)."""
        changed = True
        while changed:
            changed = False
            for cid in graph.order:
                if cid in state.results or any(t.call.id == cid for t in state.running.values()):
                    continue
                why = self._blocked(graph, cid, state)
                if why:
                    state.results[cid] = _skipped(by_id[cid], why)
                    state.unannounced.append(cid)
                    changed = True

    async def _announce_skips(self, state: _State, by_id: dict[str, BatchCall]) -> None:
        while state.unannounced:
            cid = state.unannounced.pop(0)
            result = state.results[cid]
            call_id = await self.skip(by_id[cid], result.text) if self.skip else None
            state.results[cid] = result.model_copy(update={"call_id": call_id})

    def _blocked(self, graph: Graph, cid: str, state: _State) -> str:
        if state.stopped:
            return f"not started: the batch stops at the first failure ({state.stopped})"
        for need in sorted(state.data_needs.get(cid, frozenset())):
            result = state.results.get(need)
            if result is not None and result.status != "done":
                return f"skipped because {need} {'was skipped' if result.status == 'skipped' else 'did not succeed'}"
        return ""

    @staticmethod
    def _ready(graph: Graph, cid: str, state: _State) -> bool:
        """Every need has ended; the data needs have succeeded (a failed one skips the call instead)."""
        data = state.data_needs.get(cid, frozenset())
        for need in graph.needs[cid]:
            result = state.results.get(need)
            if result is None or (need in data and result.status != "done"):
                return False
        return True

    def _start_ready(self, graph: Graph, by_id: dict[str, BatchCall], state: _State, t0: float) -> None:
        results = {cid: _exposed(r) for cid, r in state.results.items() if r.status == "done"}
        running = {t.call.id for t in state.running.values()}
        for cid in state.order:
            if len(state.running) >= self.concurrency:
                return
            if cid in state.results or cid in running or not self._ready(graph, cid, state):
                continue
            call = by_id[cid]
            try:
                args = resolve(call.args, results)
            except BadReference as e:
                state.results[cid] = _skipped(call, f"skipped: {e}")
                state.unannounced.append(cid)
                state.failures = True
                continue
            reads, writes = self.touches(call, args)
            if any(_conflict(reads, writes, other) for other in state.running.values()):
                continue  # a running call touches the same path: this one waits for it
            task = spawn(self.submit(call, args), f"batch call {cid}")
            state.running[task] = _Running(call, reads, writes, time.monotonic() - t0)
            state.max_running = max(state.max_running, len(state.running))

    def _record(self, task: asyncio.Task[CallOutcome], run: _Running, state: _State, t0: float) -> None:
        call = run.call
        duration = time.monotonic() - t0 - run.started
        outcome_status: CallState
        if task.cancelled():
            outcome_status, text, error, data, call_id = "cancelled", "cancelled", None, {}, None
            cached, attempts = False, 1
        else:
            outcome = task.result()
            outcome_status = _STATE.get(outcome.status, "failed")
            text, error, data, call_id = outcome.text, outcome.error, outcome.data, outcome.call_id
            cached, attempts = outcome.cached, outcome.attempts
        state.results[call.id] = BatchResult(id=call.id, tool=call.tool, status=outcome_status, call_id=call_id,
                                             text=text, data=data, error=error, cached=cached, attempts=attempts,
                                             started_s=run.started, duration_s=duration)
        if outcome_status != "done":
            state.failures = True
            if self.fail_fast and not state.stopped:
                state.stopped = f"{call.id} {outcome_status.replace('_', ' ')}"

    def __repr__(self) -> str:
        return f"<Scheduler concurrency={self.concurrency} fail_fast={self.fail_fast}>"


def _exposed(result: BatchResult) -> dict[str, Any]:
    """What a finished call offers to references: ${id.text}, ${id.data...}, ${id.status}, ${id.call_id}."""
    return {"text": result.text, "data": result.data, "status": result.status, "call_id": result.call_id}


def _skipped(call: BatchCall, why: str) -> BatchResult:
    return BatchResult(id=call.id, tool=call.tool, status="skipped", text=why,
                       error=ErrorInfo(kind=ErrorKind.SKIPPED, message=why))


def _conflict(reads: frozenset[str], writes: frozenset[str], other: _Running) -> bool:
    return (_overlap(writes, other.reads | other.writes) or _overlap(other.writes, reads))


def _overlap(a: frozenset[str], b: frozenset[str]) -> bool:
    return any(same_place(x, y) for x in a for y in b)


def same_place(x: str, y: str) -> bool:
    """Whether two paths (files, "dir/" trees, "" for everything) can be the same file."""
    if x == "" or y == "" or x == y:
        return True
    x_tree, y_tree = x.endswith("/"), y.endswith("/")
    return (x_tree and (y.startswith(x) or y == x[:-1])) or (y_tree and (x.startswith(y) or x == y[:-1]))


async def _cancel_all(running: dict[asyncio.Task[CallOutcome], _Running]) -> None:
    for task in running:
        task.cancel()
    if running:
        await asyncio.wait(running)
