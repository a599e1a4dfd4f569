"""The window's loop (gui.window.runtime.loop): qasync's, with a cancelled timer let go at once."""

from __future__ import annotations

import asyncio
import threading

import pytest

from gui.window.runtime.loop import EventLoop


def test_timeouts_left_early_leave_no_timer_waiting(loop: asyncio.AbstractEventLoop) -> None:
    assert isinstance(loop, EventLoop)

    async def calls() -> int:
        before = loop.waiting_timers
        for _ in range(2_000):  # what 2,000 calls that end well within their limit do
            async with asyncio.timeout(600):
                await asyncio.sleep(0)
        waiter = asyncio.ensure_future(asyncio.sleep(600))  # noqa: TID251 - a sleep cut short, as a cancelled wait is
        await asyncio.sleep(0)
        waiter.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiter
        return loop.waiting_timers - before

    assert loop.run_until_complete(calls()) == 0


def test_callbacks_run_in_order_after_their_delays_and_a_cancelled_one_never(loop: asyncio.AbstractEventLoop) -> None:
    async def scheduled() -> tuple[list[str], float]:
        ran: list[str] = []
        started = loop.time()
        loop.call_later(0.05, ran.append, "later")
        loop.call_later(0.02, ran.append, "cancelled").cancel()
        loop.call_soon(ran.append, "first")
        loop.call_soon(ran.append, "second")
        loop.call_at(started + 0.03, ran.append, "at")
        await asyncio.sleep(0.08)
        while "later" not in ran:
            await asyncio.sleep(0.01)
        return ran, loop.time() - started

    ran, took = loop.run_until_complete(scheduled())
    assert ran == ["first", "second", "at", "later"]
    assert took >= 0.05


def test_a_coroutine_function_is_refused_as_a_callback(loop: asyncio.AbstractEventLoop) -> None:
    async def work() -> None:
        return None

    with pytest.raises(TypeError, match="coroutines cannot be used"):
        loop.call_soon(work)


def test_callbacks_handed_over_from_threads_run_on_the_loop_in_order(loop: asyncio.AbstractEventLoop) -> None:
    async def handed_over() -> tuple[list[tuple[int, str]], list[str]]:
        ran: list[tuple[int, str]] = []
        here: list[str] = []

        def note(n: int) -> None:
            ran.append((n, threading.current_thread().name))

        def worker() -> None:
            for n in range(50):
                loop.call_soon_threadsafe(note, n)

        thread = threading.Thread(target=worker, name="worker")
        thread.start()
        thread.join()
        loop.call_soon_threadsafe(here.append, "later")  # from the loop's own thread: soon, not now
        here.append("now")
        results = await asyncio.gather(*(asyncio.to_thread(lambda n=n: n * n) for n in range(5)))
        assert results == [0, 1, 4, 9, 16]
        while len(ran) < 50 or len(here) < 2:
            await asyncio.sleep(0.01)
        return ran, here

    ran, here = loop.run_until_complete(handed_over())
    assert [n for n, _ in ran] == list(range(50))
    assert {name for _, name in ran} == {threading.current_thread().name}
    assert here == ["now", "later"]
