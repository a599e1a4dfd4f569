"""The tool names: one enum whose members are the names agents, journals and the wire spell."""

from __future__ import annotations

import json

from core.events import CallQueued
from core.outside.codex_patch import ApplyPatch
from core.tools.bash import BashOutputTool, BashTool, KillShellTool
from core.tools.git import GitCommit, GitDiff, GitStatus
from core.tools.names import ToolName
from core.tools.registry import file_tools
from core.tools.task import TaskTool


def test_every_tool_of_belays_is_named_by_a_member_spelled_as_agents_know_it() -> None:
    tools = [*file_tools(), BashTool, BashOutputTool, KillShellTool, TaskTool, ApplyPatch, GitStatus, GitDiff, GitCommit]
    names = [tool.name for tool in tools]
    assert all(isinstance(name, ToolName) for name in names)
    assert {"Read", "Write", "Edit", "MultiEdit", "NotebookEdit", "Bash", "Task", "apply_patch"} <= set(names)


def test_a_member_is_its_string_in_comparisons_keys_json_and_events() -> None:
    assert ToolName.BASH == "Bash" and "Bash" == ToolName.BASH and f"{ToolName.BASH}" == "Bash"
    assert {"Bash": 1}[ToolName.BASH] == 1 and ToolName("Bash") is ToolName.BASH
    assert json.dumps({"tool": ToolName.NOTEBOOK_EDIT}) == '{"tool": "NotebookEdit"}'
    queued = CallQueued(call_id="c1", agent_id="a1", tool=ToolName.BASH, args={}, summary="ls")
    assert type(queued.tool) is str and queued.model_dump()["tool"] == "Bash"


def test_each_agent_spells_its_own_tools_and_no_two_members_share_a_name() -> None:
    assert len({member.value for member in ToolName}) == len(ToolName)
    assert (ToolName.GEMINI_RUN_SHELL_COMMAND, ToolName.CODEX_SPAWN_AGENT) == ("run_shell_command", "spawn_agent")
