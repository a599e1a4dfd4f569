"""The scheduler on its own: when each call of a graph starts, which calls are kept apart, and what is skipped.

Calls are submitted to a stand-in for the console's pipeline that records when each starts and ends and
waits, where a test needs it, for a gate the test opens; order is shown by those records, never by time.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from core.errors import ErrorInfo, ErrorKind
from core.models.batches import BatchCall
from core.models.records import RunStatus
from core.orchestration.graph import build_graph, remaining
from core.orchestration.scheduler import Scheduler
from core.run.calls import CallOutcome
from tests.conftest import run


def _calls(*specs: dict[str, Any]) -> list[BatchCall]:
    return [BatchCall.model_validate({"tool": "T", **s}) for s in specs]


class Pipeline:
    """Runs each call by waiting for its gate (if it has one), then ending it done or, if told to, failed."""

    def __init__(self, fail: frozenset[str] = frozenset()) -> None:
        self.fail = fail
        self.log: list[tuple[str, str]] = []
        self.args: dict[str, dict[str, Any]] = {}
        self.gates: dict[str, asyncio.Event] = {}
        self.running: set[str] = set()
        self.cancelled: list[str] = []
        self.on_start: dict[str, str] = {}
        """call id -> the gate its start opens."""

    def gate(self, *ids: str) -> None:
        for cid in ids:
            self.gates[cid] = asyncio.Event()

    async def submit(self, call: BatchCall, args: dict[str, Any]) -> CallOutcome:
        self.log.append(("start", call.id))
        self.args[call.id] = args
        self.running.add(call.id)
        if call.id in self.on_start:
            self.gates[self.on_start[call.id]].set()
        try:
            if call.id in self.gates:
                await asyncio.wait_for(self.gates[call.id].wait(), 5)
            else:
                await asyncio.sleep(0)
        except asyncio.CancelledError:
            self.cancelled.append(call.id)
            raise
        finally:
            self.running.discard(call.id)
        self.log.append(("end", call.id))
        if call.id in self.fail:
            return CallOutcome(f"run-{call.id}", RunStatus.FAILED, f"{call.id} broke",
                               error=ErrorInfo(kind=ErrorKind.SYSTEM, message="broke"))
        return CallOutcome(f"run-{call.id}", RunStatus.DONE, f"{call.id} ok", {"n": len(call.id)})

    def started(self) -> list[str]:
        return [cid for what, cid in self.log if what == "start"]


def _touches(call: BatchCall, args: dict[str, Any]) -> tuple[frozenset[str], frozenset[str]]:
    return frozenset(args.get("reads", ())), frozenset(args.get("writes", ()))


async def _run(scheduler: Scheduler, calls: list[BatchCall],
               data_needs: Mapping[str, frozenset[str]] | None = None, declared: Mapping[str, list[str]] | None = None
               ) -> tuple[dict[str, Any], int]:
    results, most = await asyncio.wait_for(scheduler.run(calls, build_graph(calls, declared), data_needs), 10)
    assert [r.id for r in results] == [c.id for c in calls]  # reported in batch order
    return {r.id: r for r in results}, most


def test_a_call_starts_once_its_own_needs_are_done_not_when_a_slow_neighbour_is() -> None:
    calls = _calls({"id": "slow"}, {"id": "fast"}, {"id": "after_fast", "args": {"n": "${fast.data.n}"}})

    async def scenario() -> None:
        pipeline = Pipeline()
        pipeline.gate("slow")
        pipeline.on_start["after_fast"] = "slow"  # slow can only end once after_fast has started
        results, _ = await _run(Scheduler(pipeline.submit, _touches), calls)
        assert all(r.status == "done" for r in results.values())
        assert pipeline.log.index(("end", "fast")) < pipeline.log.index(("start", "after_fast"))
        assert pipeline.log.index(("start", "after_fast")) < pipeline.log.index(("end", "slow"))
        assert pipeline.args["after_fast"] == {"n": 4}  # resolved from what fast returned
        assert results["after_fast"].call_id == "run-after_fast" and results["after_fast"].text == "after_fast ok"

    run(scenario())


def test_calls_touching_the_same_path_never_run_at_once_while_readers_share_it() -> None:
    calls = _calls(
        {"id": "edit_file", "args": {"writes": ["src/app.py"]}},
        {"id": "rewrite_tree", "args": {"writes": ["src/"]}},
        {"id": "reader_1", "args": {"reads": ["docs/a.md"]}},
        {"id": "reader_2", "args": {"reads": ["docs/a.md"]}},
        {"id": "read_src", "args": {"reads": ["src/app.py"]}},
    )

    async def scenario() -> None:
        pipeline = Pipeline()
        pipeline.gate("edit_file", "reader_1")
        pipeline.on_start["reader_2"] = "reader_1"  # the readers can only end if they overlap
        seen_together: list[set[str]] = []
        submit = pipeline.submit

        async def watching(call: BatchCall, args: dict[str, Any]) -> CallOutcome:
            seen_together.append(set(pipeline.running) | {call.id})
            if call.id == "reader_2":
                pipeline.gates["edit_file"].set()
            return await submit(call, args)

        results, most = await _run(Scheduler(watching, _touches), calls)
        assert all(r.status == "done" for r in results.values())
        src = {"edit_file", "rewrite_tree", "read_src"}
        assert all(len(together & src) <= 1 for together in seen_together)
        assert pipeline.log.index(("end", "edit_file")) < pipeline.log.index(("start", "rewrite_tree"))
        assert most >= 3  # the file's writer and both readers ran at once

    run(scenario())


def test_a_failed_call_skips_what_needs_its_data_and_only_delays_what_was_merely_ordered_after_it() -> None:
    calls = _calls(
        {"id": "bad"},
        {"id": "needs_bad", "depends_on": ["bad"]},
        {"id": "needs_that", "args": {"text": "${needs_bad.text}"}},
        {"id": "ordered_after_bad"},
        {"id": "independent"},
    )
    explicit = build_graph(calls).needs

    async def scenario() -> None:
        pipeline = Pipeline(fail=frozenset({"bad"}))
        announced: list[tuple[str, str]] = []

        async def skip(call: BatchCall, why: str) -> str:
            announced.append((call.id, why))
            return f"skip-{call.id}"

        scheduler = Scheduler(pipeline.submit, _touches, skip)
        results, _ = await _run(scheduler, calls, data_needs=explicit, declared={"ordered_after_bad": ["bad"]})
        assert {cid: r.status for cid, r in results.items()} == {
            "bad": "failed", "needs_bad": "skipped", "needs_that": "skipped", "ordered_after_bad": "done",
            "independent": "done"}
        assert announced == [("needs_bad", "skipped because bad did not succeed"),
                             ("needs_that", "skipped because needs_bad was skipped")]
        assert results["needs_bad"].call_id == "skip-needs_bad" and results["needs_bad"].error is not None
        assert results["needs_bad"].error.kind == ErrorKind.SKIPPED
        assert pipeline.log.index(("end", "bad")) < pipeline.log.index(("start", "ordered_after_bad"))
        assert "needs_bad" not in pipeline.started() and "needs_that" not in pipeline.started()

    run(scenario())


def test_fail_fast_lets_running_calls_finish_and_starts_nothing_more() -> None:
    calls = _calls({"id": "bad"}, {"id": "long"}, {"id": "queued_1"}, {"id": "queued_2"})

    async def scenario() -> None:
        pipeline = Pipeline(fail=frozenset({"bad"}))
        pipeline.gate("long")

        async def skip(call: BatchCall, why: str) -> None:
            assert "long" in pipeline.running  # decided while long still runs
            pipeline.gates["long"].set()

        results, _ = await _run(Scheduler(pipeline.submit, _touches, skip, concurrency=2, fail_fast=True), calls)
        assert results["bad"].status == "failed" and results["long"].status == "done"
        for cid in ("queued_1", "queued_2"):
            assert results[cid].status == "skipped" and results[cid].call_id is None
            assert results[cid].text == "not started: the batch stops at the first failure (bad failed)"
        assert pipeline.started() == ["bad", "long"] and pipeline.cancelled == []

    run(scenario())


def test_cancelling_the_batch_cancels_the_calls_it_is_running() -> None:
    calls = _calls({"id": "one"}, {"id": "two"}, {"id": "three", "depends_on": ["one"]})

    async def scenario() -> None:
        pipeline = Pipeline()
        pipeline.gate("one", "two")
        batch = asyncio.ensure_future(Scheduler(pipeline.submit, _touches).run(calls, build_graph(calls)))
        while len(pipeline.running) < 2:
            await asyncio.sleep(0.005)
        batch.cancel()
        try:
            await batch
            raise AssertionError("the batch should have been cancelled")
        except asyncio.CancelledError:
            pass
        assert sorted(pipeline.cancelled) == ["one", "two"] and pipeline.running == set()
        assert "three" not in pipeline.started()

    run(scenario())


def test_a_call_skipped_for_a_bad_reference_skips_its_dependents_even_when_nothing_else_runs() -> None:
    calls = _calls({"id": "ls"}, {"id": "read", "args": {"path": "${ls.data.entries[99]}"}},
                   {"id": "after", "depends_on": ["read"]})

    async def scenario() -> None:
        pipeline = Pipeline()
        results, _ = await _run(Scheduler(pipeline.submit, _touches), calls)
        assert pipeline.started() == ["ls"]
        assert (results["read"].status, results["after"].status) == ("skipped", "skipped")
        assert results["after"].text == "skipped because read was skipped"

    run(scenario())


def test_when_it_must_choose_it_starts_the_call_on_the_longest_estimated_path_first() -> None:
    # one at a time: "quick" comes first in the batch, but "build" holds up "test" behind it
    calls = _calls({"id": "quick"}, {"id": "build"}, {"id": "test", "depends_on": ["build"]})
    graph = build_graph(calls)
    expected = {"quick": 0.1, "build": 5.0, "test": 20.0}

    async def scenario() -> tuple[list[str], list[str]]:
        by_order, by_path = Pipeline(), Pipeline()
        await Scheduler(by_order.submit, _touches, concurrency=1).run(calls, graph)
        await Scheduler(by_path.submit, _touches, concurrency=1).run(calls, graph, first=remaining(graph, expected))
        return by_order.started(), by_path.started()

    assert run(scenario()) == (["quick", "build", "test"], ["build", "test", "quick"])
