"""Agents Belay does not run itself, served on the console's socket: MCP clients' tools, calls and goodbyes."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Coroutine, Sequence
from pathlib import Path
from typing import Any, TypeVar

from core import AgentStatus, Console, RunStatus, config_dir, install_token
from core.bus import EventBus
from core.errors import ErrorInfo, ErrorKind
from core.ids import AgentId, CallId, new_session_id
from core.outside.agents import SERVED_TOOLS, Host, OutsideAgents, describe_tool
from core.outside.intercept import Interceptor
from core.paths import Workspace
from core.policy.engine import PolicyEngine
from core.recorder import Recorder
from core.run.approvals import ApprovalBroker
from core.run.calls import AgentHandle, CallOutcome, Calls
from core.store.blobs import BlobStore
from core.tasks import spawn
from core.tools.registry import ToolRegistry, file_tools
from core.tools.task import TaskTool
from tests.conftest import run, wait_until

T = TypeVar("T")


async def _ask(socket: Path, kind: str, **fields: Any) -> dict[str, Any]:
    """One request on the console's socket, as `belay mcp-serve` sends it."""
    reader, writer = await asyncio.open_unix_connection(str(socket))
    writer.write(json.dumps({"token": install_token(config_dir()), "kind": kind, **fields}).encode() + b"\n")
    await writer.drain()
    line = await reader.readline()
    writer.close()
    await writer.wait_closed()
    return json.loads(line)


def _socket(console: Console) -> Path:
    assert console.endpoint is not None, "a tracking, serving console has one"
    return console.endpoint.path


class _Host:
    """Just what `Host` asks: starting agents, running calls, owning tasks (and where a test keeps its tools)."""

    def __init__(self, root: Path, tools: ToolRegistry) -> None:
        self.workspace, self.state_dir, self.registry = Workspace(root), root / "state", tools
        self.started: list[tuple[str, str]] = []
        self.calls: list[tuple[str, str, object]] = []

    async def start_agent(self, name: str, kind: str, *, parent: AgentHandle | None = None,
                          spawned_by: CallId | None = None, tools: Sequence[str] | None = None) -> AgentHandle:
        self.started.append((name, kind))
        return AgentHandle(AgentId(f"agent-{len(self.started)}"), name, new_session_id())

    async def call(self, agent: AgentHandle, tool: str, args: object) -> CallOutcome:
        self.calls.append((agent.agent_id, tool, args))
        return CallOutcome(CallId(f"call-{len(self.calls)}"), RunStatus.FAILED, "no such file", {"tried": [tool]},
                           ErrorInfo(kind=ErrorKind.NOT_FOUND, message="x.py does not exist"))

    def launch(self, coro: Coroutine[Any, Any, T], name: str) -> asyncio.Task[T]:
        return spawn(coro, name)


def test_a_tool_is_described_with_the_argument_names_a_client_must_send_and_its_hints() -> None:
    tools = {t.name: t for t in file_tools()}
    grep = describe_tool(tools["Grep"])
    assert grep["name"] == "Grep" and grep["description"] == tools["Grep"].description
    properties = grep["input_schema"]["properties"]
    assert {"pattern", "-i", "-B", "-n"} <= set(properties) and "case_insensitive" not in properties
    assert grep["input_schema"]["required"] == ["pattern"]
    assert grep["annotations"] == {"read_only": True, "destructive": False, "idempotent": True, "open_world": False}
    assert describe_tool(tools["Write"])["annotations"]["read_only"] is False


def test_anything_that_offers_what_host_names_serves_mcp_clients_from_its_own_tools(tmp_path: Path) -> None:
    host = _Host(tmp_path, ToolRegistry([*file_tools(), TaskTool()]))
    (tmp_path / "state").mkdir()

    async def scenario() -> None:
        recorder = await Recorder.open(tmp_path / "journal.sqlite3", EventBus(), new_session_id(), tmp_path)
        calls = Calls(workspace=host.workspace, policy=PolicyEngine(), approvals=ApprovalBroker(), recorder=recorder,
                      always_allow=lambda rule, scope: asyncio.sleep(0))
        interceptor = Interceptor(calls=calls, registry=host.registry, blobs=BlobStore(tmp_path / "blobs"),
                                  tracker=None)
        served: Host = host
        endpoint = await OutsideAgents(served, recorder, interceptor, state_dir=host.state_dir).serve(
            install_token(config_dir()))
        try:
            listed = await _ask(endpoint.path, "tools")
            first = await _ask(endpoint.path, "call", tool="Read", args={"file_path": "x.py"}, client="zed")
            second = await _ask(endpoint.path, "call", tool="LS", args={}, client="zed")
        finally:
            await endpoint.close()
            await recorder.close()
        assert [t["name"] for t in listed["tools"]] == [t.name for t in file_tools() if t.name in SERVED_TOOLS]
        assert first == {"ok": True, "status": "failed", "text": "no such file", "data": {"tried": ["Read"]},
                         "call_id": "call-1", "error": ErrorInfo(kind=ErrorKind.NOT_FOUND,
                                                                 message="x.py does not exist").model_dump(mode="json")}
        assert second["call_id"] == "call-2" and second["error"]["kind"] == "not-found"
        assert host.started == [("zed", "mcp")]  # one agent for the client's session
        assert host.calls == [("agent-1", "Read", {"file_path": "x.py"}), ("agent-1", "LS", {})]

    run(scenario())


