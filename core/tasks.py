"""Every task the core starts, and the one way its cleanup survives a cancellation.

`spawn` is how the core starts a task: named, and returned so that the
caller keeps it and ends it (cancel, then wait), or gives it to an owner
here.  `shielded` runs cleanup (recording how a call ended, closing a
process) to its end even when the task awaiting it is cancelled, then lets
the cancellation through; it is the only place the core shields anything.
A linter rule (pyproject.toml, ruff's banned-api) keeps `asyncio.create_task`,
`ensure_future` and `shield` in this module.

`OwnedTasks` owns a console's agents and calls.  An agent's task runs
until it finishes or the console closes.  A call runs in a task of its own
so that a person can cancel that one call from the window: the agent then
hears "cancelled" and goes on, while cancelling the agent itself cancels
its call and propagates.  Closing cancels the agents,
gives calls a grace period to record how they ended, then cancels what is
left and waits for it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def spawn(work: Awaitable[T], name: str) -> asyncio.Task[T]:
    """Start `work` as a named task.  The caller keeps the task (a task nobody references may be
    collected mid-flight) and ends it: cancel, then wait for it."""
    task = asyncio.ensure_future(work)
    task.set_name(name)
    return task


async def shielded(work: Awaitable[T]) -> T:
    """Run `work` to its end even if the caller is cancelled meanwhile; then let the cancellation through.

    For cleanup that must not be cut short (a run's record, a process tree's end): plain
    `asyncio.shield` would let the caller go on while the work still runs, unowned.
    """
    task = asyncio.ensure_future(work)
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        await asyncio.wait([task])
        raise


class OwnedTasks:
    """Agent tasks and call tasks of one console."""

    def __init__(self) -> None:
        self._agents: set[asyncio.Task[Any]] = set()
        self._calls: dict[str, asyncio.Task[Any]] = {}

    @property
    def agents(self) -> int:
        return len(self._agents)

    def launch(self, coro: Awaitable[T], name: str) -> asyncio.Task[T]:
        """Start a top-level agent task, ended on close."""
        task = spawn(coro, name)
        self._agents.add(task)
        task.add_done_callback(self._agents.discard)
        return task

    async def call(self, call_id: str, work: Coroutine[Any, Any, T], cancelled: Callable[[], T]) -> T:
        """Run one call in its own task; when only that task is cancelled (`cancel`), return `cancelled()`.

        The caller awaits the call's task itself: cancelling the caller cancels the call, waits for it to end
        (its ending recorded) and then propagates, whatever the call made of it.  (Awaited through a shield,
        as it was, a call cost the loop two more callbacks, about a tenth of a no-op call on the window's.)"""
        task = spawn(work, f"call {call_id}")
        self._calls[call_id] = task
        caller = asyncio.current_task()
        asked = caller.cancelling() if caller is not None else 0
        try:
            result = await task
        except asyncio.CancelledError:
            if task.cancelled() and not _cancelled_since(caller, asked):
                return cancelled()  # cancelled from the window: the agent hears about it and goes on
            raise
        except Exception as error:
            if _cancelled_since(caller, asked):  # the call failed as the caller was cancelled: that stands
                raise asyncio.CancelledError from error
            raise
        finally:
            self._calls.pop(call_id, None)
        if _cancelled_since(caller, asked):  # the call ended well all the same: the caller's cancellation stands
            raise asyncio.CancelledError
        return result

    def cancel(self, call_id: str) -> bool:
        """Stop one queued, waiting or running call; False when there is no such call running."""
        task = self._calls.get(call_id)
        if task is None or task.done():
            return False
        task.cancel()
        return True

    async def aclose(self, grace_s: float) -> None:
        """Cancel the agents; give calls `grace_s` to finish recording, then cancel them and wait."""
        for task in list(self._agents):
            task.cancel()
        pending = [*self._agents, *self._calls.values()]
        if not pending:
            return
        _, still = await asyncio.wait(pending, timeout=grace_s)
        for task in still:
            task.cancel()
        if still:
            await asyncio.wait(still)


def _cancelled_since(task: asyncio.Task[Any] | None, asked: int) -> bool:
    """Whether `task` was asked to cancel since it counted `asked` requests (`Task.cancelling`)."""
    return task is not None and task.cancelling() > asked
