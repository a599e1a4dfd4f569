"""The real Codex CLI supervised by a real Belay console through Belay's installed hooks.

The CLI (pinned in test-tools/, `npm_tools.require("codex")`) talks to a scripted OpenAI Responses
server on 127.0.0.1 (tests/integration/fake_openai.py), so it makes real tool calls offline.  Belay's
hooks go into a private CODEX_HOME's hooks.json, with Codex's trust in them recorded in its config.toml,
as `belay hooks install --agent codex --user` writes them (Codex silently skips a hook it has no trust
record for, so these runs also show that the recorded trust is the one Codex accepts); Codex's own
sandbox is off so that Belay's answers, not the sandbox, decide.  The console runs in this test's event
loop and a "person" task answers its approvals.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from core import Console, RunStatus, install_token
from core.outside import install
from core.outside.codex import HOOKS
from core.outside.intercept import GONE
from core.policy.settings import config_dir
from core.settings import state_root, workspace_state_dir
from tests.conftest import run
from tests.integration import npm_tools
from tests.integration.fake_openai import ModelRequest, ScriptedModel, ToolCall, Turn, answers, patch_call, shell_call

CLI_TIMEOUT = 45.0


async def _codex(model: ScriptedModel, workspace: Path, monkeypatch: pytest.MonkeyPatch,
                 project: bool = False, wait_s: float | None = None) -> tuple[int, str]:
    """Install Belay's hooks as `belay hooks install --agent codex --user` does in the model's private
    CODEX_HOME (or with `project`, as `--project WORKSPACE` does, and the person trusting the project in
    Codex: `--trust`), run `codex exec` as a child of this loop (the console answers its hooks meanwhile),
    and kill its process group after."""
    env = {**model.env(), "PATH": f"{npm_tools.node_dir()}:{os.environ.get('PATH', '')}"}
    monkeypatch.setenv("CODEX_HOME", str(model.codex_home))
    HOOKS.install(HOOKS.settings_file(workspace if project else None, not project),
                  install.hook_command(state_root(), config_dir(), agent="codex", wait_s=wait_s), config_dir())
    command = [str(npm_tools.require("codex")), "exec", "--skip-git-repo-check", "--sandbox", "danger-full-access",
               *(["--trust"] if project else []), "--cd", str(workspace), "do the scripted work"]
    process = await asyncio.create_subprocess_exec(*command, cwd=workspace, env=env, stdin=asyncio.subprocess.DEVNULL,
                                                   stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
                                                   start_new_session=True)
    try:
        out, err = await asyncio.wait_for(process.communicate(), CLI_TIMEOUT)
    finally:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        await process.wait()
    return process.returncode or 0, err.decode()[-3000:] + out.decode()[-2000:]


async def _person(console: Console, deny: dict[str, str], seen: list[Any],
                  edit: dict[str, dict[str, str]] | None = None) -> None:
    """Approves what it is shown, except calls naming a key of `deny` (refused with that reason); a call naming
    a key of `edit` is approved with those files' content as the person rewrote it."""
    while True:
        for request in console.pending_approvals():
            if request.call_id in [r.call_id for r in seen]:
                continue
            seen.append(request)
            said = str(request.args.get("command") or "")
            reason = next((why for key, why in deny.items() if key in said), None)
            edited = next((files for key, files in (edit or {}).items() if key in said), None)
            if reason is not None:
                console.deny(request.call_id, reason)
            else:
                console.approve(request.call_id, edited=edited)
        await asyncio.sleep(0.02)


def _wait_for_spawned(call_id: str) -> Callable[[ModelRequest], dict[str, Any]]:
    """wait_agent's arguments naming the sub-agent that `call_id` (a spawn_agent call) started."""
    def arguments(request: ModelRequest) -> dict[str, Any]:
        spawned = json.loads(request.output(call_id) or "{}")
        return {"targets": [spawned.get("agent_id", "")], "timeout_ms": 30000}
    return arguments


PATCH = """*** Begin Patch
*** Update File: README.md
@@
-# shop
+# Shop, patched by Codex
*** Add File: notes.md
+notes
*** Delete File: docs/usage.md
*** End Patch
"""


