"""The tasks a console starts (agents, and each call an agent submits), and how they end.

An agent's task runs until it finishes or the console closes.  A call runs
in a task of its own so that a person can cancel that one call from the
window: the agent then hears "cancelled" and goes on, while cancelling the
agent itself cancels its call and propagates.  Closing cancels the agents,
gives calls a grace period to record how they ended, then cancels what is
left and waits for it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


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
        task = asyncio.ensure_future(coro)
        task.set_name(name)
        self._agents.add(task)
        task.add_done_callback(self._agents.discard)
        return task

    async def call(self, call_id: str, work: Coroutine[Any, Any, T], cancelled: Callable[[], T]) -> T:
        """Run one call in its own task; when only that task is cancelled (`cancel`), return `cancelled()`."""
        task = asyncio.ensure_future(work)
        self._calls[call_id] = task
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            if task.cancelled() and not _being_cancelled():
                return cancelled()  # cancelled from the window: the agent hears about it and goes on
            task.cancel()
            await asyncio.wait([task])
            raise
        finally:
            self._calls.pop(call_id, None)

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


def _being_cancelled() -> bool:
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0
