"""The hook adapters' base: events dispatched by their model, a session (and its agent) per session id."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping
from pathlib import Path

from core import Console
from core.ids import AgentId, SessionId
from core.outside.adapter import Handler, HookAdapter, HookAnswer, HookHost, HookSession
from core.outside.agents import OutsideAgents
from core.outside.hook_events import AgentEvent, PreToolUseEvent, SessionStartEvent
from core.outside.intercept import Interceptor
from core.outside.liveness import AgentProcess
from core.outside.requests import HookEvent, HookRequest
from core.run.calls import AgentHandle
from tests.conftest import run


class _Host:
    """Keeps what an adapter asked of the console."""

    def __init__(self) -> None:
        self.started: list[tuple[str, str]] = []
        self.finished: list[tuple[str, str]] = []

    async def start_agent(self, name: str, kind: str, *, parent: AgentHandle | None = None,
                          spawned_by: str | None = None) -> AgentHandle:
        self.started.append((name, kind))
        return AgentHandle(AgentId(f"a{len(self.started)}"), name, SessionId("s"))

    async def link_agent(self, agent_id: AgentId, spawned_by: str) -> None:
        raise AssertionError("not asked for here")

    async def finish_agent(self, agent: AgentHandle, message: str) -> None:
        self.finished.append((agent.name, message))


class _Adapter(HookAdapter[HookSession]):
    client_name = "test-cli"

    def __init__(self, host: HookHost) -> None:
        super().__init__(interceptor=None, host=host)  # type: ignore[arg-type]  # these handlers judge nothing
        self.seen: list[AgentEvent] = []

    def _handling(self) -> Mapping[type[AgentEvent], Handler]:
        return {PreToolUseEvent: self._pre, SessionStartEvent: self._session_start}

    def _new_session(self, agent: AgentHandle) -> HookSession:
        return HookSession(agent)

    async def _pre(self, event: PreToolUseEvent) -> HookAnswer:
        self.seen.append(event)
        await self._session(event)
        return HookAnswer(output={"tool": event.tool_name})


def test_an_event_goes_to_the_handler_of_its_model_and_one_without_is_let_be() -> None:
    async def scenario() -> None:
        host = _Host()
        adapter = _Adapter(host)
        answer = await adapter.handle(HookEvent(hook_event_name="PreToolUse", session_id="abcdef123456",
                                                tool_name="Bash"))
        assert answer == HookAnswer(output={"tool": "Bash"}) and isinstance(adapter.seen[0], PreToolUseEvent)
        assert await adapter.handle(HookEvent(hook_event_name="PostToolUse", session_id="other")) == HookAnswer()
        assert await adapter.handle(HookEvent(hook_event_name="Nonsense", session_id="other")) == HookAnswer()
        await adapter.handle(HookEvent(hook_event_name="SessionStart", session_id="abcdef123456"))
        assert host.started == [("test-cli abcdef12", "test-cli")]  # one agent per session; none for the let be

    run(scenario())


def test_a_request_finds_the_agents_process_from_the_hook_command_of_a_call() -> None:
    async def scenario() -> None:
        adapter = _Adapter(_Host())
        event = HookEvent(hook_event_name="PreToolUse", session_id="s-1", tool_name="Read")
        answer = await adapter.request(HookRequest(kind="hook", event=event, peer_pid=os.getpid()))
        assert answer == {"exit": 0, "stdout": {"tool": "Read"}, "stderr": ""}
        session = adapter._sessions["s-1"]
        assert session.peer_pid == os.getpid()  # the hook command: its ancestry names the agent's process
        assert session.process == AgentProcess.of_hook_client(os.getpid())
        started = await adapter.request(HookRequest(kind="hook", event=HookEvent(hook_event_name="SessionStart",
                                                                                 session_id="s-2"), peer_pid=1))
        assert started["exit"] == 0 and adapter._sessions["s-2"].peer_pid is None  # only a call's sender is kept

    run(scenario())


def test_the_console_is_what_every_adapter_of_its_own_gets(workspace: Path) -> None:
    async def scenario() -> None:
        async with Console(workspace) as console:
            assert console.outside is not None
            outside: OutsideAgents = console.outside
            host: HookHost = outside  # the protocol, checked by mypy too
            assert all(adapter.host is host for adapter in outside.adapters.values())
            assert all(isinstance(adapter.interceptor, Interceptor) for adapter in outside.adapters.values())
            await asyncio.sleep(0)

    run(scenario())
