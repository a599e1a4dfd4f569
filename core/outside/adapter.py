"""The base of the hook adapters (Claude Code, Codex CLI, Gemini CLI): one skeleton, dispatching on event models.

An adapter turns one agent CLI's hook events into Belay's records and answers.  What is the same for
the three lives here: the event typed (core.outside.hook_events) and handed to the handler its adapter
names for that model (an event with no handler is let be, answered with nothing); a session per
`session_id`, its agent started on its first event; the agent's own process found from the hook command
that sent a call (watched while the call holds the lock).  What an adapter needs of the console is one
protocol, `HookHost`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

from core.ids import AgentId
from core.outside.hook_events import AgentEvent, ToolAsked, typed
from core.outside.intercept import Interceptor
from core.outside.liveness import AgentProcess
from core.outside.requests import HookEvent, HookRequest
from core.run.calls import AgentHandle
from core.transcripts.reader import TranscriptReader


class HookHost(Protocol):
    """What a hook adapter needs of the console: agents started, linked to the call that spawned them, finished
    (core.outside.agents.OutsideAgents is the one it gets)."""

    async def start_agent(self, name: str, kind: str, *, parent: AgentHandle | None = None,
                          spawned_by: str | None = None) -> AgentHandle:
        """A new agent in the window's tree (`kind` "subagent" under `parent`, spawned by that call)."""
        ...

    async def link_agent(self, agent_id: AgentId, spawned_by: str) -> None:
        """A sub-agent's spawning call became known after the sub-agent started."""
        ...

    async def finish_agent(self, agent: AgentHandle, message: str) -> None:
        """The agent is done (its session ended, its turn is over), saying why."""
        ...

    def follow_transcript(self, path: Path, reader: TranscriptReader) -> None:
        """Follow an agent's transcript file (core.outside.transcripts), read by `reader`."""
        ...

    async def read_transcripts(self, *agents: AgentHandle, use_id: str = "") -> None:
        """Record what the agents' transcripts gained since they were last read (with `use_id`, until the response
        that made that call is among it, bounded)."""
        ...


@dataclass(frozen=True)
class HookAnswer:
    """What the hook command prints and exits with."""

    exit: int = 0
    output: dict[str, Any] | None = None
    stderr: str = ""


@dataclass
class HookSession:
    """One session of an agent CLI: its agent, and the process that runs it."""

    agent: AgentHandle
    process: AgentProcess | None = None
    """The agent's own process, found from its last hook command: watched while its calls hold the lock."""
    peer_pid: int | None = None
    """The process that sent the last hook event (the hook command, or whatever else spoke to the socket)."""
    transcript: Path | None = None
    """Where the CLI writes the session's conversation, once an event has said."""


S = TypeVar("S", bound=HookSession)
Handler = Callable[[Any], Awaitable[HookAnswer]]
"""A handler of one event model (typed by the adapter's own method)."""


class HookAdapter(ABC, Generic[S]):
    """One agent CLI's hook events turned into Belay's records and answers, per session of type `S`."""

    client_name: str
    """The CLI's name in the window: its sessions' agents are "<client_name> <part of the session id>"."""

    def __init__(self, interceptor: Interceptor, host: HookHost) -> None:
        self.interceptor, self.host = interceptor, host
        self._sessions: dict[str, S] = {}
        self._handlers: Mapping[type[AgentEvent], Handler] = self._handling()

    @abstractmethod
    def _handling(self) -> Mapping[type[AgentEvent], Handler]:
        """The handler of each event model the CLI sends and Belay acts on."""

    @abstractmethod
    def _new_session(self, agent: AgentHandle) -> S:
        """The state of a session whose agent has just started."""

    def _transcript_reader(self, agent: AgentHandle) -> TranscriptReader | None:
        """How this CLI's transcript is read, for the session's agent; None: Belay does not read it (yet)."""
        return None

    def _agent_name(self, session_id: str) -> str:
        return f"{self.client_name} {session_id[:8]}"

    async def request(self, request: HookRequest) -> dict[str, Any]:
        """The endpoint's handler for kind "hook" (the event was validated at the door): the hook command's
        answer, `{"exit": code, "stdout": JSON object or None, "stderr": text}`."""
        event = typed(request.event)
        if request.peer_pid is not None and isinstance(event, ToolAsked) and type(event) in self._handlers:
            session = await self._session(event)
            session.process = AgentProcess.kept_or_found(session.process, request.peer_pid, session.peer_pid,
                                                         request.direct)
            session.peer_pid = request.peer_pid
        answer = await self._dispatch(event)
        return {"exit": answer.exit, "stdout": answer.output, "stderr": answer.stderr}

    async def handle(self, event: HookEvent) -> HookAnswer:
        """One event (from the socket, or a launched session's callbacks), answered."""
        return await self._dispatch(typed(event))

    async def _dispatch(self, event: AgentEvent | None) -> HookAnswer:
        handler = self._handlers.get(type(event)) if event is not None else None
        if handler is None:
            return HookAnswer()  # an event Belay does not act on: let it be
        return await handler(event)

    async def _session(self, event: AgentEvent) -> S:
        session = self._sessions.get(event.session_id)
        if session is None:
            agent = await self.host.start_agent(self._agent_name(event.session_id), self.client_name)
            session = self._sessions[event.session_id] = self._new_session(agent)
        if session.transcript is None and event.transcript_path:
            session.transcript = Path(event.transcript_path)
            reader = self._transcript_reader(session.agent)
            if reader is not None:
                self.host.follow_transcript(session.transcript, reader)
        return session

    async def _session_start(self, event: AgentEvent) -> HookAnswer:
        await self._session(event)
        return HookAnswer()
