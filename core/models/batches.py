"""What a batch is made of and what running it reports: frozen records, no behaviour."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field

from core.errors import ErrorInfo


class BatchCall(BaseModel):
    """One call of a batch, in Belay's words or the seed material's (`toolName`, `parameters`, `dependsOn`)."""

    model_config = ConfigDict(frozen=True, populate_by_name=True, extra="forbid")

    id: str = Field(min_length=1, max_length=200, pattern=r"^[A-Za-z_][A-Za-z0-9_-]*$")
    """Unique within the batch; what `depends_on` and `${id...}` references name."""
    tool: str = Field(validation_alias=AliasChoices("tool", "toolName"))
    args: dict[str, Any] = Field(default_factory=dict, validation_alias=AliasChoices("args", "parameters"))
    depends_on: tuple[str, ...] = Field(default=(), validation_alias=AliasChoices("depends_on", "dependsOn"))
    """Calls that must finish (successfully) first; references in `args` add theirs automatically."""
    timeout_s: float | None = Field(default=None, gt=0, validation_alias=AliasChoices("timeout_s", "timeoutS",
                                                                                         "timeout"))
    """How long this call may work, overriding the tool's default (seconds)."""
    requires_approval: bool = Field(default=False, validation_alias=AliasChoices("requires_approval",
                                                                                 "requiresApproval"))
    """Ask a person even where the policy would allow the call (a deny still denies)."""


class PlanInfo(BaseModel):
    """The shape of a batch's graph, for display before and while it runs."""

    model_config = ConfigDict(frozen=True)

    levels: tuple[tuple[str, ...], ...]
    """Calls by depth: level 0 needs nothing, level n needs something from level n-1."""
    critical_path: tuple[str, ...]
    """The longest chain of dependencies (by estimated duration): the least the batch can take."""
    max_parallelism: int
    """The widest level: how many calls could run at once at most, if the cap allows."""
    estimates: dict[str, float] = Field(default_factory=dict)
    """Seconds each call is expected to take, by its id (core.orchestration.estimates); empty when not known."""


CallState = Literal["done", "failed", "denied", "skipped", "cancelled", "timed_out"]


class BatchResult(BaseModel):
    """How one call of a batch ended."""

    model_config = ConfigDict(frozen=True)

    id: str
    tool: str
    status: CallState
    call_id: str | None = None
    """The journaled call (None when it was skipped before it became a call)."""
    text: str = ""
    """What the call returned (or why it failed or was skipped)."""
    data: dict[str, Any] = Field(default_factory=dict)
    error: ErrorInfo | None = None
    cached: bool = False
    attempts: int = 1
    started_s: float | None = None
    """Seconds after the batch started that the call started running (None: it never ran)."""
    duration_s: float | None = None


class BatchReport(BaseModel):
    """A finished batch: every call's result and the totals a person reads first."""

    model_config = ConfigDict(frozen=True)

    batch_id: str
    plan: PlanInfo
    results: tuple[BatchResult, ...]
    duration_s: float
    max_running: int = 0
    """The most calls that actually ran at the same time."""

    def count(self, *states: CallState) -> int:
        return sum(r.status in states for r in self.results)

    @property
    def succeeded(self) -> int:
        return self.count("done")

    @property
    def failed(self) -> int:
        return self.count("failed", "denied", "cancelled", "timed_out")

    @property
    def skipped(self) -> int:
        return self.count("skipped")

    @property
    def cache_hits(self) -> int:
        return sum(r.cached for r in self.results)

    @property
    def ok(self) -> bool:
        return self.failed == 0 and self.skipped == 0
