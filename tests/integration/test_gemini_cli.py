"""The real Gemini CLI supervised by a real Belay console through Belay's installed hooks.

The CLI (test-tools/, pinned) talks to a scripted Gemini API server on 127.0.0.1
(tests/integration/fake_gemini.py), so it makes real tool calls offline.  Belay's hooks are
installed as `belay hooks install --agent gemini --user` writes them, into the user settings of the
CLI's private home; the console runs in this test's event loop and a "person" task answers its
approvals.  Gemini CLI runs headless (`-p`) in YOLO mode, so Belay's hook is the only gate.  What
is checked is what a user would see: the calls under the right agents, the files on disk, what the
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
from core.outside import gemini
from core.outside.install import hook_command
from core.outside.intercept import GONE
from core.policy.settings import config_dir
from core.process.overlay import overlay_support
from core.settings import state_root, workspace_state_dir
from tests.conftest import run, running
from tests.integration import npm_tools
from tests.integration.fake_gemini import ScriptedModel, ToolCall, Turn, answers, response_text
from tests.integration.previewing import previewing_person

CLI_TIMEOUT = 45.0
BLOCKED = "Tool execution blocked: "
"""What Gemini CLI puts before a hook's reason in the function response the model reads."""


async def _gemini(model: ScriptedModel, workspace: Path, trust: str = "--skip-trust") -> tuple[int, str]:
    """Run the CLI headless as a child of this loop (the console answers its hooks meanwhile); kill its group after.

    `trust`: how the workspace is trusted for the run (headless, Gemini CLI refuses an untrusted folder): the
    `--skip-trust` flag, or "env" for `GEMINI_CLI_TRUST_WORKSPACE=true`."""
    cli = npm_tools.require("gemini")
    command = [str(cli), "-p", "do the scripted work", "-m", "gemini-2.5-flash", "--approval-mode", "yolo",
               "--output-format", "stream-json", *([trust] if trust != "env" else [])]
    env = model.env(path_first=npm_tools.node_dir())
    if trust == "env":
        env["GEMINI_CLI_TRUST_WORKSPACE"] = "true"
    process = await asyncio.create_subprocess_exec(*command, cwd=workspace, env=env,
                                                   stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
                                                   stderr=asyncio.subprocess.PIPE, start_new_session=True)
    try:
        out, err = await asyncio.wait_for(process.communicate(), CLI_TIMEOUT)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        await process.wait()
    return process.returncode or 0, err.decode()[-3000:] + out.decode()[-3000:]


def _install_hooks(model: ScriptedModel) -> None:
    """Belay's hooks in the CLI's user settings, as `belay hooks install --agent gemini --user` puts them."""
    gemini.install(model.user_settings, hook_command(state_root(), config_dir(), agent="gemini"), config_dir())


async def _person(console: Console, says: dict[str, Any]) -> None:
    """Approves what it is shown, except as `says` has it by a fragment of the path or command: ("deny", reason)
    or the edited content of the file."""
    seen: set[str] = set()
    while True:
        for request in console.pending_approvals():
            if request.call_id in seen:
                continue
            seen.add(request.call_id)
            target = str(request.args.get("file_path") or request.args.get("command") or "")
            answer = next((a for key, a in says.items() if key in target), None)
            if isinstance(answer, tuple):
                console.deny(request.call_id, answer[1])
            elif isinstance(answer, dict):
                console.approve(request.call_id, edited=answer)
            else:
                console.approve(request.call_id)
        await asyncio.sleep(0.02)


async def _supervised(workspace: Path, model: ScriptedModel, says: dict[str, Any]) -> Console:
    """Run the CLI once under a console whose person answers as `says`; the console, still open, for checks."""
    console = Console(workspace)
    await console.__aenter__()
    console.register_approver("test")
    person = asyncio.ensure_future(_person(console, says))
    try:
        code, output = await _gemini(model, workspace)
        assert code == 0 and model.unscripted == [], output
    except BaseException:
        await console.__aexit__(None, None, None)
        raise
    finally:
        person.cancel()
        await asyncio.wait([person])
    return console