@pytest.mark.timeout(120)
def test_codex_calls_are_approved_with_diffs_captured_denied_and_undone(workspace: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """A patch over three files (shown as three diffs, approved with one file rewritten by the person, which is
    what Codex writes), a shell command's side effect, a denied patch whose reason the model reads, a sub-agent's
    command under its spawn_agent call, then undo."""
    npm_tools.require("codex")
    readme, usage = workspace / "README.md", workspace / "docs" / "usage.md"
    originals = {readme: readme.read_text(), usage: usage.read_text()}
    secret = "*** Begin Patch\n*** Add File: secret.txt\n+k\n*** End Patch\n"
    turns = [
        Turn(tools=[patch_call(PATCH, "c_patch")]),
        Turn(tools=[shell_call("echo built > build.txt", "c_bash")], when=answers("c_patch")),
        Turn(tools=[patch_call(secret, "c_deny")], when=answers("c_bash")),
        Turn(tools=[ToolCall("spawn_agent", {"message": "SUBTASK: stamp the docs"}, "c_spawn", "multi_agent_v1")],
             when=answers("c_deny")),
        Turn(tools=[ToolCall("wait_agent", _wait_for_spawned("c_spawn"), "c_wait", "multi_agent_v1")],
             when=answers("c_spawn")),
        Turn(text="All done.", when=answers("c_wait")),
    ]
    agents = {"SUBTASK:": [Turn(tools=[shell_call("echo stamped > stamp.txt", "c_sub")]),
                           Turn(text="Stamped.", when=answers("c_sub"))]}
    seen: list[Any] = []

    async def scenario() -> None:
        async with Console(workspace) as console:
            console.register_approver("test")
            person = asyncio.ensure_future(_person(console, {"secret.txt": "no secrets in the repository"}, seen,
                                                   {"notes.md": {"notes.md": "notes, as the person wrote them\n"}}))
            try:
                with ScriptedModel(turns, agents=agents) as model:
                    code, output = await _codex(model, workspace, monkeypatch)
                    assert code == 0 and model.unscripted == [], output
                    for _ in range(100):  # the sub-agent may report back after the main turn ends
                        if (workspace / "stamp.txt").exists() and not console.interceptor.waiting and all(
                                r.status.final for r in console.timeline.runs.values()):  # its changes are recorded
                            break
                        await asyncio.sleep(0.05)
                    denied, waited = model.output("c_deny"), model.output("c_wait")
            finally:
                person.cancel()
                await asyncio.wait([person])
            assert denied is not None and "no secrets in the repository" in denied, denied
            assert waited is not None and "Stamped." in waited, waited  # the sub-agent finished, not timed out
            patch_request = next(r for r in seen if r.tool == "apply_patch" and "README.md" in r.args["command"])
            assert {(d.path, d.status) for d in patch_request.diffs} == {
                ("README.md", "modify"), ("notes.md", "create"), ("docs/usage.md", "delete")}
            history = await console.history()
            by_use = {r.tool + ":" + str(r.args.get("command", ""))[:40]: r for r in history}
            patch = next(r for r in history if r.tool == "apply_patch" and "README.md" in r.args["command"])
            assert patch.status == RunStatus.DONE
            assert {c.path for c in patch.changes} == {"README.md", "notes.md", "docs/usage.md"}
            assert next(r for r in history if "secret.txt" in str(r.args)).status == RunStatus.DENIED
            bash = by_use["Bash:echo built > build.txt"]
            assert [c.path for c in bash.changes] == ["build.txt"]
            sub = by_use["Bash:echo stamped > stamp.txt"]
            spawn = next(r for r in history if r.tool == "spawn_agent")
            sub_agent = console.timeline.agents[sub.agent_id]
            assert sub_agent.agent_kind == "subagent" and sub_agent.spawned_by == spawn.call_id
            assert sub_agent.parent_id == spawn.agent_id
            assert [c.path for c in sub.changes] == ["stamp.txt"]
            assert readme.read_text().startswith("# Shop, patched by Codex") and not usage.exists()
            assert (workspace / "notes.md").read_text() == "notes, as the person wrote them\n"  # Codex wrote the edit
            for record in reversed(history):
                if any(c.restorable for c in record.changes):
                    report = await console.undo(record.call_id)
                    assert report.ok, report.message

    run(scenario())
    assert readme.read_text() == originals[readme] and usage.read_text() == originals[usage]
    assert not any((workspace / name).exists() for name in ("notes.md", "build.txt", "stamp.txt", "secret.txt"))


@pytest.mark.timeout(90)
def test_a_patch_that_does_not_apply_ends_failed_at_the_end_of_the_turn(workspace: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Codex sends no PostToolUse for a patch it could not apply: the call still ends (when the turn does)
    and lets go of its file, so a later call to the same file is not held up."""
    npm_tools.require("codex")
    bad = "*** Begin Patch\n*** Update File: README.md\n@@\n-no such line\n+x\n*** End Patch\n"
    turns = [Turn(tools=[patch_call(bad, "c_bad")]), Turn(text="It did not apply.", when=answers("c_bad"))]

    async def scenario() -> None:
        async with Console(workspace) as console:
            console.set_mode("bypass")
            with ScriptedModel(turns) as model:
                code, output = await _codex(model, workspace, monkeypatch)
                assert code == 0 and model.unscripted == [], output
            for _ in range(100):
                if not console.interceptor.waiting:
                    break
                await asyncio.sleep(0.05)
            assert console.interceptor.waiting == 0
            [record] = await console.history()
            assert record.tool == "apply_patch" and record.status == RunStatus.FAILED
            other = await console.start_agent("other", "scripted")
            later = await asyncio.wait_for(console.call(other, "Write", {
                "file_path": str(workspace / "README.md"), "content": "later\n"}), 10)
            assert later.status == RunStatus.DONE

    run(scenario())


@pytest.mark.timeout(90)
def test_a_command_sent_to_another_directory_is_judged_and_journaled_there(workspace: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """The hook's input leaves the model's `workdir` out, but Codex runs the hook there (its `cwd`): the
    person sees, and the policy judges, where the command really runs."""
    npm_tools.require("codex")
    turns = [Turn(tools=[ToolCall("exec_command", {"cmd": "echo hi > hi.txt", "workdir": "docs"}, "c_dir")]),
             Turn(text="Done.", when=answers("c_dir"))]
    seen: list[Any] = []

    async def scenario() -> None:
        async with Console(workspace) as console:
            console.register_approver("test")
            person = asyncio.ensure_future(_person(console, {}, seen))
            try:
                with ScriptedModel(turns) as model:
                    code, output = await _codex(model, workspace, monkeypatch)
                    assert code == 0 and model.unscripted == [], output
            finally:
                person.cancel()
                await asyncio.wait([person])
            [record] = await console.history()
            assert record.args["command"] == f"cd {workspace / 'docs'} && echo hi > hi.txt"
            assert [r.args["command"] for r in seen] == [record.args["command"]]  # what the person was shown
            assert [c.path for c in record.changes] == ["docs/hi.txt"]

    run(scenario())
    assert (workspace / "docs" / "hi.txt").read_text() == "hi\n"


@pytest.mark.timeout(90)
def test_with_no_console_the_hook_blocks_the_call_and_the_model_is_told_why(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Hooks installed in the project (`--project`): with no console running, a patch and a command are both
    refused in Codex's own form, and the model reads Belay's reason."""
    npm_tools.require("codex")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    turns = [Turn(tools=[patch_call("*** Begin Patch\n*** Add File: x.txt\n+x\n*** End Patch\n", "c_x")]),
             Turn(tools=[shell_call("echo y > y.txt", "c_y")], when=answers("c_x")),
             Turn(text="Could not.", when=answers("c_y"))]

    async def scenario() -> tuple[str | None, str | None]:
        with ScriptedModel(turns) as model:
            code, output = await _codex(model, workspace, monkeypatch, project=True)
            assert code == 0 and model.unscripted == [], output
            hooks = json.loads((workspace / ".codex" / "hooks.json").read_text())
            assert "--agent codex" in hooks["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
            return model.output("c_x"), model.output("c_y")

    patch_told, bash_told = run(scenario())
    assert not (workspace / "x.txt").exists() and not (workspace / "y.txt").exists()
    for told in (patch_told, bash_told):
        assert told is not None and f"Belay: no Belay console is running for {workspace}" in told, told
        assert "hook_client.py" not in told, told


@pytest.mark.timeout(90)
def test_a_hung_console_blocks_the_call_after_the_silence_limit(workspace: Path, tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """A console that takes the event and never answers (its window hung): the hook client blocks the call
    after its silence limit, well inside Codex's hook timeout (which would let the call run)."""
    npm_tools.require("codex")
    state = workspace_state_dir(workspace)
    state.mkdir(parents=True)
    install_token(config_dir())
    turns = [Turn(tools=[shell_call("echo x > x.txt", "c_x")]), Turn(text="Could not.", when=answers("c_x"))]

    async def hung(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while await reader.read(65536):
            pass
        writer.close()

    async def scenario() -> str | None:
        with tempfile.TemporaryDirectory(dir="/tmp") as short:
            server = await asyncio.start_unix_server(hung, path=f"{short}/c.sock")
            (state / "endpoint.sock").write_text(f"{short}/c.sock")
            try:
                with ScriptedModel(turns) as model:
                    code, output = await _codex(model, workspace, monkeypatch, wait_s=2)  # within CLI_TIMEOUT
                    assert code == 0 and model.unscripted == [], output
                    return model.output("c_x")
            finally:
                server.close()
                await server.wait_closed()

    told = run(scenario())
    assert not (workspace / "x.txt").exists()
    # Blocked by the hook's own 2 s silence limit, as it says, not by Codex's timeout.
    assert told is not None and "Belay's console did not answer within 2 s; the call was blocked" in told, told


@pytest.mark.timeout(90)
@pytest.mark.allow_warning_logs  # the console logs the interrupted call
def test_codex_killed_mid_command_lets_go_within_seconds(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Codex killed while its command runs: no PostToolUse will come, so the console watches Codex's process
    (the hook command's parent) and ends the call interrupted, letting another agent's command run."""
    npm_tools.require("codex")
    slow = "python3 -c 'import time; time.sleep(15)'"  # still running when Codex is killed
    turns = [Turn(tools=[ToolCall("exec_command", {"cmd": slow, "yield_time_ms": 30000}, "c_slow")]),
             Turn(text="unreachable", when=answers("c_slow"))]

    async def scenario() -> tuple[RunStatus, str, bool, RunStatus]:
        async with Console(workspace) as console:
            console.set_mode("bypass")
            assert console.interceptor is not None
            with ScriptedModel(turns) as model:
                cli = asyncio.ensure_future(_codex(model, workspace, monkeypatch))
                try:
                    for _ in range(600):
                        if console.interceptor.waiting or cli.done():
                            break
                        await asyncio.sleep(0.05)
                    assert console.interceptor.waiting == 1, await cli
                    await asyncio.sleep(0.5)  # the command runs
                    cli.cancel()  # _codex kills the CLI's process group on the way out
                    await asyncio.wait([cli])
                    killed = time.monotonic()
                    while console.interceptor.waiting and time.monotonic() < killed + 30:
                        await asyncio.sleep(0.05)
                    let_go = not console.interceptor.waiting
                finally:
                    cli.cancel()
            other = await console.start_agent("other", "scripted")
            later = await asyncio.wait_for(console.call(other, "Bash", {"command": "echo later > later.txt"}), 10)
            [call] = [r for r in await console.history() if r.args.get("command") == slow]
            return call.status, call.error.message if call.error else "", let_go, later.status

    status, why, let_go, later = run(scenario())
    # Let go within the 30 s it was given, not HOLD_S (ten minutes), because Codex's process was seen to end.
    assert status == RunStatus.INTERRUPTED and let_go and why == GONE, (status, why)
    assert later == RunStatus.DONE
