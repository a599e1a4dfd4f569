"""The real Claude Code CLI at the edges of a console's life: started while its console is still starting (or
cannot start), and killed while a person has not yet answered its call (issue 36, "No hang at the edges").

The CLI talks to a scripted model (tests/integration/fake_anthropic.py) and reaches Belay through the hooks
`belay hooks install` writes.  It runs in a pids cgroup of its own where one can be made (else under an
RLIMIT_NPROC budget), and everything left in it is killed when the test ends: a hook command orphaned by the
kill included.  The waits below only bound loops; nothing asserts how fast anything was.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import resource
import signal
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from core import Console, Hub, RunStatus
from core.hub import Answer
from core.outside.intercept import GONE, GONE_ASKED
from core.process.limits import PidsGroup, ProcessLimit, detect_limit, nproc_for
from core.recorder import Recorder
from tests.conftest import run, running
from tests.integration.fake_anthropic import ScriptedModel, ToolCall, Turn, answers, bundled_cli, result_text
from tests.integration.test_claude_code import _hooks_settings

LIMIT = 512
"""Processes the CLI (and its hook commands) may have at once: far above what it starts, far below a runaway."""
BOUND_S = 60.0
"""What each wait is bounded by: a loop's end, never an assertion of speed."""


async def _until(predicate: Callable[[], object], what: str, log: Path | None = None) -> None:
    deadline = time.monotonic() + BOUND_S
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"no {what} within {BOUND_S:g} s" + (f":\n{log.read_text()[-3000:]}" if log else ""))
        await asyncio.sleep(0.05)


@contextlib.asynccontextmanager
async def _claude(model: ScriptedModel, workspace: Path, settings: Path,
                  log: Path) -> AsyncIterator[asyncio.subprocess.Process]:
    """The CLI running in `workspace`, limited in processes; on the way out it and all it left are killed."""
    limit = await asyncio.to_thread(detect_limit, LIMIT, bwrap=None)
    group = await asyncio.to_thread(PidsGroup.create, limit) if limit.kind == "cgroup" else None
    nproc = await asyncio.to_thread(nproc_for, ProcessLimit(kind="user-rlimit", maximum=LIMIT)) \
        if group is None and os.getuid() != 0 else None

    def limited() -> None:  # between fork and exec: only the rlimit, set by the kernel
        if nproc is not None:
            resource.setrlimit(resource.RLIMIT_NPROC, (nproc, resource.getrlimit(resource.RLIMIT_NPROC)[1]))

    command = [str(bundled_cli()), "-p", "do the scripted work", "--output-format", "stream-json", "--verbose",
               "--settings", str(settings)]
    with log.open("wb") as out:
        cli = await asyncio.create_subprocess_exec(*(group.join_argv() if group else []), *command, cwd=workspace,
                                                   env=model.env(), stdin=asyncio.subprocess.DEVNULL, stdout=out,
                                                   stderr=asyncio.subprocess.STDOUT, start_new_session=True,
                                                   preexec_fn=limited if nproc is not None else None)
        try:
            yield cli
        finally:
            if group is not None:
                await asyncio.to_thread(group.remove)
            with contextlib.suppress(ProcessLookupError):
                os.killpg(cli.pid, signal.SIGKILL)  # started here, in a session of its own: not a sandbox's pid
            for pid in running("hook_client.py", str(workspace)):  # no cgroup: an orphaned hook command
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            await cli.wait()


def _hook_commands() -> list[int]:
    return running("hook_client.py", "--state-root")


