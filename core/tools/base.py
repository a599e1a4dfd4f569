"""What a tool is: arguments, annotations, and either a plan of writes or a run.

Tools do only their own work.  Validation, policy, approval, change capture,
timeouts and recording belong to the pipeline (`core.run.pipeline`).  A tool that
changes files does not write them itself: it returns a `WritePlan` (the
before- and after-bytes of every file it would touch), which the pipeline
previews for approval, journals, and applies atomically.  That is what lets
a person edit the content before it is written and undo it afterwards.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Generic, TypeVar

from pydantic import BaseModel, ConfigDict

from core.errors import BelayError
from core.ids import AgentId, CallId
from core.paths import Workspace
from core.process.overlay import Layer


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
    shown: tuple[bytes | None, bytes | None] | None = None
    """What the approval's diff shows instead of the raw bytes, before and after: a notebook's cells with
    their outputs folded, rather than its JSON.  None: the raw bytes."""


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
    full_text: str | None = None
    """The whole output as the journal keeps it, when the agent is shown less (a long command's)."""


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
    may_read: Callable[[Path], str | None] = field(default=lambda path: None)
    """Why reading a path is refused (a Read deny rule, a secret), or None.  Tools that open or list many
    files (Grep, Glob, LS, NotebookRead) leave out, and say they left out, what it refuses."""
    layer: Layer | None = None
    """For a command run in preview (`RunTool.previews`): the private layer it runs in, over the workspace."""


@dataclass(frozen=True)
class RetryPolicy:
    """How a tool's recoverable failures are retried: exponential backoff with jitter, a bounded number of times."""

    attempts: int = 3
    """Tries in all, the first included."""
    base_delay_s: float = 0.2
    factor: float = 2.0
    max_delay_s: float = 5.0
    jitter: float = 0.5
    """Each delay is scaled by a random factor in [1 - jitter, 1 + jitter]."""


A = TypeVar("A", bound=ToolArgs)
"""A tool's argument model: each tool is generic over its own, so its methods take it as it is."""


class Tool(ABC, Generic[A]):
    """A named capability an agent can call, with arguments of type `A` (its `Args` model)."""

    name: ClassVar[str]
    description: ClassVar[str]
    Args: type[A]
    """The model the pipeline validates the agent's arguments into; its JSON schema is what agents see."""
    annotations: ClassVar[Annotations]
    timeout_s: ClassVar[float | None] = 30.0
    """How long the tool may work (planning and running, not waiting for approval); None: no limit.
    Settings (`[timeouts]`) and a call's own `timeout_s` override it."""
    own_timeout: ClassVar[bool] = False
    """The tool times itself (Bash kills its whole process tree and keeps the output so far); settings'
    `[timeouts]` reach it through its own settings, not the pipeline's timer."""
    captures_workspace: ClassVar[bool] = False
    """Its changes to files cannot be known in advance (a shell): the pipeline compares the workspace
    before and after it runs, and such calls run one at a time so each change has one author."""
    cacheable: ClassVar[bool] = False
    """Its result (read-only) may be reused for the same arguments until a path it read changes."""
    retry: ClassVar[RetryPolicy | None] = None
    """Recoverable failures (timeouts, busy resources, dropped connections) are retried so; writes never are."""
    typical_s: ClassVar[float] = 0.05
    """What one call usually takes, before the journal has timed any like it (`estimate_s`)."""

    def summary(self, args: A, workspace: Workspace) -> str:
        """A short line for the timeline, e.g. the path relative to the workspace."""
        return ""

    def with_limit(self, args: A, seconds: float) -> A:
        """For a tool that times itself (`own_timeout`): `args` made to stop within `seconds`, a call's own limit."""
        return args

    def check_args(self, raw: dict[str, Any]) -> None:
        """Checks beyond the `Args` model, raising ToolError(INVALID_ARGS): a tool whose arguments are only
        known as a JSON schema (an MCP server's) validates against it here."""

    def reads(self, args: A, workspace: Workspace) -> frozenset[str] | None:
        """Workspace-relative paths the result depends on: a file, "dir/" for a whole tree, "" for the whole
        workspace.  None when it cannot say (the result is then never cached)."""
        return None

    def writes(self, args: A, workspace: Workspace) -> frozenset[str] | None:
        """Workspace-relative paths the call may change ("" for anything); None for a read-only tool.
        Calls in a batch that touch the same path are run one after the other."""
        return None if self.annotations.read_only else frozenset({""})

    def estimate_s(self, args: A) -> float:
        """Seconds this call is expected to take, before it runs (the seed's `estimateCost`): what a batch plans
        its longest path by, until the journal's history of calls like it says better
        (core.orchestration.estimates)."""
        return self.typical_s

    def on_cache_hit(self, args: A, ctx: ToolContext) -> None:
        """A cached result is being served for this call: note what the agent has now seen (Read does)."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"


class RunTool(Tool[A]):
    """A tool that does its work directly (reads, searches, spawning agents)."""

    @abstractmethod
    async def run(self, args: A, ctx: ToolContext) -> ToolOutput: ...

    def layerable(self, args: A) -> bool:
        """Whether this call can run in a private layer over the workspace (`ToolContext.layer`): its changes
        land when it ends, so it may run beside others (a foreground command)."""
        return False

    def previews(self, args: A, asked: bool = False) -> bool:
        """Whether this call runs in a private layer (`ToolContext.layer`) whose changes a person chooses from
        before they land, rather than changing the workspace as it runs (a command: by the settings, or `asked`
        by the person who approved it)."""
        return False


class WriteTool(Tool[A]):
    """A tool that changes files through a `WritePlan` the pipeline applies."""

    annotations: ClassVar[Annotations] = Annotations(read_only=False, destructive=True)

    def writes(self, args: A, workspace: Workspace) -> frozenset[str] | None:
        """The one file named by the usual argument (file_path or notebook_path), else anything."""
        raw = getattr(args, "file_path", None) or getattr(args, "notebook_path", None)
        if not isinstance(raw, str):
            return frozenset({""})
        places = read_places(workspace, raw, tree=False)
        return places if places else frozenset({""})

    @abstractmethod
    def plan(self, args: A, ctx: ToolContext) -> WritePlan:
        """Compute the writes.  Blocking I/O is fine: the pipeline calls this off the loop."""


def read_places(workspace: Workspace, raw: str | None, tree: bool) -> frozenset[str] | None:
    """What a read of `raw` (a file, or with `tree` a directory and all below it) depends on, as
    workspace-relative paths for the result cache: the path as named and where its links lead.
    None when it cannot be watched (inside .git, outside the workspace, unresolvable)."""
    try:
        real = workspace.resolve(raw, "path") if raw is not None else workspace.root
    except BelayError:
        return None
    named = Path(os.path.normpath(raw)) if raw is not None else workspace.root
    places = set()
    for path in (named, real):
        if not workspace.contains(path) and path != real:
            continue
        rel = "" if path == workspace.root else workspace.relative(path)
        if rel == ".git" or rel.startswith(".git/") or "/.git/" in f"/{rel}/":
            return None
        places.add(rel + "/" if tree and rel else rel)
    return frozenset(places)
