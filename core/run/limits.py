"""Running one tool under its limits: a timeout, retries of recoverable failures, a heartbeat.

The pipeline decides whether a call runs; this decides how long it may take
and what happens when it fails in a way that may pass.  A retryable tool
(`Tool.retry`, only ever read-only tools: a write is never repeated behind
the person's back) that fails with a recoverable error (a timeout, a busy
resource, a dropped connection) is tried again after an exponential,
jittered delay, a bounded number of times; anything else fails at once.
While a call runs longer than `HEARTBEAT_AFTER_S`, a progress note goes out
every `HEARTBEAT_EVERY_S` so the window can show it is alive (`Heartbeats`).
The time limits of the calls on one loop share one timer (`Deadlines`).
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import itertools
import random
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from types import TracebackType

from core.errors import BelayError, ErrorKind, ToolError
from core.tools.base import RetryPolicy, RunTool, ToolArgs, ToolContext, ToolOutput

HEARTBEAT_AFTER_S = 2.0
HEARTBEAT_EVERY_S = 2.0


@dataclass(frozen=True)
class Attempted:
    """A tool's output and how many tries it took."""

    output: ToolOutput
    attempts: int


def delays(policy: RetryPolicy, rng: random.Random | None = None) -> list[float]:
    """The waits between the tries of `policy`: exponential, capped, each scaled by jitter."""
    rng = rng or random.Random()
    waits = []
    for n in range(policy.attempts - 1):
        base = min(policy.base_delay_s * policy.factor ** n, policy.max_delay_s)
        waits.append(base * rng.uniform(1 - policy.jitter, 1 + policy.jitter))
    return waits


async def run_limited(tool: RunTool, args: ToolArgs, ctx: ToolContext, timeout_s: float | None,
                      on_retry: Callable[[int, float, BelayError], None],
                      deadlines: Deadlines | None = None) -> Attempted:
    """Run `tool` once, or (for a retryable tool) until it succeeds, fails for good, or runs out of tries.
    Each try is limited to `timeout_s`, through `deadlines` (the pipeline's) or a timer of its own."""
    waits = delays(tool.retry) if tool.retry is not None and tool.annotations.read_only else []
    attempt = 1
    while True:
        try:
            return Attempted(await _once(tool, args, ctx, timeout_s, deadlines), attempt)
        except BelayError as e:
            if attempt > len(waits) or not e.info.recoverable:
                raise
            delay = waits[attempt - 1]
            on_retry(attempt, delay, e)
            await asyncio.sleep(delay)
            attempt += 1


async def _once(tool: RunTool, args: ToolArgs, ctx: ToolContext, timeout_s: float | None,
                deadlines: Deadlines | None) -> ToolOutput:
    try:
        async with deadlines.within(timeout_s) if deadlines is not None else asyncio.timeout(timeout_s):
            return await tool.run(args, ctx)
    except TimeoutError:
        assert timeout_s is not None
        raise ToolError(ErrorKind.TIMEOUT, f"{tool.name} timed out after {timeout_s:g} s",
                        "Narrow the request, or raise the timeout for this call or in settings ([timeouts])."
                        ) from None


