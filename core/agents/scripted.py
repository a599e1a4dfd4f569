"""The scripted agent: runs a script's steps through the console, one by one.

It behaves as a model-driven agent would towards the console: every step is
a call through the pipeline (so it is validated, policed, approved,
recorded), a failed or denied step is reported and the agent goes on, and a
Task step spawns a sub-agent that runs the nested steps under its own name
with its own, narrower, set of tools.
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter

from core.agents.script import Script, Step, substitute
from core.console import Console
from core.models.batches import BatchReport
from core.models.records import RunStatus
from core.orchestration.graph import BatchError
from core.orchestration.refs import BadReference
from core.run.calls import AgentHandle, CallOutcome
from core.tools.base import SubAgentRequest, ToolOutput
from core.tools.names import ToolName

NO_NESTED_TASK = frozenset({ToolName.TASK, ToolName.AGENT})
_STATUS = {"done": RunStatus.DONE, "failed": RunStatus.FAILED, "denied": RunStatus.DENIED,
           "skipped": RunStatus.SKIPPED, "cancelled": RunStatus.CANCELLED, "timed_out": RunStatus.TIMED_OUT}
log = logging.getLogger(__name__)


class ScriptedAgent:
    """Drives one agent (and its sub-agents) through a list of steps."""

    def __init__(self, console: Console, steps: list[Step], pace: float = 0.0) -> None:
        self.console = console
        self.steps = steps
        self.pace = pace
        """Seconds to wait before each step, so a person can follow along."""
        self.outcomes: dict[str, CallOutcome] = {}
        """Outcome per step id (steps without an id are not kept here)."""
        self.batches: dict[str, BatchReport] = {}
        """Report per batch step (by step id, else the batch's name)."""

    async def __call__(self, handle: AgentHandle) -> str:
        root = str(self.console.workspace.root)
        statuses: Counter[RunStatus] = Counter()
        for step in self.steps:
            if step.pause or self.pace:
                await asyncio.sleep(step.pause or self.pace)
            if step.batch is not None:
                statuses.update(await self._batch(handle, step, root))
                continue
            outcome = await self.console.call(handle, step.tool, substitute(step.args, root),
                                              spawn=lambda req: self._spawn(handle, req))
            statuses[outcome.status] += 1
            if step.id:
                self.outcomes[step.id] = outcome
        parts = [f"{n} {status.value}" for status, n in statuses.items()]
        return f"{len(self.steps)} steps, {sum(statuses.values())} calls: " + ", ".join(parts)

    async def _batch(self, handle: AgentHandle, step: Step, root: str) -> Counter[RunStatus]:
        """Run a batch step; a batch that cannot start (a cycle, an unknown id) counts as one failure."""
        assert step.batch is not None
        calls = [c.model_copy(update={"args": substitute(c.args, root)}) for c in step.batch.calls]
        try:
            report = await self.console.run_batch(handle, calls, name=step.batch.name,
                                                  concurrency=step.batch.concurrency, fail_fast=step.batch.fail_fast)
        except (BatchError, BadReference) as e:
            log.warning("batch %s refused: %s", step.batch.name, e)
            return Counter({RunStatus.FAILED: 1})
        self.batches[step.id or step.batch.name] = report
        return Counter(_STATUS[r.status] for r in report.results)

    async def _spawn(self, parent: AgentHandle, request: SubAgentRequest) -> ToolOutput:
        tools = request.tools
        if tools is None:
            inherited = parent.tools if parent.tools is not None else frozenset(self.console.registry.names())
            tools = tuple(sorted(inherited - NO_NESTED_TASK))
        child = await self.console.start_agent(request.subagent_type, "subagent", parent=parent,
                                               spawned_by=request.call_id, tools=tools)
        steps = [Step.model_validate(s) for s in request.steps]
        sub = ScriptedAgent(self.console, steps, self.pace)
        sub.outcomes = self.outcomes  # one namespace of step ids across the tree
        summary = await self.console.run_agent(child, sub)
        return ToolOutput(text=f"Sub-agent {request.subagent_type} finished: {summary}",
                          data={"agent_id": child.agent_id, "summary": summary})


async def run_script(console: Console, script: Script, pace: float = 0.0) -> tuple[str, ScriptedAgent]:
    """Start the script's agent and run it to the end."""
    handle = await console.start_agent(script.name, "scripted")
    agent = ScriptedAgent(console, script.steps, pace)
    summary = await console.run_agent(handle, agent)
    return summary, agent
