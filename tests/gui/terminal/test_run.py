"""`belay run PLAN` in this process (gui.terminal.run): what it prints, its exit code, and the plans and options
it refuses before anything runs (the runs as a subprocess, with prompts, are in tests/integration)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from core import ServerState, ServerStatus
from gui.terminal.plans import load_plan
from gui.terminal.run import BadRun, RunOptions, _check_servers, run_plan
from gui.terminal.run_log import Auto


def _plan(tmp_path: Path, text: str, name: str = "plan.yaml") -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def _run(options: RunOptions) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run_plan(options, out, err)
    return code, out.getvalue(), err.getvalue()


WRITE_THEN_READ = ("calls:\n"
                   "  - {id: notes, tool: Write, args: {file_path: '{workspace}/NOTES.md', content: seen}}\n"
                   "  - {id: again, tool: Read, args: {file_path: '{workspace}/NOTES.md'}, depends_on: [notes]}\n")


def test_a_plan_approved_by_auto_runs_and_ends_with_its_summary(workspace: Path, tmp_path: Path,
                                                                state_dir: Path) -> None:
    code, out, err = _run(RunOptions(plan=_plan(tmp_path, WRITE_THEN_READ), workspace=str(workspace),
                                     state_dir=str(state_dir), auto="approve"))
    assert code == 0, out + err
    assert (workspace / "NOTES.md").read_text() == "seen"
    lines = [line.split("] ", 1)[-1] for line in out.splitlines()]
    assert lines.index("▶ notes  Write NOTES.md") < lines.index("▶ again  Read NOTES.md")
    assert "? notes  approved by --auto approve" in "\n".join(lines)
    assert lines[-2] == "Summary  plan: 2 calls, 2 succeeded, 0 failed, 0 skipped, 0 cache hits"
    assert lines[-1].startswith("         2 levels, max parallelism 1 (plan), max running 1 (observed), ")


def test_a_denied_call_makes_the_exit_code_1_and_json_ends_with_the_summary(workspace: Path, tmp_path: Path,
                                                                            state_dir: Path) -> None:
    code, out, _ = _run(RunOptions(plan=_plan(tmp_path, WRITE_THEN_READ), workspace=str(workspace),
                                   state_dir=str(state_dir), auto="deny", as_json=True))
    assert code == 1 and not (workspace / "NOTES.md").exists()
    summary = json.loads(out.splitlines()[-1])
    assert (summary["kind"], summary["failed"], summary["skipped"], summary["exit_code"]) == ("summary", 1, 1, 1)
    assert summary["workspace"] == str(workspace)


@pytest.mark.parametrize(("as_json", "auto", "where", "said"), [
    (True, None, "", "belay run: --json never prompts, so it needs --auto approve or --auto deny\n"),
    (False, "approve", "missing", "is not a directory\n"),
], ids=["json that would prompt", "no workspace"])
def test_options_that_cannot_work_exit_2_before_anything_runs(as_json: bool, auto: Auto | None, where: str, said: str,
                                                              workspace: Path, tmp_path: Path,
                                                              state_dir: Path) -> None:
    code, out, err = _run(RunOptions(plan=_plan(tmp_path, WRITE_THEN_READ), workspace=str(workspace / where),
                                     state_dir=str(state_dir), auto=auto, as_json=as_json))
    assert code == 2 and out == "" and err.startswith("belay run: ") and err.endswith(said)
    assert not (workspace / "NOTES.md").exists()


def test_batch_options_on_a_scripted_agent_are_said_to_have_no_effect(workspace: Path, tmp_path: Path,
                                                                      state_dir: Path) -> None:
    script = _plan(tmp_path, "name: reader\nsteps:\n  - {tool: Read, args: {file_path: '{workspace}/README.md'}}\n")
    code, out, err = _run(RunOptions(plan=script, workspace=str(workspace), state_dir=str(state_dir),
                                     auto="approve", fail_fast=True))
    assert code == 0, out + err
    assert err == ("belay run: note: --fail-fast and --concurrency apply to batches; a scripted agent runs its "
                   "steps one by one and goes on after a failed step\n")
    assert "Summary  reader: 1 call, 1 succeeded" in out


DOWN = ServerStatus(name="tickets", state=ServerState.FAILED, reason="it said: TICKETS_TOKEN is not set")
UP = ServerStatus(name="docs", state=ServerState.READY, tools=2)


@pytest.mark.parametrize("text", [
    "calls:\n  - {id: t, tool: mcp__tickets__open, args: {}}\n",
    "name: s\nsteps:\n  - batch:\n      calls:\n        - {id: t, tool: mcp__tickets__open, args: {}}\n",
    "name: s\nsteps:\n  - tool: Task\n    args:\n      description: d\n      subagent_type: helper\n"
    "      prompt: p\n      steps: [{tool: mcp__tickets__open, args: {}}]\n",
], ids=["a batch's call", "a script's batch", "a sub-agent's step"])
def test_a_plan_that_calls_a_server_that_did_not_start_is_refused_naming_both(text: str, tmp_path: Path) -> None:
    plan = load_plan(_plan(tmp_path, text), tmp_path)
    with pytest.raises(BadRun) as refused:
        _check_servers([UP, DOWN], plan, io.StringIO())
    assert str(refused.value) == ("MCP server 'tickets' failed to start: it said: TICKETS_TOKEN is not set; the plan "
                                  "calls mcp__tickets__open, so nothing was run")


def test_a_server_the_plan_does_not_call_is_only_noted(tmp_path: Path) -> None:
    plan = load_plan(_plan(tmp_path, "calls:\n  - {id: d, tool: mcp__docs__search, args: {}}\n"), tmp_path)
    err = io.StringIO()
    _check_servers([UP, DOWN, ServerStatus(name="slow", state=ServerState.STARTING)], plan, err)
    assert err.getvalue().splitlines() == [
        "belay run: note: MCP server 'tickets' failed to start: it said: TICKETS_TOKEN is not set",
        "belay run: note: MCP server 'slow' did not start in time"]
