"""A Claude Code session Belay launches through the Agent SDK, checked without starting the CLI."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from claude_agent_sdk import ClaudeSDKClient, PermissionResultAllow, PermissionResultDeny

from core import Console, RunStatus
from core.outside import install
from core.outside.claude_session import HOOK_TIMEOUT_S, SDK_EVENTS, ClaudeSession
from core.outside.hook_client import LAUNCHED_ENV
from core.outside.hooks import ClaudeHooks
from tests.conftest import run


def _hooks(console: Console) -> ClaudeHooks:
    assert console.hooks is not None, "a tracking, serving console has them"
    return console.hooks


def _event(name: str, session: str = "sdk-session-1", **fields: Any) -> dict[str, Any]:
    """What the SDK hands a hook callback: Claude Code's hook input (the tool use id also comes as an argument)."""
    return {"session_id": session, "transcript_path": "/dev/null", "cwd": "/", "hook_event_name": name, **fields}


class _Client(ClaudeSDKClient):
    """Never connected: counts the interrupts the session's owning task sends; the first finds Claude between turns."""

    def __init__(self) -> None:
        super().__init__()
        self.interrupts = 0
        self.queries: list[str] = []

    async def query(self, prompt: Any, session_id: str = "default") -> None:
        self.queries.append(prompt)

    async def interrupt(self) -> None:
        self.interrupts += 1
        if self.interrupts == 1:
            raise RuntimeError("no turn to interrupt")


def test_every_tool_lifecycle_event_is_hooked_blocking_on_failure_in_the_workspace(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with Console(tmp_path) as console:
            session = ClaudeSession(_hooks(console), tmp_path, "go", model="claude-test", env={"HTTPS_PROXY": "p"},
                                    cli_path="/opt/claude")
            options = session._options()
            assert install.TOOL_EVENTS | {"SubagentStart", "SubagentStop"} == set(options.hooks or {}) == set(SDK_EVENTS)
            for event, [matcher] in (options.hooks or {}).items():
                assert matcher.matcher is None, event  # every tool, Claude Code's and MCP servers' alike
                assert matcher.on_failure == "block" and matcher.timeout == HOOK_TIMEOUT_S, event
                assert matcher.hooks == [session._hook], event
            assert options.cwd == str(tmp_path) and options.permission_mode == "default"
            assert options.can_use_tool == session._can_use_tool
            launched = {"HTTPS_PROXY": "p", LAUNCHED_ENV: session.nonce}  # its hook commands say they are its
            assert (options.model, options.env, options.cli_path) == ("claude-test", launched, "/opt/claude")

    run(scenario())


def test_when_claude_would_ask_its_user_belays_decision_for_the_same_call_stands_in(workspace: Path) -> None:
    notes = workspace / "notes.md"
    asked = {"file_path": str(notes), "content": "draft\n"}
    seen: list[str] = []

    async def scenario() -> None:
        async with Console(workspace) as console:
            console.register_approver("test")
            session = ClaudeSession(_hooks(console), workspace, "go", on_session=seen.append)
            pre = asyncio.ensure_future(session._hook(_event("PreToolUse", tool_name="Write", tool_input=asked),
                                                      "toolu_1", None))
            while not console.pending_approvals():
                await asyncio.sleep(0.01)
            console.approve(console.pending_approvals()[0].call_id, edited={"notes.md": "as the person wrote it\n"})
            edited = {**asked, "content": "as the person wrote it\n"}
            assert (await pre)["hookSpecificOutput"]["updatedInput"] == edited
            assert session.session_id == "sdk-session-1" and seen == ["sdk-session-1"]
            same = await session._can_use_tool("Write", asked, None)
            assert isinstance(same, PermissionResultAllow) and same.updated_input == edited
            other = await session._can_use_tool("Write", {**asked, "content": "something else\n"}, None)
            assert isinstance(other, PermissionResultDeny) and other.message == "Belay has not approved this call"
            assert not console.pending_approvals()  # a call Belay never saw is refused, not put to the person

    run(scenario())


def test_calls_in_flight_together_are_told_apart_by_the_tool_use_id_the_sdk_passes(workspace: Path) -> None:
    first, second = workspace / "a.txt", workspace / "b.txt"

    async def scenario() -> None:
        async with Console(workspace) as console:
            console.set_mode("bypass")
            session = ClaudeSession(_hooks(console), workspace, "go")
            for use_id, path in (("toolu_a", first), ("toolu_b", second)):
                answer = await session._hook(_event("PreToolUse", tool_name="Write",
                                                    tool_input={"file_path": str(path), "content": "x\n"}), use_id, None)
                assert answer["hookSpecificOutput"]["permissionDecision"] == "allow"
            for use_id, path in (("toolu_a", first), ("toolu_b", second)):
                path.write_text("x\n")
                await session._hook(_event("PostToolUse", tool_name="Write", tool_response={"type": "create"},
                                           tool_input={"file_path": str(path), "content": "x\n"}), use_id, None)
            records = {r.args["file_path"]: r for r in await console.history()}
            assert {p: r.status for p, r in records.items()} == {str(first): RunStatus.DONE,
                                                                 str(second): RunStatus.DONE}
            assert [c.path for c in records[str(first)].changes] == ["a.txt"]
            assert [c.path for c in records[str(second)].changes] == ["b.txt"]

    run(scenario())


def test_interrupt_and_stop_reach_the_client_only_through_the_owning_tasks_queue(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with Console(tmp_path) as console:
            session = ClaudeSession(_hooks(console), tmp_path, "go")
            client = _Client()
            session.interrupt()
            session.interrupt()
            session.stop()
            session.interrupt()  # after the stop: the session is ending, nothing serves it
            assert client.interrupts == 0  # asking from the window touches no client
            await asyncio.wait_for(session._serve_commands(client), 5)  # returns at the stop
            assert client.interrupts == 2  # the first failed (between turns) and the owner went on

    run(scenario())


def test_the_persons_message_is_the_clients_next_query_sent_by_the_owning_task(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with Console(tmp_path) as console:
            session = ClaudeSession(_hooks(console), tmp_path, "go", follow_ups=True)
            session.waiting = True  # as after Claude's answer
            client = _Client()
            session.send("and the docs")
            assert not session.waiting and client.queries == []  # sending from the window touches no client
            session.stop()
            await asyncio.wait_for(session._serve_commands(client), 5)
            assert client.queries == ["and the docs"] and "waiting=False" in repr(session)

    run(scenario())
