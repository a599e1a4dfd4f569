"""Reading a plan for `belay run`: a batch of calls, a bare list of calls, or a scripted agent.

A plan is JSON or YAML, told apart by its content (not its name).  Every
problem is a `PlanError` whose message is one paragraph a person can act
on; nothing runs until the whole plan has been read.  `{workspace}` in any
string becomes the workspace's absolute path, as in scripts (`${...}`
references are left alone for the batch to resolve).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import AliasChoices, BaseModel, ConfigDict, Field, ValidationError

from core import BatchCall, Script

_WORKSPACE = re.compile(r"(?<!\$)\{workspace\}")
"""`{workspace}`, but not `${workspace}` (a reference to a call named workspace)."""
MAX_ERRORS_SHOWN = 5
MAX_CONCURRENCY = 64
"""As for a script's batch steps."""


class PlanError(ValueError):
    """A plan that cannot be run as written; the message says where and why."""


@dataclass(frozen=True)
class BatchPlan:
    """Calls to run as one dependency graph."""

    name: str
    calls: tuple[BatchCall, ...]
    fail_fast: bool = False
    concurrency: int | None = None
    """None: the console's default."""


@dataclass(frozen=True)
class ScriptPlan:
    """A scripted agent (Belay's script format, see `core.Script`), run as an agent."""

    script: Script


Plan = BatchPlan | ScriptPlan


class _BatchFile(BaseModel):
    """The batch shape: `{"calls": [...]}` (or `"batch"`) with optional settings."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = "batch"
    description: str = ""
    calls: list[BatchCall] = Field(min_length=1, validation_alias=AliasChoices("calls", "batch"))
    fail_fast: bool = Field(default=False, validation_alias=AliasChoices("fail_fast", "failFast"))
    concurrency: int | None = Field(default=None, ge=1, le=MAX_CONCURRENCY)


def load_plan(path: str | Path, workspace: Path) -> Plan:
    """The plan in `path`, with `{workspace}` filled in; raises PlanError."""
    data = _substitute(_parse(_read(Path(path))), str(workspace))
    if isinstance(data, list):
        return BatchPlan(name=Path(path).stem, calls=tuple(_validated(_BatchFile, {"calls": data}).calls))
    if not isinstance(data, dict):
        raise PlanError(f"the plan must be a mapping (a batch with `calls`, or a script with `steps`) or a list "
                        f"of calls, not {type(data).__name__}")
    if "steps" in data:
        return ScriptPlan(_validated(Script, data))
    if "calls" not in data and "batch" not in data:
        raise PlanError(f"the plan has neither `calls` (or `batch`), nor `steps`; its keys are "
                        f"{', '.join(map(str, data)) or 'none'}. A batch is {{calls: [{{id, tool, args}}, ...]}}, "
                        f"a scripted agent {{name, steps: [{{tool, args}}, ...]}}")
    batch = _validated(_BatchFile, {"name": Path(path).stem, **data})
    return BatchPlan(name=batch.name, calls=tuple(batch.calls), fail_fast=batch.fail_fast,
                     concurrency=batch.concurrency)


def _read(path: Path) -> str:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise PlanError(f"cannot read the plan {path}: {getattr(e, 'strerror', None) or e}") from e
    if not text.strip():
        raise PlanError(f"the plan {path} is empty")
    return text


def _parse(text: str) -> Any:
    """JSON when it parses as JSON, else YAML; the error shown is the one for what it looks like."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as json_error:
        try:
            return yaml.safe_load(text)
        except yaml.YAMLError as yaml_error:
            if text.lstrip()[:1] in ("{", "["):
                raise PlanError(f"the plan is not valid JSON: {json_error.msg} at line {json_error.lineno}, "
                                f"column {json_error.colno}") from None
            raise PlanError(f"the plan is not valid YAML: {_yaml_problem(yaml_error)}") from None


def _yaml_problem(error: yaml.YAMLError) -> str:
    if not isinstance(error, yaml.MarkedYAMLError) or error.problem_mark is None:
        return " ".join(str(error).split())
    mark = error.problem_mark
    context = f"{error.context}, " if error.context else ""
    return f"{context}{error.problem} at line {mark.line + 1}, column {mark.column + 1}"


def _validated(model: type[Any], data: dict[str, Any]) -> Any:
    try:
        return model.model_validate(data)
    except ValidationError as e:
        problems = [f"{_where(err['loc'], data)}: {err['msg']}" for err in e.errors()]
        more = f" (and {len(problems) - MAX_ERRORS_SHOWN} more)" if len(problems) > MAX_ERRORS_SHOWN else ""
        raise PlanError("the plan is malformed: " + "; ".join(problems[:MAX_ERRORS_SHOWN]) + more) from None


def _where(loc: tuple[Any, ...], data: dict[str, Any]) -> str:
    """`calls[2] (id "x").tool` for a call's field; `steps[0].args` and such as they are."""
    text, node = "", data
    for depth, step in enumerate(loc):
        if isinstance(step, int):
            text += f"[{step}]"
        else:
            text += f".{step}" if text else str(step)
        node = node[step] if isinstance(node, (dict, list)) and _has(node, step) else None
        if depth == 1 and loc[0] in ("calls", "steps") and isinstance(node, dict) and node.get("id"):
            text += f' (id "{node["id"]}")'
    return text or "the plan"


def _has(node: dict[str, Any] | list[Any], step: Any) -> bool:
    if isinstance(node, dict):
        return step in node
    return isinstance(step, int) and -len(node) <= step < len(node)


def _substitute(value: Any, workspace: str) -> Any:
    if isinstance(value, str):
        return _WORKSPACE.sub(lambda _: workspace, value)
    if isinstance(value, list):
        return [_substitute(v, workspace) for v in value]
    if isinstance(value, dict):
        return {k: _substitute(v, workspace) for k, v in value.items()}
    return value
