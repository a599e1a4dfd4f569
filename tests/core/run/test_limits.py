"""Limits on one call: retries of recoverable failures with backoff, timeouts, heartbeats."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path

import pytest

from core import Console, RunStatus
from core.errors import ErrorKind, ToolError
from core.events import CallProgress, CallRetrying
from core.run import limits as running
from core.tools.base import Annotations, RetryPolicy, RunTool, ToolArgs, ToolContext, ToolOutput
from core.tools.catalog import default_tools
from tests.conftest import run


class FlakyArgs(ToolArgs):
    failures: int
    kind: str = "busy"


class Flaky(RunTool):
    """Fails `failures` times with the given kind of error, then works (state kept per instance)."""

    name = "Flaky"
    description = "Fail a few times, then succeed."
    Args = FlakyArgs
    annotations = Annotations(read_only=True, destructive=False)
    retry = RetryPolicy(attempts=3, base_delay_s=0.01, max_delay_s=0.05)

    def __init__(self) -> None:
        self.tries = 0

    async def run(self, args: ToolArgs, ctx: ToolContext) -> ToolOutput:
        assert isinstance(args, FlakyArgs)
        self.tries += 1
        if self.tries <= args.failures:
            raise ToolError(ErrorKind(args.kind), f"try {self.tries} failed")
        return ToolOutput(f"worked on try {self.tries}")


class SlowArgs(ToolArgs):
    seconds: float


class Slow(RunTool):
    name = "Slow"
    description = "Take a while."
    Args = SlowArgs
    annotations = Annotations(read_only=True, destructive=False)
    timeout_s = 0.2

    async def run(self, args: ToolArgs, ctx: ToolContext) -> ToolOutput:
        assert isinstance(args, SlowArgs)
        await asyncio.sleep(args.seconds)
        return ToolOutput("done")


def test_backoff_grows_is_capped_and_jittered() -> None:
    policy = RetryPolicy(attempts=6, base_delay_s=0.1, factor=2.0, max_delay_s=0.5, jitter=0.5)
    waits = running.delays(policy, random.Random(1))
    assert len(waits) == 5
    for n, wait in enumerate(waits):
        base = min(0.1 * 2 ** n, 0.5)
        assert base * 0.5 <= wait <= base * 1.5


async def _console_with(workspace: Path, *tools: RunTool) -> Console:
    console = Console(workspace, tools=[*default_tools(), *tools])
    await console.open()
    return console


def test_a_busy_read_is_retried_until_it_works_and_says_so(workspace: Path) -> None:
    flaky = Flaky()

    async def scenario() -> None:
        console = await _console_with(workspace, flaky)
        try:
            events = console.subscribe()
            agent = await console.start_agent("agent", "scripted")
            outcome = await console.call(agent, "Flaky", {"failures": 2})
            assert outcome.status == RunStatus.DONE and outcome.attempts == 3 and "try 3" in outcome.text
            seen = [e for e in await events.next_batch() if isinstance(e, CallRetrying)]
            assert [e.attempt for e in seen] == [1, 2] and all(e.error.code == "busy" for e in seen)
            [record] = [r for r in await console.history() if r.call_id == outcome.call_id]
            assert record.attempts == 3
        finally:
            await console.close()

    run(scenario())


def test_retries_are_bounded_and_unrecoverable_errors_fail_at_once(workspace: Path) -> None:
    async def scenario() -> None:
        console = await _console_with(workspace, tired := Flaky())
        try:
            agent = await console.start_agent("agent", "scripted")
            exhausted = await console.call(agent, "Flaky", {"failures": 5})
            assert exhausted.status == RunStatus.FAILED and tired.tries == 3  # the policy's three tries, no more
            assert exhausted.error is not None and exhausted.error.recoverable
        finally:
            await console.close()
        console = await _console_with(workspace, flaky := Flaky())
        try:
            agent = await console.start_agent("agent", "scripted")
            wrong = await console.call(agent, "Flaky", {"failures": 1, "kind": "not-found"})
            assert wrong.status == RunStatus.FAILED and flaky.tries == 1
            assert wrong.error is not None and wrong.error.category == "not_found" and not wrong.error.recoverable
        finally:
            await console.close()

    run(scenario())


def test_a_tool_past_its_limit_times_out_and_a_call_can_allow_more(workspace: Path) -> None:
    async def scenario() -> None:
        console = await _console_with(workspace, Slow())
        try:
            agent = await console.start_agent("agent", "scripted")
            late = await console.call(agent, "Slow", {"seconds": 1.0})
            assert late.status == RunStatus.TIMED_OUT and late.error is not None
            assert late.error.category == "timeout" and "0.2 s" in late.error.message
            patient = await console.call(agent, "Slow", {"seconds": 0.3}, timeout_s=2.0)
            assert patient.status == RunStatus.DONE
        finally:
            await console.close()

    run(scenario())


def test_a_long_call_sends_heartbeats(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(running, "HEARTBEAT_AFTER_S", 0.05)
    monkeypatch.setattr(running, "HEARTBEAT_EVERY_S", 0.05)

    async def scenario() -> None:
        console = await _console_with(workspace, Slow())
        try:
            events = console.subscribe()
            agent = await console.start_agent("agent", "scripted")
            await console.call(agent, "Slow", {"seconds": 0.3}, timeout_s=2.0)
            beats = [e for e in await events.next_batch() if isinstance(e, CallProgress)]
            assert len(beats) >= 2 and beats[-1].elapsed_s > beats[0].elapsed_s
            assert console.timeline.runs[beats[0].call_id].status == RunStatus.DONE
        finally:
            await console.close()

    run(scenario())


def test_time_limits_are_kept_each_at_its_time_from_one_timer() -> None:
    deadlines = running.Deadlines()
    ended: dict[str, float] = {}

    async def body(name: str, limit_s: float | None, takes_s: float) -> str:
        started = asyncio.get_running_loop().time()
        try:
            async with deadlines.within(limit_s):
                await asyncio.sleep(takes_s)
            return "done"
        except TimeoutError:
            return "timed out"
        finally:
            ended[name] = asyncio.get_running_loop().time() - started

    async def scenario() -> None:
        loop = asyncio.get_running_loop()
        armed: list[float] = []
        call_at = loop.call_at

        def counting(when: float, callback, *args, **kwargs):  # noqa: ANN001, ANN202 - a spy on the loop
            armed.append(when)
            return call_at(when, callback, *args, **kwargs)
        loop.call_at = counting  # type: ignore[method-assign]
        for _ in range(500):  # calls that end in time, one after another: the timer armed first stays
            assert await body("quick", 30, 0) == "done"
        assert len(armed) == 1
        outcomes = await asyncio.gather(body("long", 30, 0.05), body("short", 0.1, 5), body("shorter", 0.05, 5),
                                        body("unlimited", None, 0.2))
        assert outcomes == ["done", "timed out", "timed out", "done"]
        assert 0.1 <= ended["short"] and 0.05 <= ended["shorter"] < ended["short"]  # each at its own limit
        assert len(deadlines._limits) <= 2  # noqa: SLF001 - limits that ended do not pile up

    run(scenario())


def test_a_cancellation_from_elsewhere_is_not_taken_for_a_timeout() -> None:
    deadlines = running.Deadlines()

    async def body() -> None:
        async with deadlines.within(30):
            await asyncio.sleep(5)

    async def scenario() -> None:
        task = asyncio.ensure_future(body())  # noqa: TID251 - a task to cancel, as the window cancels a call
        await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        late = asyncio.ensure_future(body())  # noqa: TID251
        await asyncio.sleep(0)
        for _, _, limit in deadlines._limits:  # noqa: SLF001 - its limit comes due as it is cancelled
            if not limit.ended:
                limit.expire()
        late.cancel()
        with pytest.raises(asyncio.CancelledError):  # two requests, one the limit's: the other one stands
            await late

    run(scenario())