@pytest.mark.timeout(120)
def test_gemini_clis_write_edit_command_and_sub_agent_are_supervised_and_undoable(workspace: Path) -> None:
    readme, usage = workspace / "README.md", workspace / "docs" / "usage.md"
    originals = {readme: readme.read_text(), usage: usage.read_text()}
    turns = [
        Turn(tools=[ToolCall("write_file", {"file_path": "notes.md", "content": "notes\n"}, id="g_write")]),
        Turn(tools=[ToolCall("replace", {"file_path": str(readme), "old_string": "# shop", "new_string": "# Shop",
                                         "instruction": "capitalise the title"}, id="g_edit")], when=answers("g_write")),
        Turn(tools=[ToolCall("run_shell_command", {"command": "echo built > build.txt", "description": "build"},
                             id="g_shell")], when=answers("g_edit")),
        Turn(tools=[ToolCall("invoke_agent", {"agent_name": "generalist", "prompt": "SUBTASK: document receipts"},
                             id="g_agent")], when=answers("g_shell")),
        Turn(text="All done.", when=answers("g_agent")),
    ]
    agents = {"SUBTASK:": [
        Turn(tools=[ToolCall("replace", {"file_path": str(usage), "old_string": "# Using", "new_string": "# Using shop",
                                         "instruction": "name the project"}, id="g_sub_edit")]),
        Turn(tools=[ToolCall("complete_task", {"result": {"response": "Documented."}}, id="g_sub_done")],
             when=answers("g_sub_edit")),
    ]}
    says = {"README.md": {"README.md": "# Shop, retitled by the person\n"}}

    async def scenario() -> None:
        with ScriptedModel(turns, agents=agents) as model:
            _install_hooks(model)
            console = await _supervised(workspace, model, says)
        try:
            history = await console.history()
            records = {(r.tool, r.args.get("file_path") or r.args.get("command") or ""): r for r in history}
            write = records[("Write", str(workspace / "notes.md"))]
            assert write.status == RunStatus.DONE and [c.path for c in write.changes] == ["notes.md"]
            assert readme.read_text() == "# Shop, retitled by the person\n"  # the person's edit is what ran
            assert (workspace / "build.txt").read_text() == "built\n"
            assert [c.path for c in records[("Bash", "echo built > build.txt")].changes] == ["build.txt"]
            sub_edit = records[("Edit", str(usage))]
            spawn = next(r for r in history if r.tool == "Agent")
            sub_agent = console.timeline.agents[sub_edit.agent_id]
            assert sub_agent.agent_kind == "subagent" and sub_agent.spawned_by == spawn.call_id
            assert sub_agent.parent_id == spawn.agent_id and sub_edit.agent_id != spawn.agent_id
            assert "# Using shop" in usage.read_text()
            for record in reversed(history):
                if any(c.restorable for c in record.changes):
                    report = await console.undo(record.call_id)
                    assert report.ok, report.message
        finally:
            await console.__aexit__(None, None, None)

    run(scenario())
    assert not (workspace / "notes.md").exists() and not (workspace / "build.txt").exists()
    assert readme.read_text() == originals[readme] and usage.read_text() == originals[usage]


