"""Reading a plan for `belay run`: a batch of calls, a bare list of calls, or a scripted agent.

A plan is JSON or YAML, told apart by its content (not its name).  Every
problem is a `PlanError` whose message is one paragraph a person can act
on; nothing runs until the whole plan has been read.  `{workspace}` in any
string becomes the workspace's absolute path, as in scripts (`${...}`
references are left alone for the batch to resolve), and a relative path
given to one of Belay's file tools (`file_path`, `path`, `notebook_path`)
is taken as relative to the workspace: `src/app.py` is `<workspace>/src/app.py`
(one that leads outside, `../x`, is refused by the tool as before).

A plan may come from anywhere, so reading it is bounded: at most
`MAX_PLAN_BYTES`, at most `MAX_DEPTH` levels of nesting (checked while
YAML is composed, before Python's recursion could fail), no YAML anchors or
aliases (a few lines of them expand to billions of nodes: refused on the
first one, before anything is built), and only text that is valid Unicode
(a JSON `\\ud800` escape alone is not).
"""

from __future__ import annotations

import json
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import AliasChoices, BaseModel, ConfigDict, Field, ValidationError

from core import MAX_DOCUMENT_DEPTH, BatchCall, Script, StrictLoader, load_yaml

_WORKSPACE = re.compile(r"(?<!\$)\{workspace\}")
"""`{workspace}`, but not `${workspace}` (a reference to a call named workspace)."""
MAX_ERRORS_SHOWN = 5
MAX_PLAN_BYTES = 1 << 20
"""A plan is a list of calls, not their data: a megabyte is thousands of them."""
MAX_DEPTH = MAX_DOCUMENT_DEPTH
"""Levels of nesting (mappings and lists); a script's Task steps nest about five per sub-agent."""
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
    data = _anchored(_substitute(_parse(_read(Path(path))), str(workspace)), str(workspace))
    if data is None:  # YAML with nothing but comments
        raise PlanError(f"the plan {path} is empty")
    if isinstance(data, list):
        return BatchPlan(name=_name(path), calls=tuple(_validated(_BatchFile, {"calls": data}).calls))
    if not isinstance(data, dict):
        raise PlanError(f"the plan must be a mapping (a batch with `calls`, or a script with `steps`) or a list "
                        f"of calls, not {type(data).__name__}")
    if "steps" in data:
        return ScriptPlan(_validated(Script, data))
    if "calls" not in data and "batch" not in data:
        raise PlanError(f"the plan has neither `calls` (or `batch`), nor `steps`; its keys are "
                        f"{', '.join(map(str, data)) or 'none'}. A batch is {{calls: [{{id, tool, args}}, ...]}}, "
                        f"a scripted agent {{name, steps: [{{tool, args}}, ...]}}")
    batch = _validated(_BatchFile, {"name": _name(path), **data})
    return BatchPlan(name=batch.name, calls=tuple(batch.calls), fail_fast=batch.fail_fast,
                     concurrency=batch.concurrency)


def _name(path: str | Path) -> str:
    """The plan's file name, the batch's name unless it gives one: escaped where it is not UTF-8."""
    return Path(path).stem.encode("utf-8", "backslashreplace").decode()


def _read(path: Path) -> str:
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):  # a FIFO or a device would never end, or block
            raise PlanError(f"the plan {path} is not a file")
        with open(path, "rb") as f:
            raw = f.read(MAX_PLAN_BYTES + 1)
    except OSError as e:
        raise PlanError(f"cannot read the plan {path}: {e.strerror or e}") from None
    if len(raw) > MAX_PLAN_BYTES:
        raise PlanError(f"the plan {path} is larger than {MAX_PLAN_BYTES // 1024} KB; a plan lists calls, "
                        "and content it needs can be read from files by the calls themselves")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise PlanError(f"the plan {path} is not UTF-8 text (byte {raw[e.start]:#04x} at offset {e.start})") from None
    if not text.strip():
        raise PlanError(f"the plan {path} is empty")
    return text


def _parse(text: str) -> Any:
    """JSON when it parses as JSON, else YAML; the error shown is the one for what it looks like."""
    try:
        data = json.loads(text)
    except RecursionError:
        raise PlanError(_too_deep("")) from None
    except json.JSONDecodeError as json_error:
        data = _parse_yaml(text, json_error)
    except ValueError as e:  # an integer of thousands of digits (Python refuses to convert them)
        raise PlanError(_too_long(e)) from None
    _check_tree(data, "", 0)
    return data