class Heartbeats:
    """The heartbeats of the calls running on one loop, from one timer.

    While calls run, a timer ticks every HEARTBEAT_EVERY_S and notes each call that has run for
    HEARTBEAT_AFTER_S or more: a call's first note comes between HEARTBEAT_AFTER_S and HEARTBEAT_AFTER_S +
    HEARTBEAT_EVERY_S after it began, then one a tick.  Most calls end long before their first beat; a timer of
    their own was started and cancelled by each (on the window's loop a cancelled timer is a Qt timer that
    lives on until it would have fired): about a twentieth of a no-op call there."""

    def __init__(self) -> None:
        self._running: dict[int, tuple[float, Callable[[float], None]]] = {}
        self._made = 0
        self._timer: asyncio.TimerHandle | None = None

    @contextlib.contextmanager
    def beating(self, note: Callable[[float], None]) -> Iterator[None]:
        """While the body runs past HEARTBEAT_AFTER_S, call `note(elapsed)` at each tick."""
        key = self._made = self._made + 1
        self._running[key] = (time.monotonic(), note)
        if self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(HEARTBEAT_EVERY_S, self._tick)
        try:
            yield
        finally:
            del self._running[key]

    def _tick(self) -> None:
        now = time.monotonic()
        for started, note in list(self._running.values()):
            if now - started >= HEARTBEAT_AFTER_S:
                note(now - started)
        self._timer = asyncio.get_running_loop().call_later(HEARTBEAT_EVERY_S, self._tick) if self._running else None


class Deadlines:
    """The time limits of the calls running on one loop, from one timer.

    `asyncio.timeout` arms a timer of its own for each call and cancels it when the call ends in time, as
    nearly every call does: on the window's loop a Qt timer started and killed, about 20 us, a sixtieth of a
    no-op call.  Here the timer waits for the earliest limit armed so far and is left running when that call
    ends in time: it then finds nothing due, and waits for the earliest limit still running.  A limit met is
    the same as `asyncio.timeout`'s: the call's task is cancelled at the time, and `TimeoutError` raised
    where the body ends."""

    def __init__(self) -> None:
        self._limits: list[tuple[float, int, _Limit]] = []
        """A heap by deadline (limits that ended are dropped when they come to its top)."""
        self._order = itertools.count()
        self._timer: asyncio.TimerHandle | None = None
        self._timer_at = float("inf")

    def within(self, timeout_s: float | None) -> _Limit:
        """`async with deadlines.within(s):` the body's task is cancelled after `s` seconds, and `TimeoutError`
        raised in its place; None: no limit."""
        return _Limit(self, timeout_s)

    def _add(self, limit: _Limit, when: float) -> None:
        limits = self._limits
        while limits and limits[0][2].ended:
            heapq.heappop(limits)
        heapq.heappush(limits, (when, next(self._order), limit))
        if when < self._timer_at:
            self._arm(when)

    def _arm(self, when: float) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer, self._timer_at = asyncio.get_running_loop().call_at(when, self._due), when

    def _due(self) -> None:
        self._timer, self._timer_at = None, float("inf")
        limits, now = self._limits, asyncio.get_running_loop().time()
        while limits and (limits[0][2].ended or limits[0][0] <= now):
            _, _, limit = heapq.heappop(limits)
            if not limit.ended:
                limit.expire()
        if limits:
            self._arm(limits[0][0])

    def __repr__(self) -> str:
        return f"<Deadlines armed={len(self._limits)}>"


class _Limit:
    """One body's time limit (`Deadlines.within`), as `asyncio.timeout` would keep it."""

    __slots__ = ("_deadlines", "_timeout_s", "_task", "_cancelling", "ended", "expired")

    def __init__(self, deadlines: Deadlines, timeout_s: float | None) -> None:
        self._deadlines, self._timeout_s = deadlines, timeout_s
        self._task: asyncio.Task[object] | None = None
        self._cancelling = 0
        self.ended = self.expired = False

    async def __aenter__(self) -> _Limit:
        task = asyncio.current_task()
        if task is None:
            raise RuntimeError("a time limit is only kept inside a task")
        self._task, self._cancelling = task, task.cancelling()
        if self._timeout_s is not None:
            self._deadlines._add(self, asyncio.get_running_loop().time() + self._timeout_s)  # noqa: SLF001
        return self

    def expire(self) -> None:
        assert self._task is not None
        self.expired = True
        self._task.cancel()

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        self.ended = True
        if self.expired and self._task is not None and self._task.uncancel() <= self._cancelling \
                and exc_type is asyncio.CancelledError:
            raise TimeoutError from exc