@pytest.mark.timeout(90)
def test_a_person_denying_a_call_tells_the_model_the_reason(workspace: Path) -> None:
    turns = [Turn(tools=[ToolCall("write_file", {"file_path": str(workspace / "secret.txt"), "content": "k\n"},
                                  id="g_deny")]),
             Turn(text="Understood.", when=answers("g_deny"))]

    async def scenario() -> tuple[dict[str, Any] | None, RunStatus]:
        with ScriptedModel(turns) as model:
            _install_hooks(model)
            console = await _supervised(workspace, model, {"secret.txt": ("deny", "no secrets, please")})
            told = model.function_response("g_deny")
        try:
            return told, (await console.history())[-1].status
        finally:
            await console.__aexit__(None, None, None)

    told, status = run(scenario())
    assert not (workspace / "secret.txt").exists() and status == RunStatus.DENIED
    assert told is not None, "the model never heard of its call"
    text = response_text(told)
    assert text.startswith(BLOCKED) and "no secrets, please" in text, text
    assert "hook_client.py" not in text and "--state-root" not in text, text


@pytest.mark.timeout(120)
@pytest.mark.skipif(not overlay_support().available, reason=overlay_support().detail)
def test_a_gemini_command_run_in_preview_lands_only_what_the_person_kept(workspace: Path) -> None:
    """The same preview as for Claude Code, through Gemini CLI's own shell tool: the command runs in Belay's
    layer, the person keeps its new file and not its deletion, and the model reads the command's output."""
    readme = workspace / "README.md"
    original = readme.read_text()
    command = "echo made > made.txt && rm README.md && echo finished"
    turns = [Turn(tools=[ToolCall("run_shell_command", {"command": command, "description": "make"}, id="g_prev")]),
             Turn(text="Done.", when=answers("g_prev"))]

    async def scenario() -> tuple[str, list[Any], Any, bool]:
        console = Console(workspace)
        await console.__aenter__()
        try:
            console.register_approver("test")
            shown: list[Any] = []
            person = asyncio.ensure_future(previewing_person(console, {"README.md": []}, shown))
            try:
                with ScriptedModel(turns) as model:
                    _install_hooks(model)
                    code, output = await _gemini(model, workspace)
                    assert code == 0 and model.unscripted == [], output
                    told = response_text(model.function_response("g_prev") or {})
            finally:
                person.cancel()
                await asyncio.wait([person])
            record = next(r for r in await console.history() if r.tool == "Bash")
            assert (workspace / "made.txt").read_text() == "made\n" and readme.read_text() == original
            return told, shown, record, (await console.undo(record.call_id)).ok
        finally:
            await console.__aexit__(None, None, None)

    told, shown, record, undone = run(scenario())
    assert sorted(d.path for d in shown[0].diffs) == ["README.md", "made.txt"]
    assert "finished" in told and "applied: made.txt" in told and "discarded: README.md" in told, told
    assert record.args["command"] == command
    assert [(c.path, c.kind) for c in record.changes] == [("made.txt", ChangeKind.CREATE)]
    assert undone and not (workspace / "made.txt").exists() and readme.read_text() == original


