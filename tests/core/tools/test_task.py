"""The Task tool: a sub-agent started through the context's spawn_agent, its report handed back."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.errors import ErrorKind, ToolError
from core.ids import AgentId, CallId
from core.paths import Workspace
from core.run import arguments
from core.tools.base import ReadState, SubAgentRequest, ToolContext, ToolOutput
from core.tools.task import TaskArgs, TaskTool
from tests.conftest import run


def task_args(**raw: object) -> TaskArgs:
    args = arguments.validate(TaskTool(), dict(raw))
    assert isinstance(args, TaskArgs)
    return args


def test_a_task_asks_the_console_for_a_sub_agent_and_returns_its_report(tmp_path: Path) -> None:
    asked: list[SubAgentRequest] = []

    async def spawn_agent(request: SubAgentRequest) -> ToolOutput:
        asked.append(request)
        return ToolOutput("fixed 2 tests", {"agent": "sub-1"})

    ctx = ToolContext(Workspace(tmp_path), AgentId("lead"), CallId("call-7"), ReadState(), spawn_agent=spawn_agent)
    steps = [{"tool": "Read", "args": {"file_path": f"{tmp_path}/a.py"}}]
    args = task_args(description="Fix the tests", prompt="Make tests pass", subagent_type="fixer",
                     tools=["Read", "Edit"], steps=steps)
    output = run(TaskTool().run(args, ctx))
    assert output == ToolOutput("fixed 2 tests", {"agent": "sub-1"})
    assert asked == [SubAgentRequest(call_id=CallId("call-7"), description="Fix the tests", prompt="Make tests pass",
                                     subagent_type="fixer", tools=("Read", "Edit"), steps=tuple(steps))]

    run(TaskTool().run(task_args(description="Look around"), ctx))
    assert asked[1].subagent_type == "general-purpose"
    assert asked[1].tools is None  # not an empty tuple: the parent's tools, not none at all
    assert asked[1].prompt == "" and asked[1].steps == ()


def test_an_agent_that_cannot_start_sub_agents_gets_a_clear_refusal(tmp_path: Path) -> None:
    ctx = ToolContext(Workspace(tmp_path), AgentId("lead"), CallId("call-1"), ReadState())
    with pytest.raises(ToolError) as refused:
        run(TaskTool().run(task_args(description="Fix the tests"), ctx))
    assert refused.value.kind == ErrorKind.PERMISSION
    assert refused.value.info.message == "this agent cannot start sub-agents"


def test_the_timeline_shows_the_kind_of_sub_agent_and_its_short_description(tmp_path: Path) -> None:
    ws = Workspace(tmp_path)
    tool = TaskTool()
    assert tool.summary(task_args(description="Fix the tests"), ws) == "general-purpose: Fix the tests"
    assert tool.summary(task_args(description="Audit deps", subagent_type="security"), ws) == "security: Audit deps"
    assert tool.writes(task_args(description="Fix the tests"), ws) == frozenset({""})  # its sub-agent may write anything


@pytest.mark.parametrize(("raw", "problem"), [
    ({"prompt": "no description"}, "description: Field required"),
    ({"description": ""}, "description: String should have at least 1 character"),
    ({"description": "x" * 201}, "description: String should have at most 200 characters"),
    ({"description": "ok", "tools": "Read"}, "tools: Input should be a valid list"),
    ({"description": "ok", "model": "big"}, "model: Extra inputs are not permitted"),
])
def test_a_task_needs_a_short_description_and_well_formed_arguments(raw: dict[str, object], problem: str) -> None:
    with pytest.raises(ToolError) as refused:
        task_args(**raw)
    assert refused.value.kind == ErrorKind.INVALID_ARGS
    assert problem in refused.value.info.message
