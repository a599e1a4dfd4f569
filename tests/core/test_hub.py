"""The console for every workspace, asked by the real hook command from projects that have no console of their own."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from core import RunStatus
from core.hub import Answer, Hub
from core.outside import install
from core.policy.settings import config_dir
from core.settings import state_root
from tests.conftest import run, wait_until


def _hook(project: Path, name: str = "PreToolUse", tool: str = "Read", **tool_input: Any
          ) -> subprocess.CompletedProcess[str]:
    """Belay's installed hook command with one Claude Code event, in `project` ($CLAUDE_PROJECT_DIR)."""
    event = {"session_id": "sess-hub-1", "hook_event_name": name, "cwd": str(project), "tool_name": tool,
             "tool_use_id": f"toolu_{name}_{tool}", "tool_input": tool_input or {"file_path": str(project / "a.txt")}}
    env = {k: v for k, v in os.environ.items() if k not in ("BELAY_HOOK_WAIT", "BELAY_HOOK_MAX_WAIT")}
    env["CLAUDE_PROJECT_DIR"] = str(project)
    return subprocess.run(install.hook_command(state_root(), config_dir()), shell=True, input=json.dumps(event),
                          capture_output=True, text=True, cwd=project, env=env, timeout=60)


def _decision(done: subprocess.CompletedProcess[str]) -> tuple[str, str]:
    assert done.returncode == 0, done.stderr
    specific = json.loads(done.stdout)["hookSpecificOutput"]
    return specific["permissionDecision"], specific.get("permissionDecisionReason", "")


def _project(tmp_path: Path, name: str) -> Path:
    project = tmp_path / name
    project.mkdir()
    (project / "a.txt").write_text("hello\n")
    return project


def test_a_call_from_an_unseen_project_asks_once_then_is_supervised_in_its_own_workspace(tmp_path: Path) -> None:
    project = _project(tmp_path, "shop")
    asked: list[tuple[Path, str]] = []

    async def ask(directory: Path, agent: str) -> Answer:
        asked.append((directory, agent))
        await asyncio.sleep(0.3)  # the person reads the question; more calls arrive meanwhile
        return "supervise"

    async def scenario() -> None:
        hub = Hub(ask=ask)
        assert await hub.start()
        try:
            first = await asyncio.gather(*(asyncio.to_thread(_hook, project) for _ in range(3)))
            assert [_decision(done)[0] for done in first] == ["allow"] * 3
            assert asked == [(project.resolve(), "Claude Code")]  # three calls, one question
            console = hub.consoles[project.resolve()]
            assert console.endpoint is not None  # the workspace now has its own socket ...
            later = await asyncio.to_thread(_hook, project)
            assert _decision(later)[0] == "allow" and len(asked) == 1  # ... and is not asked about again
            # a read-only call's rows are committed (and shown) with the journal's next group, within ~5 ms
            await wait_until(lambda: len([r for r in console.timeline.runs.values() if r.tool == "Read"]) == 4,
                             what="the four reads in the timeline")
            reads = [r for r in console.timeline.runs.values() if r.tool == "Read"]
            assert len(reads) == 4 and all(r.status is RunStatus.RUNNING for r in reads)
        finally:
            await hub.close()

        again = Hub(ask=ask)  # the answer is remembered across consoles
        assert await again.start()
        try:
            assert _decision(await asyncio.to_thread(_hook, project))[0] == "allow"
            assert len(asked) == 1
        finally:
            await again.close()

    run(scenario())


def test_a_project_the_person_refused_is_refused_saying_how_to_supervise_it(tmp_path: Path) -> None:
    project = _project(tmp_path, "secret")

    async def ask(directory: Path, agent: str) -> Answer:
        return "refuse"

    async def scenario() -> None:
        hub = Hub(ask=ask)
        assert await hub.start()
        try:
            decision, reason = _decision(await asyncio.to_thread(_hook, project, tool="Write",
                                                                 file_path=str(project / "a.txt"), content="x"))
            assert decision == "deny"
            assert "you chose not to supervise" in reason and f"belay watch --workspace {project}" in reason
            assert hub.consoles == {}
            after = await asyncio.to_thread(_hook, project, name="PostToolUse")
            assert (after.returncode, after.stdout) == (0, "")  # nothing left to stop: quiet
        finally:
            await hub.close()
        assert (project / "a.txt").read_text() == "hello\n"

    run(scenario())


def test_without_a_window_to_ask_an_unseen_project_is_refused_not_supervised_blindly(tmp_path: Path) -> None:
    project = _project(tmp_path, "other")

    async def scenario() -> None:
        hub = Hub()
        assert await hub.start()
        try:
            decision, reason = _decision(await asyncio.to_thread(_hook, project))
        finally:
            await hub.close()
        assert decision == "deny" and "has not been told whether to supervise" in reason

    run(scenario())


def test_a_subfolder_of_a_supervised_workspace_is_its_workspace_and_a_second_hub_does_not_start(
        tmp_path: Path) -> None:
    project = _project(tmp_path, "mono")
    (project / "pkg").mkdir()

    async def scenario() -> None:
        hub = Hub()
        assert await hub.start()
        try:
            console = await hub.open(project)
            assert console is not None
            assert not await Hub().start()  # one console for every workspace per user
            # The workspace's own socket answers calls from its subfolders (the hook client looks there first).
            assert _decision(await asyncio.to_thread(_hook, project / "pkg"))[0] == "allow"
            assert hub.console_for((project / "pkg").resolve()) is console
        finally:
            await hub.close()

    run(scenario())


@pytest.mark.parametrize("answer", ["supervise", "refuse"])
def test_answers_are_remembered_per_directory(tmp_path: Path, answer: Answer) -> None:
    from core.hub import Remembered
    remembered = Remembered(tmp_path / "supervised.json")
    remembered.remember(tmp_path / "a", answer)
    assert remembered.answer(tmp_path / "a" / "deep") == answer
    assert remembered.answer(tmp_path / "b") is None
    remembered.remember(tmp_path / "a", "refuse" if answer == "supervise" else "supervise")
    assert remembered.answer(tmp_path / "a") != answer