@pytest.mark.timeout(90)
def test_with_no_console_running_the_hook_blocks_the_call(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    turns = [Turn(tools=[ToolCall("write_file", {"file_path": str(workspace / "x.txt"), "content": "x\n"}, id="g_x")]),
             Turn(text="Could not write.", when=answers("g_x"))]

    async def scenario() -> tuple[dict[str, Any] | None, dict[str, Any]]:
        with ScriptedModel(turns) as model:
            _install_hooks(model)
            code, output = await _gemini(model, workspace)
            assert code == 0, output
            return model.function_response("g_x"), json.loads(model.user_settings.read_text())

    told, settings = run(scenario())
    assert not (workspace / "x.txt").exists()
    assert told is not None
    text = response_text(told)
    assert text.startswith(f"{BLOCKED}Belay: no Belay console is running for {workspace}") and "belay watch" in text, text
    assert settings["hooks"]["BeforeTool"][0]["hooks"][0]["timeout"] == gemini.TIMEOUT_MS


@pytest.mark.timeout(90)
def test_two_commands_of_one_turn_run_one_at_a_time_instead_of_waiting_on_each_other(workspace: Path) -> None:
    """Gemini CLI starts a turn's commands only once all are let through, and Belay runs one command at a time
    (so that each change has one author): the later one is refused with a reason, and the model runs it next.
    The turn's harmless update_topic is let through without asking and without the lock."""
    again = "test -e a.txt || echo a > a.txt; test -e b.txt || echo b > b.txt"
    turns = [Turn(tools=[ToolCall("update_topic", {"title": "Building", "summary": "two steps",
                                                   "strategic_intent": "build both"}, id="g_topic"),
                         ToolCall("run_shell_command", {"command": "echo a > a.txt"}, id="g_a"),
                         ToolCall("run_shell_command", {"command": "echo b > b.txt"}, id="g_b")]),
             Turn(tools=[ToolCall("run_shell_command", {"command": again}, id="g_again")],
                  when=lambda request: len(request.latest_function_responses()) == 3),
             Turn(text="Both built.", when=answers("g_again"))]

    async def scenario() -> tuple[list[str], list[Any]]:
        with ScriptedModel(turns) as model:
            _install_hooks(model)
            console = await _supervised(workspace, model, {})
            told = [response_text(model.function_response(i) or {}) for i in ("g_a", "g_b")]
        try:
            return told, await console.history()
        finally:
            await console.__aexit__(None, None, None)

    told, history = run(scenario())
    refused = [t for t in told if t.startswith(f"{BLOCKED}Belay: not run.")]
    assert len(refused) == 1 and "on its own" in refused[0], told
    skipped = [r for r in history if r.tool == "Bash" and r.status == RunStatus.SKIPPED]
    assert len(skipped) == 1 and skipped[0].error is not None and "on its own" in skipped[0].error.message
    commands = [r for r in history if r.tool == "Bash" and r.status != RunStatus.SKIPPED]
    assert [r.status for r in commands] == [RunStatus.DONE, RunStatus.DONE]
    assert sorted(c.path for r in commands for c in r.changes) == ["a.txt", "b.txt"]
    assert commands[1].args["command"] == again and (workspace / "a.txt").exists() and (workspace / "b.txt").exists()
    topic = next(r for r in history if r.tool == "update_topic")
    assert topic.status == RunStatus.DONE and topic.decision is not None and topic.decision.by != "person"


@pytest.mark.timeout(90)
def test_hooks_installed_in_the_project_block_when_the_folder_is_trusted_and_are_skipped_under_skip_trust(
        tmp_path: Path) -> None:
    """`belay hooks install --agent gemini --project`: Gemini CLI reads a project's settings only in a trusted
    folder, and `--skip-trust` trusts the folder after the settings were read, so the project's hooks do not
    run at all under it (GEMINI_HOOKS.md, 2); `GEMINI_CLI_TRUST_WORKSPACE=true` or a trusted folder reads them."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    gemini.install(gemini.settings_file(workspace, False), hook_command(state_root(), config_dir(), agent="gemini"),
                   config_dir())
    turns = [Turn(tools=[ToolCall("write_file", {"file_path": str(workspace / "x.txt"), "content": "x\n"}, id="g_x")]),
             Turn(text="Could not write.", when=answers("g_x"))]

    async def attempt(trust: str) -> dict[str, Any] | None:
        with ScriptedModel(turns) as model:
            code, output = await _gemini(model, workspace, trust)
            assert code == 0, output
            return model.function_response("g_x")

    told = run(attempt("env"))
    assert told is not None and not (workspace / "x.txt").exists()
    assert response_text(told).startswith(f"{BLOCKED}Belay: no Belay console is running for {workspace}")
    told = run(attempt("--skip-trust"))
    assert told is not None and "error" not in told["response"] and (workspace / "x.txt").read_text() == "x\n"


@pytest.mark.timeout(90)
@pytest.mark.allow_warning_logs  # the console logs the interrupted call
def test_a_gemini_killed_mid_command_lets_go_of_the_lock_within_seconds(workspace: Path) -> None:
    """No AfterTool will come for a command whose Gemini CLI was killed: the console watches the CLI's process
    (the hook command's parent) and ends the call interrupted, so other agents' commands do not wait."""
    slow = "python3 -c 'import os, time; open(\"slow.pid\", \"w\").write(str(os.getpid())); time.sleep(60)'"
    turns = [Turn(tools=[ToolCall("run_shell_command", {"command": slow}, id="g_slow")]),
             Turn(text="unreachable", when=answers("g_slow"))]

    async def scenario() -> tuple[RunStatus, str, bool, RunStatus]:
        async with Console(workspace) as console:
            console.set_mode("bypass")
            with ScriptedModel(turns) as model:
                _install_hooks(model)
                cli = asyncio.ensure_future(_gemini(model, workspace))
                try:
                    deadline = time.monotonic() + 30
                    while not (workspace / "slow.pid").exists() and time.monotonic() < deadline:
                        await asyncio.sleep(0.05)
                    assert console.interceptor is not None and console.interceptor.waiting == 1
                finally:
                    cli.cancel()  # _gemini kills the CLI's process group
                    await asyncio.wait([cli])
                killed = time.monotonic()
                while console.interceptor.waiting and time.monotonic() < killed + 30:
                    await asyncio.sleep(0.05)
                let_go = not console.interceptor.waiting
            left = running(str(workspace), "slow.pid")  # ended with its agent: the wall's pids group
            for pid in left:  # the pid it wrote is its sandbox's own
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            other = await console.start_agent("other", "scripted")
            later = await asyncio.wait_for(console.call(other, "Bash", {"command": "echo later > later.txt"}), 10)
            record = next(r for r in await console.history() if r.tool == "Bash" and r.args.get("command") == slow)
            return record.status, record.error.message if record.error else "", let_go and not left, later.status

    status, why, let_go, later = run(scenario())
    # Let go within the 30 s it was given, not HOLD_S (ten minutes), because the CLI's process was seen to end.
    assert status == RunStatus.INTERRUPTED and let_go and why == GONE, why
    assert later == RunStatus.DONE


@pytest.mark.timeout(90)
def test_a_hung_console_blocks_the_call_after_the_silence_limit_not_after_geminis_timeout(tmp_path: Path) -> None:
    """A console that takes the event and never answers (its window hung): the hook command gives up after its
    silence limit and denies, well before Gemini CLI's own hook timeout, which would let the call run."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    state = workspace_state_dir(workspace)
    state.mkdir(parents=True)
    install_token(config_dir())
    turns = [Turn(tools=[ToolCall("write_file", {"file_path": str(workspace / "x.txt"), "content": "x\n"}, id="g_x")]),
             Turn(text="Could not write.", when=answers("g_x"))]

    async def hung(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while await reader.read(65536):  # takes the event, says nothing, lets go when the hook gives up
            pass
        writer.close()

    async def scenario() -> dict[str, Any] | None:
        with tempfile.TemporaryDirectory(dir="/tmp") as short:
            server = await asyncio.start_unix_server(hung, path=f"{short}/c.sock")
            (state / "endpoint.sock").write_text(f"{short}/c.sock")
            try:
                with ScriptedModel(turns) as model:
                    gemini.install(model.user_settings, hook_command(state_root(), config_dir(), wait_s=2,
                                                                     agent="gemini"), config_dir())
                    code, output = await _gemini(model, workspace)  # within CLI_TIMEOUT, not Gemini's hour
                    assert code == 0, output
                    return model.function_response("g_x")
            finally:
                server.close()
                await server.wait_closed()

    told = run(scenario())
    assert not (workspace / "x.txt").exists() and told is not None
    # Blocked by the hook's own 2 s silence limit, as it says (a few of them: SessionStart, BeforeTool, ...).
    assert response_text(told).startswith(f"{BLOCKED}Belay: Belay's console did not answer within 2 s"), told