@pytest.mark.timeout(180)
@pytest.mark.allow_warning_logs  # the console logs the withdrawn approval and the call its agent never ended
def test_killing_claude_code_while_its_call_awaits_approval_withdraws_it_and_closes_its_open_calls(
        workspace: Path, tmp_path: Path) -> None:
    """SIGKILL to Claude Code alone (as `kill -9 <pid>` does): its hook command, orphaned, still waits on the
    console; the question is withdrawn all the same, and the sub-agent's `Agent` call, whose PostToolUse will
    never come, is closed."""
    turns = [Turn(tools=[ToolCall("Agent", {"description": "Touch", "prompt": "SUBTASK: touch a file",
                                            "subagent_type": "general-purpose", "run_in_background": False},
                                  id="k_agent")]),
             Turn(text="unreachable", when=answers("k_agent"))]
    agents = {"SUBTASK:": [Turn(tools=[ToolCall("Bash", {"command": "touch asked.txt", "description": "touch"},
                                                id="k_bash")]),
                           Turn(text="unreachable")]}
    settings, log = _hooks_settings(tmp_path), tmp_path / "cli.log"

    async def scenario() -> None:
        async with Console(workspace) as console:
            console.register_approver("a person who does not answer in time")
            with ScriptedModel(turns, agents=agents) as model:
                async with _claude(model, workspace, settings, log) as cli:
                    await _until(console.pending_approvals, "question", log)
                    [asked] = console.pending_approvals()
                    assert asked.tool == "Bash" and _hook_commands(), log.read_text()[-3000:]
                    os.kill(cli.pid, signal.SIGKILL)
                    await cli.wait()
                    await _until(lambda: not console.pending_approvals(), "withdrawal")
                    interceptor = console.interceptor
                    assert interceptor is not None
                    await _until(lambda: not interceptor.waiting, "end of the open Agent call")
            records = {r.tool: r for r in await console.history()}
            bash, agent = records["Bash"], records["Agent"]
            assert bash.status == RunStatus.INTERRUPTED and bash.output == f"Withdrawn: {GONE_ASKED}.", bash.output
            assert console.timeline.runs[bash.call_id].status == RunStatus.INTERRUPTED  # the window's inbox lets go
            assert agent.status == RunStatus.INTERRUPTED and agent.error is not None and agent.error.message == GONE
            assert not (workspace / "asked.txt").exists()

    run(scenario())


class _Starting(Console):
    """A console whose opening waits, past the workspace's lock, until the test lets it go on (or fail)."""

    go: asyncio.Future[str]
    """Its result: "" to go on opening, else the error to fail with."""

    async def _open(self, recorder: Recorder) -> None:
        problem = await self.go
        if problem:
            raise OSError(problem)
        await super()._open(recorder)


def _call_hooks_only(tmp_path: Path) -> Path:
    """Belay's hooks without SessionStart: the first event to reach the starting console is then the call
    itself, which the test lets wait there (a SessionStart waiting first would hold the session back)."""
    settings = _hooks_settings(tmp_path)
    written = json.loads(settings.read_text())
    del written["hooks"]["SessionStart"]
    settings.write_text(json.dumps(written))
    return settings


def _bash_turns(command: str) -> list[Turn]:
    return [Turn(tools=[ToolCall("Bash", {"command": command, "description": "write"}, id="s_bash")]),
            Turn(text="Done.", when=answers("s_bash"))]


async def _approving(console: Console) -> None:
    while True:
        for request in console.pending_approvals():
            console.approve(request.call_id)
        await asyncio.sleep(0.02)


@pytest.mark.timeout(180)
def test_claude_code_started_while_its_console_starts_is_answered_once_it_serves(workspace: Path,
                                                                                  tmp_path: Path) -> None:
    """No hub: the hook command finds the workspace held by a console with no socket yet, and waits for it."""
    settings, log = _call_hooks_only(tmp_path), tmp_path / "cli.log"

    async def scenario() -> None:
        console = _Starting(workspace)
        console.go = asyncio.get_running_loop().create_future()
        console.register_approver("test")
        opening = asyncio.ensure_future(console.open())
        approving = asyncio.ensure_future(_approving(console))
        try:
            with ScriptedModel(_bash_turns("echo early > early.txt")) as model:
                async with _claude(model, workspace, settings, log) as cli:
                    await _until(_hook_commands, "hook command waiting for the console", log)
                    console.go.set_result("")
                    await opening
                    await asyncio.wait_for(cli.wait(), BOUND_S)
                told = next(r.tool_result("s_bash") for r in model.message_requests() if r.tool_result("s_bash"))
            assert cli.returncode == 0 and told is not None and not told.get("is_error"), result_text(told or {})
            [bash] = [r for r in await console.history() if r.tool == "Bash"]
            assert bash.status == RunStatus.DONE and bash.decision is not None and bash.decision.by == "person"  # journaled and asked about
            assert (workspace / "early.txt").read_text() == "early\n"
        finally:
            approving.cancel()
            await asyncio.wait([approving, opening])
            await console.close()

    run(scenario())


