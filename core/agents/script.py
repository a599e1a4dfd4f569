"""The scripted agent's script format: a documented list of tool calls.

A script is JSON or YAML::

    name: demo-agent              # shown in the timeline
    description: What it is for.
    steps:
      - id: read_app              # optional; names the step for review and undo hints
        tool: Read
        args: {file_path: "{workspace}/src/app.py"}
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
from pydantic import BaseModel, ConfigDict, Field


class Step(BaseModel):
    """One tool call of a script."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str | None = None
    tool: str
    args: dict[str, Any] | str = Field(default_factory=dict)
    pause: float = 0.0
    """Seconds to wait before this step (paces a demo for a watching person)."""


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
    """Read a script from a .json, .yaml or .yml file."""
    text = Path(path).read_text(encoding="utf-8")
    data = json.loads(text) if str(path).endswith(".json") else yaml.safe_load(text)
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
