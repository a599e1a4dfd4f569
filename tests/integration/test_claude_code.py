"""The real Claude Code CLI supervised by a real Belay console through Belay's installed hooks.

The CLI (shipped in the claude-agent-sdk wheel) talks to a scripted Anthropic-Messages server on
127.0.0.1 (tests/integration/fake_anthropic.py), so it makes real tool calls offline.  Belay's hooks
are installed with `belay hooks install` semantics into a settings file passed with `--settings`;
the console runs in this test's event loop and a "person" task answers its approvals.  What is
checked is what a user would see: the calls under the right agents, the files on disk, what the
model was told, and undo.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest

from core import Console, RunStatus, install_token
from core.models.records import ChangeKind
from core.outside import install
from core.outside.intercept import GONE
from core.policy.settings import config_dir
from core.process.overlay import overlay_support
from core.settings import state_root, workspace_state_dir
from tests.conftest import run, running, wait_until
from tests.integration.fake_anthropic import ScriptedModel, ToolCall, Turn, answers, bundled_cli, result_text
from tests.integration.previewing import previewing_person

CLI_TIMEOUT = 60.0
CLI_PREFIX = "PreToolUse:Write hook error: "
"""What Claude Code puts before every PreToolUse refusal it shows the model, whatever form the hook used
(CLAUDE_CODE_HOOKS.md, 6.1): fixed text of the CLI's, which no hook answer avoids."""


def _belays_words(result: dict[str, Any]) -> str:
    """What the model was told of a refused Write, past the CLI's fixed prefix: Belay's reason alone, without
    the hook's command line, which Claude Code shows only when a hook blocks with exit 2."""
    assert result["is_error"], result
    text = result_text(result)
    assert "hook_client.py" not in text and "--state-root" not in text, text
    return text.removeprefix(CLI_PREFIX)


async def _claude(model: ScriptedModel, workspace: Path, settings: Path,
                  prompt: str = "do the scripted work") -> tuple[int, str]:
    """Run the CLI as a child of this loop (the console answers its hooks meanwhile); kill its group after."""
    command = [str(bundled_cli()), "-p", prompt, "--output-format", "stream-json", "--verbose",
               "--settings", str(settings)]
    process = await asyncio.create_subprocess_exec(*command, cwd=workspace, env=model.env(),
                                                   stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
                                                   stderr=asyncio.subprocess.PIPE, start_new_session=True)
    try:
        out, err = await asyncio.wait_for(process.communicate(), CLI_TIMEOUT)
    finally:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        await process.wait()
    return process.returncode or 0, err.decode() + out.decode()[-2000:]


def _hooks_settings(tmp_path: Path) -> Path:
    settings = tmp_path / "claude-settings.json"
    install.install(settings, install.hook_command(state_root(), config_dir()), config_dir())
    return settings


async def _person(console: Console, answers_by_file: dict[str, Any], seen: list[str]) -> None:
    """Approves what it is shown, except as `answers_by_file` says (deny with a reason, or edited content)."""
    while True:
        for request in console.pending_approvals():
            if request.call_id in seen:
                continue
            seen.append(request.call_id)
            target = str(request.args.get("file_path") or request.args.get("command") or "")
            answer = next((a for key, a in answers_by_file.items() if key in target), None)
            if isinstance(answer, tuple) and answer[0] == "deny":
                console.deny(request.call_id, answer[1])
            elif isinstance(answer, dict):
                console.approve(request.call_id, edited=answer)
            else:
                console.approve(request.call_id)
        await asyncio.sleep(0.02)


