"""BatchRunner through the console: the order tools declare, calls it cannot judge, and what the journal keeps."""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any

import pytest

from core import BatchFinished, BatchStarted, Console, ErrorKind, RunStatus
from core.models.batches import BatchCall
from core.orchestration.graph import BatchError
from core.store.journal_reads import JournalReads
from tests.conftest import run


def _calls(*specs: dict[str, Any]) -> list[BatchCall]:
    return [BatchCall.model_validate(s) for s in specs]


def test_a_write_listed_before_reads_of_its_file_runs_first_and_the_reads_see_it(workspace: Path) -> None:
    notes = str(workspace / "notes.txt")
    calls = _calls(
        {"id": "write", "tool": "Write", "args": {"file_path": notes, "content": "fresh from the batch\n"}},
        {"id": "read", "tool": "Read", "args": {"file_path": notes}},
        {"id": "read_again", "tool": "Read", "args": {"file_path": notes}},
    )

    async def scenario() -> None:
        async with Console(workspace) as console:
            console.set_mode("bypass")
            agent = await console.start_agent("planner", "scripted")
            report = await console.run_batch(agent, calls)
            assert report.ok, [r.text for r in report.results]
            assert report.plan.levels == (("write",), ("read", "read_again"))  # reads do not order each other
            assert all("fresh from the batch" in r.text for r in report.results[1:])

    run(scenario())


def test_a_call_it_cannot_judge_fails_on_its_own_without_refusing_the_batch(workspace: Path) -> None:
    calls = _calls(
        {"id": "misnamed", "tool": "Read", "args": {"file": str(workspace / "README.md")}},
        {"id": "ghost", "tool": "Frobnicate", "args": {}},
        {"id": "write", "tool": "Write", "args": {"file_path": str(workspace / "notes.txt"), "content": "ok\n"}},
    )

    async def scenario() -> None:
        async with Console(workspace) as console:
            console.set_mode("bypass")
            agent = await console.start_agent("planner", "scripted")
            report = await console.run_batch(agent, calls)
            assert report.plan.levels == (("misnamed", "ghost", "write"),)
            kinds = {r.id: (r.status, r.error.kind if r.error else None) for r in report.results}
            assert kinds == {"misnamed": ("failed", ErrorKind.INVALID_ARGS), "ghost": ("failed", ErrorKind.UNKNOWN_TOOL),
                             "write": ("done", None)}

    run(scenario())
    assert (workspace / "notes.txt").read_text() == "ok\n"


def test_the_batch_its_totals_and_its_skipped_calls_are_journaled(workspace: Path) -> None:
    calls = _calls(
        {"id": "look", "tool": "LS", "args": {"path": str(workspace)}},
        {"id": "missing", "tool": "Read", "args": {"file_path": str(workspace / "nope.txt")}},
        {"id": "after", "tool": "LS", "args": {"path": str(workspace)}, "depends_on": ["missing"]},
    )

    async def scenario() -> None:
        async with Console(workspace) as console:
            events = console.subscribe()
            agent = await console.start_agent("planner", "scripted")
            report = await console.run_batch(agent, calls, name="survey")
            [batch] = await console.recorder.read(JournalReads.batches)
            assert (batch.batch_id, batch.name, batch.plan) == (report.batch_id, "survey", report.plan)
            assert batch.finished_at is not None and batch.summary is not None
            totals = {k: batch.summary[k] for k in ("succeeded", "failed", "skipped")}
            assert totals == {"succeeded": 1, "failed": 1, "skipped": 1}
            skipped = report.results[2]
            [record] = [r for r in await console.history() if r.call_id == skipped.call_id]
            assert record.status == RunStatus.SKIPPED and record.summary == "after (skipped)"
            assert record.agent_id == agent.agent_id and record.batch_key == "after"
            assert record.error is not None and record.error.kind == ErrorKind.SKIPPED
            seen = events.drain()
            [started] = [e for e in seen if isinstance(e, BatchStarted)]
            [finished] = [e for e in seen if isinstance(e, BatchFinished)]
            assert (started.name, started.size, started.agent_id) == ("survey", 3, agent.agent_id)
            assert (finished.succeeded, finished.failed, finished.skipped) == (1, 1, 1)
            assert started.seq < finished.seq

    run(scenario())


@pytest.mark.parametrize(("calls", "message"), [
    (_calls({"id": "a", "tool": "LS", "args": {}}, {"id": "a", "tool": "Read", "args": {}}), "duplicate call id"),
    (_calls({"id": "a", "tool": "LS", "args": {}, "depends_on": ["a"]}), "cannot wait for itself"),
    (_calls({"id": "a", "tool": "Read", "args": {"file_path": "${ghost.text}"}}), "ghost"),
])
def test_a_batch_that_cannot_run_is_refused_before_anything_is_journaled(workspace: Path, calls: list[BatchCall],
                                                                        message: str) -> None:
    async def scenario() -> None:
        async with Console(workspace) as console:
            events = console.subscribe()
            agent = await console.start_agent("planner", "scripted")
            with pytest.raises(BatchError, match=message):
                await console.run_batch(agent, calls)
            assert await console.history() == []
            assert await console.recorder.read(JournalReads.batches) == []
            assert not [e for e in events.drain() if isinstance(e, BatchStarted)]

    run(scenario())


def test_a_batch_plans_by_estimates_that_the_journal_refines_once_it_has_timed_calls_alike(workspace: Path) -> None:
    calls = _calls({"id": "wait", "tool": "Bash", "args": {"command": "sleep 0.3"}},
                   {"id": "look", "tool": "Bash", "args": {"command": "ls"}})

    async def scenario() -> None:
        async with Console(workspace) as console:
            console.set_mode("bypass")
            agent = await console.start_agent("planner", "scripted")
            first = await console.run_batch(agent, calls)
            assert first.ok and first.plan.estimates == {"wait": 1.0, "look": 1.0}  # Bash's own guess
            for _ in range(2):
                assert (await console.run_batch(agent, calls)).ok
            took = {word: [r.duration_s for r in await console.history() if r.args["command"].startswith(word)]
                    for word in ("sleep", "ls")}
            timed = (await console.run_batch(agent, calls)).plan.estimates
            # three sleeps and three ls, as timed: each the median of the journal's durations of calls alike
            assert (timed["wait"], timed["look"]) == (statistics.median(took["sleep"]), statistics.median(took["ls"]))
            assert len(took["sleep"]) == len(took["ls"]) == 3 and timed["wait"] >= 0.3  # a 0.3 s sleep, at least

    run(scenario())
