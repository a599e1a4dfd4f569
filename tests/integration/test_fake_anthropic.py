"""The scripted Anthropic server, alone over HTTP and driving the real Claude Code CLI offline.

The CLI runs in print mode (``claude -p ... --output-format stream-json``) in a temp
project whose ``.claude/settings.json`` installs command hooks; the hook facts these
tests pin are written up in CLAUDE_CODE_HOOKS.md beside this file.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.integration.fake_anthropic import (
    MAIN,
    ModelRequest,
    ScriptedModel,
    ToolCall,
    Turn,
    answers,
    bundled_cli,
    prompt_contains,
    result_text,
)

CLI_TIMEOUT = 30.0
ALL_EVENTS = ("SessionStart", "SessionEnd", "PreToolUse", "PostToolUse", "PostToolUseFailure",
              "PermissionRequest", "SubagentStart", "SubagentStop")

# A command hook: log the event it receives, then answer with the first rule that matches it.
HOOK = """\
import json, sys
log, rules = sys.argv[1], sys.argv[2]
event = json.load(sys.stdin)
with open(log, "a") as f:
    f.write(json.dumps(event) + "\\n")
seen = event.get("tool_use_id", "") + json.dumps(event.get("tool_input", {}))
for rule in json.load(open(rules)):
    if rule["event"] == event["hook_event_name"] and rule["match"] in seen:
        if "stdout" in rule:
            print(json.dumps(rule["stdout"]))
        sys.stderr.write(rule.get("stderr", ""))
        sys.exit(rule.get("exit", 0))
