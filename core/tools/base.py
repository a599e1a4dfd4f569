"""What a tool is: arguments, annotations, and either a plan of writes or a run.

Tools do only their own work.  Validation, policy, approval, change capture,
timeouts and recording belong to the pipeline (`core.pipeline`).  A tool that
changes files does not write them itself: it returns a `WritePlan` (the
before- and after-bytes of every file it would touch), which the pipeline
previews for approval, journals, and applies atomically.  That is what lets
a person edit the content before it is written and undo it afterwards.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict

from core.ids import AgentId, CallId
from core.paths import Workspace


class Annotations(BaseModel):
    """Hints about a tool's behaviour, as in MCP; they feed the policy."""

    model_config = ConfigDict(frozen=True)

    read_only: bool = False
    """The tool never changes anything outside its own process."""
    destructive: bool = True
    """A change it makes may remove or overwrite data."""
    idempotent: bool = False
    """Repeating the call with the same arguments has no further effect."""
    open_world: bool = False
    """The tool talks to the world outside the workspace (network, other agents)."""


class ToolArgs(BaseModel):
    """Base of every tool's argument model: strict types, unknown keys refused."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


@dataclass(frozen=True)
class FileWrite:
    """One file a call would change: its content before and after.

    `before is None` means the file does not exist yet (create);
    `after is None` means the call removes it (delete).
    """

    path: Path
    before: bytes | None
    after: bytes | None
    mode: int | None = None
    """Permission bits to give the file; None keeps the current ones (or the default)."""


@dataclass(frozen=True)
class WritePlan:
    """Everything a write tool would do, computed without touching the disk."""

    writes: tuple[FileWrite, ...]
    message: str
    """What the agent is told when the plan has been applied."""


@dataclass(frozen=True)
class ToolOutput:
    """What a call produced: text for the agent and structured data for references."""

    text: str
    data: dict[str, Any] = field(default_factory=dict)


@dataclass
class ReadState:
    """Which files an agent has read, and how they looked then (for stale-read checks)."""

    seen: dict[Path, tuple[int, int]] = field(default_factory=dict)
    """path -> (mtime_ns, size) when the agent last read or wrote it."""


SpawnAgent = Callable[["SubAgentRequest"], Awaitable[ToolOutput]]


@dataclass(frozen=True)
class SubAgentRequest:
    """What the Task tool asks the console for: a sub-agent and its work."""

    call_id: CallId
    """The Task call asking; the sub-agent is recorded as spawned by it."""
    description: str
    prompt: str
    subagent_type: str
    tools: tuple[str, ...] | None
    steps: tuple[dict[str, Any], ...]


@dataclass
class ToolContext:
    """What a running tool may use.  Nothing here is global."""

    workspace: Workspace
    agent_id: AgentId
    call_id: CallId
    read_state: ReadState
    spawn_agent: SpawnAgent | None = None
    emit_output: Callable[[str], None] | None = None
    """Live output for the window (already sanitised, coalesced by the tool: not one call per byte)."""


class Tool(ABC):
    """A named capability an agent can call."""

    name: ClassVar[str]
    description: ClassVar[str]
    Args: ClassVar[type[ToolArgs]]
    annotations: ClassVar[Annotations]
    timeout_s: ClassVar[float | None] = 30.0
    captures_workspace: ClassVar[bool] = False
    """Its changes to files cannot be known in advance (a shell): the pipeline compares the workspace
    before and after it runs, and such calls run one at a time so each change has one author."""

    def summary(self, args: ToolArgs, workspace: Workspace) -> str:
        """A short line for the timeline, e.g. the path relative to the workspace."""
        return ""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"


class RunTool(Tool):
    """A tool that does its work directly (reads, searches, spawning agents)."""

    @abstractmethod
    async def run(self, args: ToolArgs, ctx: ToolContext) -> ToolOutput: ...


class WriteTool(Tool):
    """A tool that changes files through a `WritePlan` the pipeline applies."""

    annotations: ClassVar[Annotations] = Annotations(read_only=False, destructive=True)

    @abstractmethod
    def plan(self, args: ToolArgs, ctx: ToolContext) -> WritePlan:
        """Compute the writes.  Blocking I/O is fine: the pipeline calls this off the loop."""
