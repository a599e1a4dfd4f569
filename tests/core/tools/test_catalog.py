"""The tools a console offers: each under its own name, each schema agents see agreeing with what is accepted."""

from __future__ import annotations

import json
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from core.errors import ErrorKind, ToolError
from core.outside.agents import SERVED_TOOLS
from core.process.shells import ShellManager
from core.run import arguments
from core.tools.base import Tool
from core.tools.bash import BashSettings
from core.tools.catalog import default_tools, shell_tools
from core.tools.registry import ToolRegistry

EXAMPLES: dict[str, dict[str, Any]] = {
    "Read": {"file_path": "/w/a.py"},
    "Write": {"file_path": "/w/a.py", "content": "x = 1\n"},
    "Edit": {"file_path": "/w/a.py", "old_string": "1", "new_string": "2"},
    "MultiEdit": {"file_path": "/w/a.py", "edits": [{"old_string": "1", "new_string": "2"}]},
    "NotebookRead": {"notebook_path": "/w/n.ipynb"},
    "NotebookEdit": {"notebook_path": "/w/n.ipynb", "new_source": "print(1)"},
    "LS": {"path": "/w"},
    "Glob": {"pattern": "**/*.py"},
    "Grep": {"pattern": "def main"},
    "git_status": {},
    "git_diff": {},
    "git_commit": {"message": "Fix rounding"},
    "Task": {"description": "Fix the tests"},
    "Bash": {"command": "ls"},
    "BashOutput": {"bash_id": "bash_1"},
    "KillShell": {"shell_id": "bash_1"},
}
"""Every tool a console offers, in the order agents see them, with arguments it accepts."""
JSON_VALUES: dict[str, object] = {"string": "7", "integer": 7, "number": 7.5, "boolean": True, "array": ["7"],
                                  "object": {"k": "7"}, "null": None}


def console_tools() -> list[Tool]:
    """What a console registers (core/console.py): the default tools and the shell tools."""
    return [*default_tools(), *shell_tools(BashSettings(), ShellManager(lambda event: None))]


def accepted(tool: Tool, raw: dict[str, Any]) -> bool:
    try:
        arguments.validate(tool, raw)
    except ToolError as e:
        assert e.kind == ErrorKind.INVALID_ARGS
        return False
    return True


def test_a_console_offers_the_file_git_and_shell_tools_and_task_each_under_its_own_name() -> None:
    registry = ToolRegistry(console_tools())  # a second tool of one name would be refused here
    assert registry.names() == list(EXAMPLES)
    assert SERVED_TOOLS <= set(registry.names())  # everything `belay mcp-serve` offers exists
    again = default_tools()
    assert not {id(tool) for tool in again} & {id(tool) for tool in registry}  # each console gets its own


@pytest.mark.parametrize("name", list(EXAMPLES))
def test_the_schema_agents_see_accepts_and_refuses_what_the_pipeline_does(name: str) -> None:
    tool = ToolRegistry(console_tools()).get(name)
    assert tool is not None
    schema = tool.Args.model_json_schema(by_alias=True)
    Draft202012Validator.check_schema(schema)
    assert json.loads(json.dumps(schema)) == schema  # it can be sent as it is
    assert schema["type"] == "object" and schema["additionalProperties"] is False
    shown = Draft202012Validator(schema)

    example = EXAMPLES[name]
    variants = [example, {**example, "unexpected": 1}]
    variants += [{k: v for k, v in example.items() if k != key} for key in schema.get("required", [])]
    variants += [{**example, prop: value} for prop in schema["properties"] for value in JSON_VALUES.values()]
    verdicts = [(raw, shown.is_valid(raw)) for raw in variants]
    assert verdicts == [(raw, accepted(tool, raw)) for raw in variants]
    assert verdicts[0][1] and not verdicts[1][1]
