"""The agents at work in one console: started and finished (recorded), their calls run as tasks it owns.

Everything that starts an agent or submits a call comes here: the console
for front ends and Belay's own agents, and the outside agents (Claude Code
sessions, MCP clients) directly, so a call from a hook goes down to the
pipeline without passing back up through the console.  Each call runs in a
task of its own (core.tasks.OwnedTasks), so one call can be cancelled from
the window while its agent goes on.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from typing import Any, TypeVar

from core.ids import BatchId, CallId, new_agent_id, new_call_id
from core.models.records import AgentStatus, RunStatus
from core.recorder import Recorder
from core.run.calls import AgentHandle, CallOutcome
from core.run.pipeline import Pipeline
from core.tasks import OwnedTasks, shielded
from core.tools.base import SpawnAgent

log = logging.getLogger(__name__)
T = TypeVar("T")

AgentBody = Callable[[AgentHandle], Awaitable[str]]
"""What an agent does once started; returns its final summary."""


class Roster:
    """Agents and their calls, for one console."""

    def __init__(self, recorder: Recorder, pipeline: Pipeline) -> None:
        self.recorder, self.pipeline = recorder, pipeline
        self._tasks = OwnedTasks()

    @property
    def running(self) -> int:
        """Top-level agent tasks still at work."""
        return self._tasks.agents

    async def start_agent(self, name: str, kind: str, *, parent: AgentHandle | None = None,
                          spawned_by: CallId | None = None, tools: Sequence[str] | None = None) -> AgentHandle:
        """Register an agent (journal, event) and return its handle; a sub-agent may call at most its parent's
        tools."""
        await self.recorder.session()
        allowed = frozenset(tools) if tools is not None else None
        if parent is not None and parent.tools is not None and allowed is not None:
            allowed &= parent.tools
        handle = AgentHandle(new_agent_id(), name, self.recorder.session_id, allowed)
        await self.recorder.agent_started(handle.agent_id, name, kind, parent_id=parent.agent_id if parent else None,
                                          spawned_by=spawned_by, tools=allowed)
        return handle

    async def finish_agent(self, handle: AgentHandle, status: AgentStatus, message: str = "") -> None:
        await self.recorder.agent_finished(handle.agent_id, status, message)

    async def run_agent(self, handle: AgentHandle, body: AgentBody) -> str:
        """Run an agent's body to the end, recording how it finished."""
        status, message = AgentStatus.DONE, ""
        try:
            message = await body(handle)
            return message
        except asyncio.CancelledError:
            status, message = AgentStatus.CANCELLED, "cancelled"
            raise
        except Exception as e:
            log.exception("agent %s failed", handle.name)
            status, message = AgentStatus.FAILED, f"{type(e).__name__}: {e}"
            raise
        finally:
            await shielded(self.finish_agent(handle, status, message))

    def launch(self, coro: Coroutine[Any, Any, T], name: str) -> asyncio.Task[T]:
        """Start a top-level agent task, ended when the console closes."""
        return self._tasks.launch(coro, name)

    async def call(self, agent: AgentHandle, tool: str, args: object, spawn: SpawnAgent | None = None, *,
                   timeout_s: float | None = None, batch: tuple[BatchId, str] | None = None,
                   ask: bool = False) -> CallOutcome:
        """Submit one call for `agent` and wait for its outcome (see Console.call)."""
        call_id = new_call_id()
        work = self.pipeline.execute(call_id, agent, tool, args, spawn, timeout_s=timeout_s, batch=batch, ask=ask)
        return await self._tasks.call(call_id, work, lambda: CallOutcome(
            call_id, RunStatus.CANCELLED, "The user cancelled this call."))

    def cancel(self, call_id: str) -> bool:
        """Stop a queued, waiting or running call; the agent is told it was cancelled."""
        return self._tasks.cancel(call_id)

    async def aclose(self, grace_s: float) -> None:
        """Cancel the agents; give calls `grace_s` to record how they ended, then cancel them too."""
        await self._tasks.aclose(grace_s)

    def __repr__(self) -> str:
        return f"<Roster agents running={self._tasks.agents}>"
