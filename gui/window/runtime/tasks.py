"""Owned asyncio tasks for the window: kept alive, named, and never silently lost.

Qt slots cannot await, so a slot that needs the core's async methods starts
a task here.  The set keeps a strong reference until the task ends, and an
exception is logged and handed to `on_error` (the window shows it) instead
of vanishing with a garbage-collected task.  (A console on another host out
of reach raises RemoteError: shown, logged as information, not as a fault.)
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from typing import Any

from core import spawn

log = logging.getLogger(__name__)


class TaskSet:
    """Tasks started on behalf of the window, cancelled together on close."""

    def __init__(self, on_error: Callable[[str], None] | None = None) -> None:
        self._tasks: set[asyncio.Task[Any]] = set()
        self._on_error = on_error

    def spawn(self, coro: Coroutine[Any, Any, Any], name: str) -> asyncio.Task[Any]:
        task = spawn(coro, name)
        self._tasks.add(task)
        task.add_done_callback(self._done)
        return task

    def _done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if task.cancelled():
            return
        error = task.exception()
        if error is not None:
            from core import RemoteError  # (here: the hub's window imports this module before it first paints)
            if isinstance(error, RemoteError):  # a console on another host out of reach: told, not a fault here
                log.info("task %s: %s", task.get_name(), error)
            else:
                log.error("task %s failed", task.get_name(), exc_info=error)
            if self._on_error is not None:
                self._on_error(f"{task.get_name()} failed: {error}")

    async def aclose(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.wait(list(self._tasks))

    def __len__(self) -> int:
        return len(self._tasks)

    def __repr__(self) -> str:
        return f"<TaskSet {sorted(t.get_name() for t in self._tasks)}>"