"""


# -- the server alone -----------------------------------------------------------


def _post(url: str, body: object, path: str = "/v1/messages") -> tuple[int, str, bytes]:
    request = urllib.request.Request(url + path, data=json.dumps(body).encode(), method="POST",
                                     headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, response.headers["content-type"], response.read()
    except urllib.error.HTTPError as error:
        with error:
            return error.code, error.headers["content-type"], error.read()


def _sse(raw: bytes) -> list[tuple[str, dict[str, Any]]]:
    events = []
    for chunk in raw.decode().strip().split("\n\n"):
        name, data = (line.split(": ", 1)[1] for line in chunk.splitlines())
        events.append((name, json.loads(data)))
    return events


def _user(*content: dict[str, Any] | str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": c} if isinstance(c, str) else c for c in content]}


def test_a_streamed_turn_arrives_as_sse_text_and_tool_use_deltas() -> None:
    call = ToolCall("Write", {"file_path": "/tmp/x.txt", "content": "a fairly long line of content " * 4}, id="toolu_1")
    with ScriptedModel([Turn(text="Writing it.", tools=[call])]) as model:
        status, content_type, raw = _post(model.url, {"model": "m", "stream": True, "messages": [_user("go")]})
    assert status == 200 and content_type == "text/event-stream"
    events = _sse(raw)
    names = [name for name, _ in events]
    assert names[0] == "message_start" and names[-2:] == ["message_delta", "message_stop"]
    assert [d["content_block"]["type"] for n, d in events if n == "content_block_start"] == ["text", "tool_use"]
    partial = "".join(d["delta"]["partial_json"] for n, d in events
                      if n == "content_block_delta" and d["delta"]["type"] == "input_json_delta")
    assert json.loads(partial) == call.input
    assert len([n for n in names if n == "content_block_delta"]) > 3  # really split, as a live stream is
    assert events[-2][1]["delta"]["stop_reason"] == "tool_use"


def test_an_unstreamed_turn_is_one_message() -> None:
    with ScriptedModel([Turn(text="Hello.")]) as model:
        status, _, raw = _post(model.url, {"model": "m", "messages": [_user("hi")]})
    message = json.loads(raw)
    assert status == 200 and message["content"] == [{"type": "text", "text": "Hello."}]
    assert message["stop_reason"] == "end_turn" and message["role"] == "assistant"


def test_turns_are_picked_by_predicate_and_subagents_by_their_prompt() -> None:
    turns = [Turn(text="after the write", when=answers("toolu_w")),
             Turn(text="the other task", when=prompt_contains("other task")), Turn(text="first")]
    agents = {"SUB:": [Turn(text="sub first"), Turn(text="sub second")]}
    result = {"type": "tool_result", "tool_use_id": "toolu_w", "content": "ok"}

    def text(model: ScriptedModel, *messages: dict[str, Any]) -> str:
        _, _, raw = _post(model.url, {"model": "m", "messages": list(messages)})
        return str(json.loads(raw)["content"][0]["text"])

    with ScriptedModel(turns, agents=agents, fallback=Turn(text="nothing left")) as model:
        assert text(model, _user("main task")) == "first"
        assert text(model, _user("SUB: edit it")) == "sub first"
        assert text(model, _user("main task"), _user(result)) == "after the write"
        assert text(model, _user("<system-reminder>x</system-reminder>", "SUB: edit it")) == "sub second"
        assert text(model, _user("an other task")) == "the other task"
        assert text(model, _user("main task")) == "nothing left"
        assert [r.conversation for r in model.message_requests()] == [MAIN, "SUB:", MAIN, "SUB:", MAIN, MAIN]
        assert [r.prompt for r in model.unscripted] == ["main task"]
        assert model.remaining() == 0 and model.remaining("SUB:") == 0


def test_count_tokens_is_answered_and_unknown_paths_are_logged() -> None:
    with ScriptedModel() as model:
        status, _, raw = _post(model.url, {"messages": [_user("hi")]}, "/v1/messages/count_tokens")
        assert status == 200 and json.loads(raw)["input_tokens"] > 0
        status, _, raw = _post(model.url, {}, "/v1/files")
        assert status == 404 and json.loads(raw)["type"] == "error"
        assert [r.path for r in model.unknown] == ["/v1/files"]


def test_env_points_here_and_drops_foreign_credentials() -> None:
    base = {"PATH": "/bin", "ANTHROPIC_API_KEY": "sk-real", "CLAUDE_CODE_OAUTH_TOKEN": "t", "CLAUDECODE": "1"}
    with ScriptedModel() as model:
        env = model.env(base)
        home = model.home
        assert env["ANTHROPIC_BASE_URL"] == model.url and env["ANTHROPIC_API_KEY"] != "sk-real"
        assert "CLAUDE_CODE_OAUTH_TOKEN" not in env and "CLAUDECODE" not in env and env["PATH"] == "/bin"
        assert env["HOME"] == str(home) and env["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] == "1"
    assert not home.exists()


# -- the real CLI -----------------------------------------------------------------


@dataclass(frozen=True)
class CliRun:
    """What one ``claude -p`` run printed."""

    returncode: int
    events: list[dict[str, Any]]
    stderr: str

    @property
    def result(self) -> dict[str, Any]:
        return next(e for e in self.events if e.get("type") == "result")


@pytest.fixture(scope="module")
def cli() -> Path:
    path = bundled_cli()
    assert path.is_file(), f"the claude-agent-sdk wheel should ship the CLI at {path}"
    return path


def _claude(cli: Path, model: ScriptedModel, cwd: Path, *args: str) -> CliRun:
    """Run the CLI in its own process group, and kill the whole group (hooks, shells) afterwards."""
    command = [str(cli), "-p", "do the scripted work", "--output-format", "stream-json", "--verbose", *args]
    process = subprocess.Popen(command, cwd=cwd, env=model.env(), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = process.communicate(timeout=CLI_TIMEOUT)
    finally:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass  # the group is already gone: nothing was left behind
        process.communicate()
    return CliRun(process.returncode, [json.loads(line) for line in out.splitlines() if line.startswith("{")], err)


def _project(root: Path, hooks: dict[str, Any], files: dict[str, str] | None = None) -> Path:
    ws = root / "ws"
    (ws / ".claude").mkdir(parents=True)
    (ws / ".claude" / "settings.json").write_text(json.dumps({"hooks": hooks}), encoding="utf-8")
    for name, text in (files or {}).items():
        (ws / name).write_text(text, encoding="utf-8")
    return ws


def _logging_hooks(root: Path, rules: list[dict[str, Any]]) -> tuple[dict[str, Any], Path]:
    """Every event → the HOOK script; returns the hooks setting and the log it appends to."""
    script, log, rules_file = root / "hook.py", root / "hooks.jsonl", root / "rules.json"
    script.write_text(HOOK, encoding="utf-8")
    rules_file.write_text(json.dumps(rules), encoding="utf-8")
    command = shlex.join([sys.executable, str(script), str(log), str(rules_file)])
    return {event: [{"matcher": "*", "hooks": [{"type": "command", "command": command}]}] for event in ALL_EVENTS}, log


def test_the_cli_writes_edits_runs_bash_and_delegates_an_edit(cli: Path, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.txt").write_text("alpha\nbeta\n")
    turns = [
        Turn(text="Writing.", tools=[ToolCall("Write", {"file_path": str(ws / "a.txt"), "content": "one\n"}, id="toolu_w")]),
        Turn(tools=[ToolCall("Edit", {"file_path": str(ws / "a.txt"), "old_string": "one", "new_string": "two"})]),
        Turn(tools=[ToolCall("Bash", {"command": "echo hi > b.txt && cat b.txt", "description": "Write b"}, id="toolu_b")]),
        Turn(tools=[ToolCall("Agent", {"description": "Edit notes", "prompt": "SUBTASK: beta becomes gamma",
                                       "subagent_type": "general-purpose", "run_in_background": False}, id="toolu_a")]),
        Turn(text="All done."),
    ]
    agents = {"SUBTASK:": [
        Turn(tools=[ToolCall("Read", {"file_path": str(ws / "notes.txt")})]),
        Turn(tools=[ToolCall("Edit", {"file_path": str(ws / "notes.txt"), "old_string": "beta", "new_string": "gamma"})]),
        Turn(text="Notes edited."),
    ]}
    with ScriptedModel(turns, agents=agents) as model:
        run = _claude(cli, model, ws, "--allowedTools", "Write", "Edit", "Bash", "Read", "Agent")
        requests = model.message_requests()
        assert model.unscripted == [] and model.remaining() == 0 and model.remaining("SUBTASK:") == 0
    assert run.returncode == 0, run.stderr
    assert run.result["subtype"] == "success" and run.result["result"] == "All done."
    assert (ws / "a.txt").read_text() == "two\n" and (ws / "b.txt").read_text() == "hi\n"
    assert (ws / "notes.txt").read_text() == "alpha\ngamma\n"
    last = requests[-1]
    assert result_text(last.tool_result("toolu_b") or {}) == "hi"
    assert "Notes edited." in result_text(last.tool_result("toolu_a") or {})
    assert all(r.is_subagent == (r.conversation == "SUBTASK:") for r in requests)


@dataclass(frozen=True)
class HookedSession:
    """One CLI run with every event logged by a command hook that answers some calls."""

    ws: Path
    run: CliRun
    hook_events: list[dict[str, Any]]
    requests: list[ModelRequest]

    def event(self, name: str, tool_use_id: str) -> dict[str, Any]:
        return next(e for e in self.hook_events if e["hook_event_name"] == name and e.get("tool_use_id") == tool_use_id)

    def result(self, tool_use_id: str) -> dict[str, Any]:
        return next(r.tool_result(tool_use_id) for r in self.requests if r.tool_result(tool_use_id)) or {}


def _pre(match: str, **output: Any) -> dict[str, Any]:
    return {"event": "PreToolUse", "match": match,
            "stdout": {"hookSpecificOutput": {"hookEventName": "PreToolUse", **output}}}


def _allow_permission(match: str) -> dict[str, Any]:
    return {"event": "PermissionRequest", "match": match,
            "stdout": {"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {"behavior": "allow"}}}}


@pytest.fixture(scope="module")
def hooked(cli: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[HookedSession]:
    root = tmp_path_factory.mktemp("hooked")
    ws = root / "ws"
    rules = [
        _pre("toolu_deny", permissionDecision="deny", permissionDecisionReason="Belay: refused by the reviewer"),
        _pre("toolu_rewrite", permissionDecision="allow", updatedInput={"file_path": str(ws / "r.txt"), "content": "hook\n"}),
        {"event": "PreToolUse", "match": "toolu_exit2", "exit": 2, "stderr": "Belay: blocked by exit 2"},
        _allow_permission("touch asked.txt"),
        _allow_permission("exit 3"),  # in case the CLI asks for it: Bash is not in --allowedTools
    ]
    hooks, log = _logging_hooks(root, rules)
    _project(root, hooks, {"notes.txt": "alpha\nbeta\n"})
    bash = lambda command, id: ToolCall("Bash", {"command": command, "description": "Run it"}, id=id)  # noqa: E731
    turns = [
        Turn(tools=[ToolCall("Write", {"file_path": str(ws / "denied.txt"), "content": "x\n"}, id="toolu_deny")]),
        Turn(tools=[ToolCall("Write", {"file_path": str(ws / "r.txt"), "content": "model\n"}, id="toolu_rewrite")]),
        Turn(tools=[ToolCall("Edit", {"file_path": str(ws / "r.txt"), "old_string": "hook", "new_string": "edited"},
                             id="toolu_edit")]),
        Turn(tools=[bash("touch blocked.txt", "toolu_exit2")]),
        Turn(tools=[bash("echo oops >&2; exit 3", "toolu_fail")]),
        Turn(tools=[bash("touch asked.txt", "toolu_asked")]),
        Turn(tools=[ToolCall("Agent", {"description": "Edit notes", "prompt": "SUBTASK: beta becomes gamma",
                                       "subagent_type": "general-purpose", "run_in_background": False}, id="toolu_agent")]),
        Turn(text="All done."),
    ]
    agents = {"SUBTASK:": [
        Turn(tools=[ToolCall("Read", {"file_path": str(ws / "notes.txt")}, id="toolu_sub_read")]),
        Turn(tools=[ToolCall("Edit", {"file_path": str(ws / "notes.txt"), "old_string": "beta", "new_string": "gamma"},
                             id="toolu_sub_edit")]),
        Turn(text="Notes edited."),
    ]}
    with ScriptedModel(turns, agents=agents) as model:
        run = _claude(cli, model, ws, "--allowedTools", "Write", "Edit", "Read", "Agent")
        assert run.returncode == 0 and model.unscripted == [], run.stderr
        requests = model.message_requests()
    yield HookedSession(ws, run, [json.loads(line) for line in log.read_text().splitlines()], requests)


def test_a_denied_call_reaches_the_model_as_an_error_with_the_reason(hooked: HookedSession) -> None:
    assert not (hooked.ws / "denied.txt").exists()
    result = hooked.result("toolu_deny")
    assert result["is_error"] is True and "Belay: refused by the reviewer" in result_text(result)
    assert "toolu_deny" in [d["tool_use_id"] for d in hooked.run.result["permission_denials"]]


def test_exit_code_2_blocks_and_its_stderr_reaches_the_model(hooked: HookedSession) -> None:
    assert not (hooked.ws / "blocked.txt").exists()
    result = hooked.result("toolu_exit2")
    assert result["is_error"] is True and "Belay: blocked by exit 2" in result_text(result)


def test_updated_input_is_what_gets_written_and_what_post_tool_use_sees(hooked: HookedSession) -> None:
    assert (hooked.ws / "r.txt").read_text() == "edited\n"  # "hook\n" was written, then edited
    assert hooked.event("PostToolUse", "toolu_rewrite")["tool_input"]["content"] == "hook\n"


def test_post_tool_use_of_an_edit_carries_the_original_file_and_a_patch(hooked: HookedSession) -> None:
    response = hooked.event("PostToolUse", "toolu_edit")["tool_response"]
    assert response["originalFile"] == "hook\n"
    assert response["structuredPatch"][0]["lines"] == ["-hook", "+edited"]
    created = hooked.event("PostToolUse", "toolu_rewrite")["tool_response"]
    assert created["type"] == "create" and created["originalFile"] is None


def test_a_failing_command_reports_post_tool_use_failure(hooked: HookedSession) -> None:
    failure = hooked.event("PostToolUseFailure", "toolu_fail")
    assert failure["error"] == "Exit code 3\noops" and failure["is_interrupt"] is False
    assert not [e for e in hooked.hook_events if e["hook_event_name"] == "PostToolUse" and e["tool_use_id"] == "toolu_fail"]


def test_a_permission_request_hook_can_allow_a_call_no_rule_allows(hooked: HookedSession) -> None:
    request = next(e for e in hooked.hook_events
                   if e["hook_event_name"] == "PermissionRequest" and "asked" in e["tool_input"]["command"])
    assert request["tool_input"]["command"] == "touch asked.txt" and "tool_use_id" not in request
    assert (hooked.ws / "asked.txt").exists()


def test_subagent_start_precedes_its_calls_which_carry_its_agent_id(hooked: HookedSession) -> None:
    names = [(e["hook_event_name"], e.get("tool_use_id")) for e in hooked.hook_events]
    start = next(e for e in hooked.hook_events if e["hook_event_name"] == "SubagentStart")
    agent_id = start["agent_id"]
    assert names.index(("PreToolUse", "toolu_agent")) < names.index(("SubagentStart", None))
    assert names.index(("SubagentStart", None)) < names.index(("PreToolUse", "toolu_sub_read"))
    assert names.index(("SubagentStop", None)) < names.index(("PostToolUse", "toolu_agent"))
    assert hooked.event("PreToolUse", "toolu_sub_edit")["agent_id"] == agent_id
    assert "agent_id" not in hooked.event("PreToolUse", "toolu_edit")
    assert hooked.event("PostToolUse", "toolu_agent")["tool_response"]["agentId"] == agent_id
    assert (hooked.ws / "notes.txt").read_text() == "alpha\ngamma\n"


def test_the_session_is_bracketed_by_start_and_end(hooked: HookedSession) -> None:
    first, last = hooked.hook_events[0], hooked.hook_events[-1]
    assert (first["hook_event_name"], first["source"]) == ("SessionStart", "startup")
    assert last["hook_event_name"] == "SessionEnd"
    assert len({e["session_id"] for e in hooked.hook_events}) == 1


def _write_then_bash(ws: Path) -> list[Turn]:
    return [Turn(tools=[ToolCall("Write", {"file_path": str(ws / "w.txt"), "content": "x\n"})]),
            Turn(tools=[ToolCall("Bash", {"command": "touch b.txt", "description": "Touch b"})]),
            Turn(text="All done.")]


def test_on_failure_block_turns_a_missing_hook_into_a_denial(cli: Path, tmp_path: Path) -> None:
    missing = str(tmp_path / "no-such-hook")
    ws = _project(tmp_path, {"PreToolUse": [
        {"matcher": "Write", "hooks": [{"type": "command", "command": missing, "onFailure": "block"}]},
        {"matcher": "Bash", "hooks": [{"type": "command", "command": missing}]},
    ]})
    with ScriptedModel(_write_then_bash(ws)) as model:
        run = _claude(cli, model, ws, "--allowedTools", "Write", "Bash(touch b.txt)")
        results = [r.last_tool_result() or {} for r in model.message_requests()[1:]]
    assert run.returncode == 0, run.stderr
    assert not (ws / "w.txt").exists() and (ws / "b.txt").exists()
    assert results[0]["is_error"] is True and 'onFailure is "block"' in result_text(results[0])


def test_an_invalid_hook_entry_silently_drops_the_whole_settings_file(cli: Path, tmp_path: Path) -> None:
    hooks, log = _logging_hooks(tmp_path, [{"event": "PreToolUse", "match": "", "exit": 2, "stderr": "blocked"}])
    hooks["PreToolUse"][0]["hooks"][0]["onFailure"] = "explode"  # not "continue" or "block"
    ws = _project(tmp_path, hooks)
    with ScriptedModel(_write_then_bash(ws)) as model:
        run = _claude(cli, model, ws, "--allowedTools", "Write", "Bash(touch b.txt)")
    assert run.returncode == 0 and run.stderr == ""
    assert (ws / "w.txt").exists() and (ws / "b.txt").exists()  # nothing blocked
    assert not log.exists()  # not even SessionStart ran
