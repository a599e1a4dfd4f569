"""The scripted agent's script format: a documented list of tool calls.

A script is JSON or YAML::

    name: demo-agent              # shown in the timeline
    description: What it is for.
    steps:
      - id: read_app              # optional; names the step for review and undo hints
        tool: Read
        args: {file_path: "{workspace}/src/app.py"}
      - id: survey                # a batch: its calls run as a dependency graph (core.orchestration)
        batch:
          name: survey the code
          calls:
            - {id: files, tool: Glob, args: {pattern: "src/**/*.py"}}
            - {id: first, tool: Read, args: {file_path: "${files.data.files[0]}"}}
      - tool: Task                # spawns a sub-agent that runs its own steps
        args:
          description: Update the docs
          subagent_type: docs-writer
          tools: [Read, Edit]
          steps:
            - tool: Edit
              args: {...}
    review:                       # only for unattended runs (belay demo --auto-approve):
      - tool: Write               # what a careful reviewer would answer
        path: "tests/*"
        decision: deny
        reason: Do not delete the tests to make them pass.
    undo_after: [step_id]         # unattended runs undo these steps' calls at the end

`{workspace}` in any string is replaced by the workspace's absolute path
(tools take absolute paths, as Claude Code's do).  `args` may also be a
string of raw JSON, passed to the pipeline unparsed (to test bad input).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, model_validator

from core.agents.documents import DocumentError, load_yaml
from core.models.batches import BatchCall


class BatchSpec(BaseModel):
    """Calls run together as one batch: in parallel where their dependencies allow."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = "batch"
    calls: list[BatchCall] = Field(min_length=1)
    fail_fast: bool = False
    concurrency: int = Field(default=10, ge=1, le=64)


class Step(BaseModel):
    """One tool call of a script, or one batch of calls."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str | None = None
    tool: str = ""
    args: dict[str, Any] | str = Field(default_factory=dict)
    batch: BatchSpec | None = None
    """Instead of `tool`: calls run as a dependency graph, with `${id.data...}` references between them."""
    pause: float = 0.0
    """Seconds to wait before this step (paces a demo for a watching person)."""

    @model_validator(mode="after")
    def _one_kind(self) -> Step:
        if bool(self.tool) == (self.batch is not None):
            raise ValueError("a step names either a tool (with args) or a batch of calls, not both or neither")
        return self


class ReviewRule(BaseModel):
    """How an unattended reviewer answers one kind of request."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    tool: str
    path: str = "*"
    """A glob over the workspace-relative path the call writes."""
    decision: Literal["approve", "deny"]
    reason: str = ""


class Script(BaseModel):
    """A scripted agent: its name and its steps."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = "scripted-agent"
    description: str = ""
    steps: list[Step]
    review: list[ReviewRule] = Field(default_factory=list)
    undo_after: list[str] = Field(default_factory=list)


def load_script(path: str | Path) -> Script:
    """Read a script from a .json, .yaml or .yml file (YAML strictly: no aliases, bounded nesting)."""
    text = Path(path).read_text(encoding="utf-8")
    try:
        data = json.loads(text) if str(path).endswith(".json") else load_yaml(text)
    except RecursionError:
        raise DocumentError(f"the script {path} nests too deeply") from None
    except yaml.YAMLError as e:
        raise DocumentError(f"the script {path} is not valid YAML: {str(e).splitlines()[0]}") from None
    return Script.model_validate(data)


def substitute(value: Any, workspace: str) -> Any:
    """Replace `{workspace}` in every string inside `value`."""
    if isinstance(value, str):
        return value.replace("{workspace}", workspace)
    if isinstance(value, list):
        return [substitute(v, workspace) for v in value]
    if isinstance(value, dict):
        return {k: substitute(v, workspace) for k, v in value.items()}
    return value