@pytest.mark.timeout(180)
def test_claude_codes_calls_and_a_sub_agents_edit_are_supervised_and_undoable(workspace: Path,
                                                                              tmp_path: Path) -> None:
    readme, usage = workspace / "README.md", workspace / "docs" / "usage.md"
    originals = {readme: readme.read_text(), usage: usage.read_text()}
    edit_readme = {"file_path": str(readme), "old_string": "# shop", "new_string": "# Shop"}
    turns = [
        Turn(tools=[ToolCall("Write", {"file_path": str(workspace / "notes.md"), "content": "notes\n"}, id="t_write")]),
        Turn(tools=[ToolCall("Edit", edit_readme, id="t_edit")], when=answers("t_write")),
        Turn(tools=[ToolCall("Bash", {"command": "echo built > build.txt", "description": "build"}, id="t_bash")],
             when=answers("t_edit")),
        Turn(tools=[ToolCall("Write", {"file_path": str(workspace / "secret.txt"), "content": "k\n"}, id="t_deny")],
             when=answers("t_bash")),
        Turn(tools=[ToolCall("Agent", {"description": "Docs", "prompt": "SUBTASK: document receipts",
                                       "subagent_type": "general-purpose", "run_in_background": False},
                             id="t_agent")], when=answers("t_deny")),
        Turn(text="All done.", when=answers("t_agent")),
    ]
    agents = {"SUBTASK:": [
        Turn(tools=[ToolCall("Read", {"file_path": str(usage)}, id="t_sub_read")]),
        Turn(tools=[ToolCall("Edit", {"file_path": str(usage), "old_string": "# Using", "new_string": "# Using shop"},
                             id="t_sub_edit")]),
        Turn(text="Documented."),
    ]}
    settings = _hooks_settings(tmp_path)
    person_says = {"secret.txt": ("deny", "no secrets in the repository"),
                   "README.md": {"README.md": "# Shop, retitled by the person\n"}}

    async def scenario() -> None:
        async with Console(workspace) as console:
            console.register_approver("test")
            person = asyncio.ensure_future(_person(console, person_says, []))
            try:
                with ScriptedModel(turns, agents=agents) as model:
                    code, output = await _claude(model, workspace, settings)
                    assert code == 0 and model.unscripted == [], output
                    denied = next(r.tool_result("t_deny") for r in model.message_requests() if r.tool_result("t_deny"))
            finally:
                person.cancel()
                await asyncio.wait([person])
            assert denied is not None and "no secrets in the repository" in _belays_words(denied)
            records = {r.args.get("file_path") or r.args.get("command") or r.tool: r for r in await console.history()}
            assert records[str(workspace / "notes.md")].status == RunStatus.DONE
            assert records[str(workspace / "secret.txt")].status == RunStatus.DENIED
            assert readme.read_text() == "# Shop, retitled by the person\n"  # the edited approval was written
            assert (workspace / "build.txt").read_text() == "built\n"
            assert [c.path for c in records["echo built > build.txt"].changes] == ["build.txt"]
            sub_edit = next(r for r in await console.history() if r.tool == "Edit" and r.args["file_path"] == str(usage))
            spawn = records["Agent"]
            agents_by_id = console.timeline.agents
            sub_agent = agents_by_id[sub_edit.agent_id]
            assert sub_agent.agent_kind == "subagent" and sub_agent.spawned_by == spawn.call_id
            assert agents_by_id[sub_agent.parent_id or ""].agent_id == spawn.agent_id  # under the session's agent
            assert "Using shop" in usage.read_text()
            for record in reversed(await console.history()):
                if any(c.restorable for c in record.changes):
                    report = await console.undo(record.call_id)
                    assert report.ok, report.message

    run(scenario())
    assert not (workspace / "notes.md").exists() and not (workspace / "build.txt").exists()
    assert not (workspace / "secret.txt").exists()
    assert readme.read_text() == originals[readme] and usage.read_text() == originals[usage]