@pytest.mark.timeout(180)
def test_a_console_that_cannot_start_refuses_claude_codes_call_saying_why(workspace: Path, tmp_path: Path) -> None:
    settings, log = _call_hooks_only(tmp_path), tmp_path / "cli.log"

    async def scenario() -> None:
        console = _Starting(workspace)
        console.go = asyncio.get_running_loop().create_future()
        opening = asyncio.ensure_future(console.open())
        try:
            with ScriptedModel(_bash_turns("echo never > never.txt")) as model:
                async with _claude(model, workspace, settings, log) as cli:
                    await _until(_hook_commands, "hook command waiting for the console", log)
                    console.go.set_result("the journal's disk is full (a test's)")
                    await asyncio.wait([opening])
                    await asyncio.wait_for(cli.wait(), BOUND_S)
                told = next(r.tool_result("s_bash") for r in model.message_requests() if r.tool_result("s_bash"))
            assert told is not None and told.get("is_error"), log.read_text()[-3000:]
            assert "the journal's disk is full (a test's)" in result_text(told), result_text(told)
            assert not (workspace / "never.txt").exists()
        finally:
            await asyncio.wait([opening])
            with contextlib.suppress(OSError):
                opening.result()
            await console.close()

    run(scenario())


@pytest.mark.timeout(180)
def test_claude_code_started_while_the_hub_opens_its_workspace_is_answered_there_not_asked_about(
        tmp_path: Path) -> None:
    """`belay watch --workspace` starting: its hub serves, the workspace's console is still opening (its window
    not shown yet).  The call waits for that console, is journaled there and asked about; the person is not
    asked whether to supervise a folder being opened for them (that question went to a window not on screen)."""
    project = tmp_path / "project"
    project.mkdir()
    settings, log = _call_hooks_only(tmp_path), tmp_path / "cli.log"
    questions: list[Path] = []

    async def hidden_window(directory: Path, agent: str) -> Answer | None:
        questions.append(directory)
        await asyncio.Event().wait()  # nobody sees it
        return None

    async def scenario() -> None:
        go: asyncio.Future[str] = asyncio.get_running_loop().create_future()

        def slow(root: Path) -> Console:
            console = _Starting(root, holder="window")
            console.go = go
            console.register_approver("test")
            return console

        hub = Hub(ask=hidden_window, console_factory=slow)
        assert await hub.start()
        opening = asyncio.ensure_future(hub.open(project))
        approving: asyncio.Future[None] | None = None
        try:
            await _until(lambda: hub._opening, "opening under way")  # noqa: SLF001 - the moment to start it
            with ScriptedModel(_bash_turns("echo early > early.txt")) as model:
                async with _claude(model, project, settings, log) as cli:
                    await _until(_hook_commands, "hook command waiting for the hub", log)
                    go.set_result("")
                    console = await opening
                    assert console is not None
                    approving = asyncio.ensure_future(_approving(console))
                    await asyncio.wait_for(cli.wait(), BOUND_S)
                told = next(r.tool_result("s_bash") for r in model.message_requests() if r.tool_result("s_bash"))
            assert cli.returncode == 0 and told is not None and not told.get("is_error"), result_text(told or {})
            assert questions == []
            [bash] = [r for r in await console.history() if r.tool == "Bash"]
            assert bash.status == RunStatus.DONE and bash.decision is not None and bash.decision.by == "person"
            assert (project / "early.txt").read_text() == "early\n"
        finally:
            if approving is not None:
                approving.cancel()
                await asyncio.wait([approving])
            if not go.done():
                go.set_result("")
            await asyncio.wait([opening])
            await hub.close()

    run(scenario())
