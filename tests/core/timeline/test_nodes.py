"""Gantt spans: where a run or a batch sits on its group's time axis, live, finished or reloaded."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from core.models.batches import PlanInfo
from core.models.records import RunStatus
from core.timeline.nodes import BatchNode, BatchTotals, RunNode, batch_span, known_end, run_span

T0 = datetime(2026, 11, 22, 12, 0, tzinfo=timezone.utc)


def _at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def _run(status: RunStatus, queued: float, **times: object) -> RunNode:
    return RunNode(call_id="c1", agent_id="main", tool="Read", summary="", args={}, status=status,
                   queued_at=_at(queued), **times)  # type: ignore[arg-type]


def test_a_finished_run_spans_its_wait_its_approval_and_its_work() -> None:
    run = _run(RunStatus.DONE, 1, approval_at=_at(2), started_at=_at(5), ended_at=_at(7), attempts=2)
    span = run_span(run, start=T0, batch_start=None, now=_at(100))
    assert (span.queued, span.waiting_from, span.running_from, span.ended) == (1, 2, 5, 7)
    assert not span.live and span.status is RunStatus.DONE and span.attempts == 2


def test_a_live_run_reaches_now_and_a_call_of_a_batch_waits_from_the_batch_start() -> None:
    run = _run(RunStatus.RUNNING, 4, started_at=_at(6))
    span = run_span(run, start=T0, batch_start=_at(3), now=_at(9))
    assert (span.queued, span.running_from, span.ended, span.live) == (3, 6, 9, True)
    assert known_end(run) is None


def test_a_reloaded_run_is_drawn_from_its_queueing_for_as_long_as_it_ran() -> None:
    ran = _run(RunStatus.FAILED, 10, duration_s=2.5)
    assert known_end(ran) == _at(12.5)
    span = run_span(ran, start=_at(8), batch_start=None, now=_at(100))
    assert (span.running_from, span.ended) == (2, 4.5)
    never_ran = _run(RunStatus.DENIED, 10)
    span = run_span(never_ran, start=_at(8), batch_start=None, now=_at(100))
    assert span.running_from is None and span.ended == 2


def test_nothing_is_drawn_before_the_groups_start() -> None:
    span = run_span(_run(RunStatus.DONE, -5, started_at=_at(-4), ended_at=_at(-1)), T0, None, _at(1))
    assert (span.queued, span.running_from, span.ended) == (0, 0, 0)


def _batch(**fields: object) -> BatchNode:
    plan = PlanInfo(levels=(("a",),), critical_path=("a",), max_parallelism=1)
    return BatchNode(batch_id="b1", agent_id="main", name="scan", size=1, plan=plan, started_at=_at(2),
                     **fields)  # type: ignore[arg-type]


def test_a_batch_span_says_whether_it_runs_succeeded_failed_or_never_finished() -> None:
    live = batch_span(_batch(), live=True, start=T0, now=_at(5))
    assert (live.queued, live.running_from, live.ended, live.live, live.status) == (2, 2, 5, True, RunStatus.RUNNING)

    def totals(failed: int) -> BatchTotals:
        return BatchTotals(succeeded=1, failed=failed, skipped=0, cache_hits=0, duration_s=3, max_running=1)

    done = batch_span(_batch(finished_at=_at(5), totals=totals(0)), live=False, start=T0, now=_at(50))
    failed = batch_span(_batch(finished_at=_at(5), totals=totals(1)), live=False, start=T0, now=_at(50))
    assert (done.status, done.ended, failed.status) == (RunStatus.DONE, 5, RunStatus.FAILED)
    interrupted = batch_span(_batch(last_at=_at(4), interrupted=True), live=False, start=T0, now=_at(50))
    cut_short = batch_span(_batch(), live=False, start=T0, now=_at(50))
    assert (interrupted.status, interrupted.ended) == (RunStatus.INTERRUPTED, 4)
    assert (cut_short.status, cut_short.ended) == (RunStatus.CANCELLED, 2)


def test_a_running_batch_expects_the_slowest_call_left_of_each_level_less_what_it_has_run() -> None:
    from core.timeline.nodes import expected_left_s

    t0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
    plan = PlanInfo(levels=(("a", "b"), ("c",)), critical_path=("b", "c"), max_parallelism=2,
                    estimates={"a": 2.0, "b": 10.0, "c": 4.0})
    batch = BatchNode("b1", "agent", "build", 3, plan, t0)

    def run_of(key: str, status: RunStatus, started: float | None) -> RunNode:
        return RunNode(f"call-{key}", "agent", "Bash", key, {}, status, t0,
                       started_at=t0 + timedelta(seconds=started) if started is not None else None,
                       batch_id="b1", batch_key=key)

    now = t0 + timedelta(seconds=3)
    assert expected_left_s(batch, [], now) == 14.0  # nothing seen yet: 10 + 4
    runs = [run_of("a", RunStatus.DONE, 0.0), run_of("b", RunStatus.RUNNING, 0.0)]
    assert expected_left_s(batch, runs, now) == 11.0  # b has 7 s to go, then c
    runs = [run_of("a", RunStatus.DONE, 0.0), run_of("b", RunStatus.DONE, 0.0), run_of("c", RunStatus.RUNNING, 2.5)]
    assert expected_left_s(batch, runs, now) == 3.5
    assert expected_left_s(BatchNode("b2", "agent", "old", 3, plan.model_copy(update={"estimates": {}}), t0),
                           runs, now) is None  # journaled before estimates