@pytest.mark.timeout(120)
def test_with_the_console_stopped_the_hook_blocks_the_call(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    turns = [Turn(tools=[ToolCall("Write", {"file_path": str(workspace / "x.txt"), "content": "x\n"}, id="t_x")]),
             Turn(text="Could not write.", when=answers("t_x"))]
    settings = _hooks_settings(tmp_path)

    async def scenario() -> dict[str, Any]:
        with ScriptedModel(turns) as model:
            code, output = await _claude(model, workspace, settings)
            assert code == 0, output
            return next(r.tool_result("t_x") for r in model.message_requests() if r.tool_result("t_x"))

    result = run(scenario())
    assert not (workspace / "x.txt").exists()
    told = _belays_words(result)
    assert told.startswith(f"Belay: no Belay console is running for {workspace}") and "belay watch" in told, told
    assert json.loads(settings.read_text())["hooks"]["PreToolUse"][0]["hooks"][0]["onFailure"] == "block"


@pytest.mark.timeout(120)
def test_a_hung_console_blocks_the_call_after_the_silence_limit_not_claude_codes_hour(tmp_path: Path) -> None:
    """A console that accepts the hook's connection and never answers (its window hung): the call is blocked
    within seconds, and the model is told why."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    state = workspace_state_dir(workspace)
    state.mkdir(parents=True)
    install_token(config_dir())
    turns = [Turn(tools=[ToolCall("Write", {"file_path": str(workspace / "x.txt"), "content": "x\n"}, id="t_x")]),
             Turn(text="Could not write.", when=answers("t_x"))]
    settings = tmp_path / "claude-settings.json"
    install.install(settings, install.hook_command(state_root(), config_dir(), wait_s=2), config_dir())

    async def hung(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while await reader.read(65536):  # takes the event, says nothing, lets go when the hook gives up
            pass
        writer.close()

    async def scenario() -> dict[str, Any]:
        with tempfile.TemporaryDirectory(dir="/tmp") as short:
            server = await asyncio.start_unix_server(hung, path=f"{short}/c.sock")
            (state / "endpoint.sock").write_text(f"{short}/c.sock")
            try:
                with ScriptedModel(turns) as model:
                    code, output = await _claude(model, workspace, settings)  # within CLI_TIMEOUT, not an hour
                    assert code == 0, output
                    return next(r.tool_result("t_x") for r in model.message_requests() if r.tool_result("t_x"))
            finally:
                server.close()
                await server.wait_closed()

    result = run(scenario())
    assert not (workspace / "x.txt").exists()
    told = _belays_words(result)
    # Blocked by the hook's own 2 s silence limit, as it says (a handful of them: SessionStart, PreToolUse, ...).
    assert told.startswith("Belay: Belay's console did not answer within 2 s; the call was blocked"), told
    assert "Is the Belay window hung?" in told


@pytest.mark.timeout(120)
def test_a_person_slower_than_the_silence_limit_still_gets_to_approve(workspace: Path, tmp_path: Path) -> None:
    """The console's keepalives keep the hook waiting while the person thinks for longer than the limit."""
    turns = [Turn(tools=[ToolCall("Write", {"file_path": str(workspace / "slow.md"), "content": "slow\n"},
                                  id="t_slow")]),
             Turn(text="Written.", when=answers("t_slow"))]
    settings = tmp_path / "claude-settings.json"
    install.install(settings, install.hook_command(state_root(), config_dir(), wait_s=1), config_dir())

    async def slow_person(console: Console) -> None:
        while not console.pending_approvals():
            await asyncio.sleep(0.02)
        await asyncio.sleep(3)  # three silence limits
        console.approve(console.pending_approvals()[0].call_id)

    async def scenario() -> None:
        async with Console(workspace) as console:
            assert console.endpoint is not None
            console.endpoint.keepalive_s = 0.3  # under this test's 1 s silence limit
            console.register_approver("test")
            person = asyncio.ensure_future(slow_person(console))
            try:
                with ScriptedModel(turns) as model:
                    code, output = await _claude(model, workspace, settings)
                    assert code == 0 and model.unscripted == [], output
            finally:
                person.cancel()
                await asyncio.wait([person])
            assert [(r.tool, r.status) for r in await console.history()] == [("Write", RunStatus.DONE)]

    run(scenario())
    assert (workspace / "slow.md").read_text() == "slow\n"


@pytest.mark.timeout(120)
def test_a_person_denying_a_call_tells_the_model_belays_reason_as_a_decision(workspace: Path, tmp_path: Path) -> None:
    """The model reads the person's reason as Belay's decision, with nothing of a failed hook about it beyond
    the CLI's fixed prefix; the call is not run, and the model goes on."""
    turns = [Turn(tools=[ToolCall("Write", {"file_path": str(workspace / "secret.txt"), "content": "k\n"},
                                  id="t_deny")]),
             Turn(text="Understood.", when=answers("t_deny"))]
    settings = _hooks_settings(tmp_path)

    async def scenario() -> dict[str, Any]:
        async with Console(workspace) as console:
            console.register_approver("test")
            person = asyncio.ensure_future(_person(console, {"secret.txt": ("deny", "no secrets, please")}, []))
            try:
                with ScriptedModel(turns) as model:
                    code, output = await _claude(model, workspace, settings)
                    assert code == 0 and model.unscripted == [], output
                    return next(r.tool_result("t_deny") for r in model.message_requests() if r.tool_result("t_deny"))
            finally:
                person.cancel()
                await asyncio.wait([person])

    result = run(scenario())
    assert not (workspace / "secret.txt").exists()
    told = _belays_words(result)
    assert "no secrets, please" in told and "error" not in told.lower(), told


@pytest.mark.timeout(180)
def test_a_command_the_person_approved_still_runs_inside_the_wall(workspace: Path, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Security is a wall, not a parser: a command whose effects the policy cannot see (here a person approves
    it) runs in Belay's sandbox, through Claude Code's own Bash: it writes in the workspace, but not beside it;
    it finds no SSH key and none of the agent's secrets; the model sees the command's own output and exit code,
    and Belay's journal the command the model wrote."""
    outside = tmp_path / "beside"
    outside.mkdir()
    script = ("import os, pathlib, sys; pathlib.Path('inside.txt').write_text('in'); "
              "key = os.path.expanduser('~/.s' + 'sh/id_rsa'); "
              "print('key:', open(key).read() if os.path.exists(key) else 'hidden'); "
              "print('token:', os.environ.get('DEPLOY_TOKEN')); "
              f"open({str(outside / 'x.txt')!r}, 'w').write('x')")
    command = f"python3 -c {json.dumps(script)}"
    turns = [Turn(tools=[ToolCall("Bash", {"command": command, "description": "write"}, id="t_wall")]),
             Turn(text="Done.", when=answers("t_wall"))]
    settings = _hooks_settings(tmp_path)
    monkeypatch.setenv("DEPLOY_TOKEN", "tok-in-the-agents-environment")

    async def scenario() -> tuple[dict[str, Any], str]:
        async with Console(workspace) as console:
            console.register_approver("test")
            person = asyncio.ensure_future(_person(console, {}, []))
            try:
                with ScriptedModel(turns) as model:
                    (model.home / ".ssh").mkdir(parents=True)
                    (model.home / ".ssh" / "id_rsa").write_text("PRIVATE-KEY-OF-THE-USER\n")
                    monkeypatch.setenv("HOME", str(model.home))  # the console's user is the agent's
                    code, output = await _claude(model, workspace, settings)
                    assert code == 0 and model.unscripted == [], output
                    result = next(r.tool_result("t_wall") for r in model.message_requests() if r.tool_result("t_wall"))
                    journaled = next(r for r in await console.history() if r.tool == "Bash")
                    return result, str(journaled.args["command"])
            finally:
                person.cancel()
                await asyncio.wait([person])

    result, journaled = run(scenario())
    told = result_text(result)
    assert (workspace / "inside.txt").read_text() == "in"
    assert not (outside / "x.txt").exists(), told
    assert "key: hidden" in told and "PRIVATE-KEY" not in told, told
    assert "token: None" in told and "tok-in-the-agents-environment" not in told, told
    assert result["is_error"] and "x.txt" in told, told  # the command's own failure: the write beside was refused
    assert journaled == command


@pytest.mark.timeout(180)
@pytest.mark.skipif(not overlay_support().available, reason=overlay_support().detail)
def test_a_command_run_in_preview_lands_what_the_person_kept_and_the_model_hears_its_own_output(
        workspace: Path, tmp_path: Path) -> None:
    """Approve what a command does: the person has Claude Code's command run in preview, sees its two changes,
    keeps the new file and leaves the deletion out.  Claude Code's own Bash then gives the model the command's
    output and exit code with what was applied; the kept file is the call's change, and undo takes it back."""
    readme = workspace / "README.md"
    original = readme.read_text()
    command = "echo made > made.txt && rm README.md && echo finished; exit 4"
    turns = [Turn(tools=[ToolCall("Bash", {"command": command, "description": "make"}, id="t_prev")]),
             Turn(text="Done.", when=answers("t_prev"))]
    settings = _hooks_settings(tmp_path)

    async def scenario() -> tuple[dict[str, Any], list[Any], Any, bool]:
        async with Console(workspace) as console:
            console.register_approver("test")
            shown: list[Any] = []
            person = asyncio.ensure_future(previewing_person(console, {"README.md": []}, shown))
            try:
                with ScriptedModel(turns) as model:
                    code, output = await _claude(model, workspace, settings)
                    assert code == 0 and model.unscripted == [], output
                    result = next(r.tool_result("t_prev") for r in model.message_requests() if r.tool_result("t_prev"))
            finally:
                person.cancel()
                await asyncio.wait([person])
            record = next(r for r in await console.history() if r.tool == "Bash")
            assert (workspace / "made.txt").read_text() == "made\n" and readme.read_text() == original
            return result, shown, record, (await console.undo(record.call_id)).ok

    result, shown, record, undone = run(scenario())
    told = result_text(result)
    assert sorted(d.path for d in shown[0].diffs) == ["README.md", "made.txt"]  # both changes were shown first
    assert "finished" in told and "applied: made.txt" in told and "discarded: README.md" in told, told
    assert result["is_error"] and "4" in told, told  # the command's own exit code
    assert record.args["command"] == command and record.status == RunStatus.FAILED
    assert [(c.path, c.kind) for c in record.changes] == [("made.txt", ChangeKind.CREATE)]
    assert undone and not (workspace / "made.txt").exists() and readme.read_text() == original


@pytest.mark.timeout(180)
@pytest.mark.allow_warning_logs  # the console logs the interrupted call
def test_a_session_killed_mid_command_lets_go_within_seconds_and_its_call_ends_interrupted(workspace: Path,
                                                                                          tmp_path: Path) -> None:
    """Claude Code killed while its Bash call runs: no PostToolUse will come, so the console watches its process."""
    # Claude Code itself refuses a bare `sleep 60`; the pid is for ending the command, which Claude Code started
    # in a process group of its own, once the test is over.
    slow = "python3 -c 'import os, time; open(\"slow.pid\", \"w\").write(str(os.getpid())); time.sleep(60)'"
    turns = [Turn(tools=[ToolCall("Bash", {"command": slow, "description": "wait"}, id="k_bash")]),
             Turn(text="unreachable", when=answers("k_bash"))]
    settings = _hooks_settings(tmp_path)
    log = tmp_path / "cli.log"

    async def scenario() -> tuple[RunStatus, str, bool, RunStatus]:
        async with Console(workspace) as console:
            console.set_mode("bypass")
            with ScriptedModel(turns) as model, log.open("wb") as out:
                command = [str(bundled_cli()), "-p", "do the scripted work", "--output-format", "stream-json",
                           "--verbose", "--settings", str(settings)]
                cli = await asyncio.create_subprocess_exec(*command, cwd=workspace, env=model.env(),
                                                           stdin=asyncio.subprocess.DEVNULL,
                                                           stdout=out, stderr=asyncio.subprocess.STDOUT,
                                                           start_new_session=True)
                try:
                    deadline = time.monotonic() + 60
                    while not (console.interceptor and console.interceptor.waiting) and time.monotonic() < deadline:
                        await asyncio.sleep(0.05)
                    assert console.interceptor is not None and console.interceptor.waiting == 1, log.read_text()[-3000:]
                    pid_file = workspace / "slow.pid"
                    await wait_until(lambda: pid_file.exists() and pid_file.read_text(), 30, "the command to run")
                    os.killpg(cli.pid, signal.SIGKILL)
                    killed = time.monotonic()
                    await cli.wait()
                    while console.interceptor.waiting and time.monotonic() < killed + 30:
                        await asyncio.sleep(0.05)
                    let_go = not console.interceptor.waiting
                    left = running(str(workspace), "slow.pid")  # ended with its agent: the wall's pids group
                finally:
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(cli.pid, signal.SIGKILL)
                    for pid in running(str(workspace), "slow.pid"):  # the pid it wrote is the sandbox's own
                        with contextlib.suppress(ProcessLookupError):
                            os.kill(pid, signal.SIGKILL)
            other = await console.start_agent("other", "scripted")  # another agent's command must not wait
            later = await asyncio.wait_for(console.call(other, "Bash", {"command": "echo later > later.txt"}), 30)
            bash = next(r for r in await console.history() if r.tool == "Bash" and r.args.get("command") == slow)
            return bash.status, bash.error.message if bash.error else "", let_go and not left, later.status

    status, why, let_go, later = run(scenario())
    assert status == RunStatus.INTERRUPTED
    # Let go within the 30 s it was given, not HOLD_S (ten minutes), because Claude Code's process was seen to end.
    assert let_go and why == GONE, why
    assert later == RunStatus.DONE  # within 30 s: it did not wait for the killed session's hold
