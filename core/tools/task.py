"""Task (Claude Code's sub-agent tool): spawn an agent with its own tools and work.

The Task call itself changes nothing, so the policy lets it run; every call
its sub-agent makes goes through the pipeline on its own.  How the sub-agent
does its work is up to the agent that spawned it (scripted steps here, a
model loop later), through the context's `spawn_agent`.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from core.errors import ErrorKind, ToolError
from core.paths import Workspace
from core.tools.base import Annotations, RunTool, SubAgentRequest, ToolArgs, ToolContext, ToolOutput
from core.tools.names import ToolName


class TaskArgs(ToolArgs):
    description: str = Field(min_length=1, max_length=200)
    """A short (3-5 word) description of the task."""
    prompt: str = ""
    """The task for the sub-agent to perform."""
    subagent_type: str = "general-purpose"
    """Which kind of sub-agent to start; its name in the timeline."""
    tools: list[str] | None = None
    """Tools the sub-agent may use (never more than its parent's); default: the parent's, without Task."""
    steps: list[dict[str, Any]] = Field(default_factory=list)
    """For scripted agents: the sub-agent's own steps."""


class TaskTool(RunTool[TaskArgs]):
    name = ToolName.TASK
    typical_s = 30.0
    """A sub-agent's whole run."""
    description = ("Launch a sub-agent to handle a multi-step task on its own, with a restricted set of tools. "
                   "Its calls are supervised like yours; you receive its final report.")
    Args = TaskArgs
    annotations = Annotations(read_only=False, destructive=False, open_world=False)
    timeout_s = None

    def summary(self, args: TaskArgs, workspace: Workspace) -> str:
        return f"{args.subagent_type}: {args.description}"

    async def run(self, args: TaskArgs, ctx: ToolContext) -> ToolOutput:
        if ctx.spawn_agent is None:
            raise ToolError(ErrorKind.PERMISSION, "this agent cannot start sub-agents")
        request = SubAgentRequest(call_id=ctx.call_id, description=args.description, prompt=args.prompt,
                                  subagent_type=args.subagent_type,
                                  tools=tuple(args.tools) if args.tools is not None else None,
                                  steps=tuple(args.steps))
        return await ctx.spawn_agent(request)