def _parse_yaml(text: str, json_error: json.JSONDecodeError) -> Any:
    try:
        return load_yaml(text, _PlanLoader)
    except yaml.YAMLError as yaml_error:
        if text.lstrip()[:1] in ("{", "["):
            raise PlanError(f"the plan is not valid JSON: {json_error.msg} at line {json_error.lineno}, "
                            f"column {json_error.colno}") from None
        raise PlanError(f"the plan is not valid YAML: {_yaml_problem(yaml_error)}") from None
    except PlanError:
        raise
    except ValueError as e:
        raise PlanError(_too_long(e)) from None


class _PlanLoader(StrictLoader):
    """The core's strict YAML loader (no aliases, bounded nesting), saying "plan" in its refusals."""

    def refused_alias(self, line: int) -> Exception:
        return PlanError(f"plans may not use YAML aliases or anchors (*name, &name; line {line}): write each "
                         "value out where it is used")

    def too_deep(self, line: int) -> Exception:
        return PlanError(_too_deep(f" (line {line})"))


def _check_tree(value: Any, where: str, depth: int) -> None:
    """Nesting within `MAX_DEPTH` (a JSON plan is only checked once parsed) and text that is Unicode."""
    if isinstance(value, str):
        _check_text(value, where)
        return
    if not isinstance(value, (dict, list)):
        return
    if depth >= MAX_DEPTH:
        raise PlanError(_too_deep(f" (at {where})"))
    items = value.items() if isinstance(value, dict) else enumerate(value)
    for key, item in items:
        if isinstance(key, str):
            _check_text(key, where or "the plan")
        _check_tree(item, f"{where}[{key}]" if isinstance(key, int) else f"{where}.{key}" if where else str(key),
                    depth + 1)


def _check_text(text: str, where: str) -> None:
    bad = next((c for c in text if "\ud800" <= c <= "\udfff"), None)
    if bad is not None:
        raise PlanError(f"the plan holds a lone surrogate (\\u{ord(bad):04x}) in {where or 'a value'}: text in a "
                        "plan must be valid Unicode (a \\uD800-\\uDFFF escape is only valid as half of a pair)")


def _too_deep(where: str) -> str:
    return f"the plan nests more than {MAX_DEPTH} levels deep{where}; plans are lists of calls, not deep trees"


def _too_long(error: ValueError) -> str:
    return f"the plan cannot be read: {error}".split(";")[0]  # what follows names a Python setting


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
    text = ""
    node: object = data
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


_PATH_ARGS = ("file_path", "path", "notebook_path")
"""The arguments of Belay's file tools that name a path (what the policy resolves, core.policy.decide)."""


def _anchored(value: Any, workspace: str) -> Any:
    """`value` with each call's relative path arguments joined to the workspace: in every mapping that names a
    tool (`tool` or `toolName`) other than an MCP server's, and gives it `args` (or `parameters`), wherever
    it sits (a batch's calls, a script's steps, a sub-agent's steps inside its Task)."""
    if isinstance(value, list):
        return [_anchored(v, workspace) for v in value]
    if not isinstance(value, dict):
        return value
    anchored = {k: _anchored(v, workspace) for k, v in value.items()}
    tool = anchored.get("tool", anchored.get("toolName"))
    for key in ("args", "parameters"):
        args = anchored.get(key)
        if isinstance(tool, str) and not tool.startswith("mcp__") and isinstance(args, dict):
            anchored[key] = {name: os.path.join(workspace, given) if name in _PATH_ARGS and _relative(given) else given
                             for name, given in args.items()}
    return anchored


def _relative(given: object) -> bool:
    """A relative path as written: not absolute, not `~`, and not a `${...}` reference the batch resolves."""
    return isinstance(given, str) and bool(given) and not given.startswith(("/", "~")) and "${" not in given


def _substitute(value: Any, workspace: str) -> Any:
    if isinstance(value, str):
        return _WORKSPACE.sub(lambda _: workspace, value)
    if isinstance(value, list):
        return [_substitute(v, workspace) for v in value]
    if isinstance(value, dict):
        return {k: _substitute(v, workspace) for k, v in value.items()}
    return value