def test_a_clients_call_runs_through_the_console_journaled_under_an_agent_named_after_the_client(
        workspace: Path) -> None:
    async def scenario() -> None:
        async with Console(workspace) as console:
            console.register_approver("test")
            socket = _socket(console)
            listed = await _ask(socket, "tools")
            assert {t["name"] for t in listed["tools"]} == SERVED_TOOLS  # every one, and not Task or the git tools
            read = await _ask(socket, "call", tool="Read", args={"file_path": str(workspace / "README.md")},
                              client="zed", client_session="window-1")
            assert read["ok"] and read["status"] == "done" and "shopping-cart" in read["text"]
            write = spawn(_ask(socket, "call", tool="Write", client="zed", client_session="window-1",
                               args={"file_path": str(workspace / "notes.md"), "content": "x\n"}), "client")
            await wait_until(console.pending_approvals, what="the write to ask the person")
            console.deny(console.pending_approvals()[0].call_id, "not today")  # the console's policy and person
            denied = await write
            assert denied["status"] == "denied" and "not today" in denied["text"]
            other = await _ask(socket, "call", tool="LS", args={"path": str(workspace)}, client="zed",
                               client_session="window-2")
            assert other["status"] == "done"
            records = {r.call_id: r for r in await console.history()}
            assert records[read["call_id"]].agent_name == "zed" and records[denied["call_id"]].status == RunStatus.DENIED
            assert records[read["call_id"]].agent_id == records[denied["call_id"]].agent_id  # one session, one agent
            second = console.timeline.agents[records[other["call_id"]].agent_id]
            assert second.agent_id != records[read["call_id"]].agent_id and (second.name, second.agent_kind) == (
                "zed #2", "mcp")  # two sessions of one client at once: told apart by name too
            assert not (workspace / "notes.md").exists()

    run(scenario())


def test_a_tool_belay_does_not_serve_is_refused_without_starting_an_agent(workspace: Path) -> None:
    async def scenario() -> None:
        async with Console(workspace) as console:
            assert "Task" in console.registry.names()  # the console has it; MCP clients are not offered it
            for tool in ("Task", "git_commit", "mcp__github__create_issue"):
                answer = await _ask(_socket(console), "call", tool=tool, args={}, client="zed")
                assert answer == {"ok": True, "status": "failed", "call_id": None,
                                  "text": f"Belay does not offer {tool!r} to MCP clients"}
            assert console.timeline.agents == {} and await console.history() == []

    run(scenario())


def test_bye_finishes_the_clients_agent_and_a_later_call_gets_a_new_one(workspace: Path) -> None:
    async def scenario() -> None:
        async with Console(workspace) as console:
            socket = _socket(console)
            ls = {"path": str(workspace)}
            first = await _ask(socket, "call", tool="LS", args=ls, client="cursor", client_session="a")
            other = await _ask(socket, "call", tool="LS", args=ls, client="cursor", client_session="b")
            assert await _ask(socket, "bye", client_session="a") == {"ok": True}
            assert await _ask(socket, "bye", client_session="never-called") == {"ok": True}
            again = await _ask(socket, "call", tool="LS", args=ls, client="cursor", client_session="a")
            records = {r.call_id: r for r in await console.history()}
            agents = console.timeline.agents
            ended = agents[records[first["call_id"]].agent_id]
            assert (ended.status, ended.message) == (AgentStatus.DONE, "the MCP client disconnected")
            assert agents[records[other["call_id"]].agent_id].status == AgentStatus.RUNNING  # its session goes on
            renewed = agents[records[again["call_id"]].agent_id]
            assert renewed.agent_id != ended.agent_id and renewed.status == AgentStatus.RUNNING

    run(scenario())
