"""Agents Belay does not run itself, served on the console's socket: Claude Code and MCP clients.

The console's endpoint dispatches to this: Claude Code's hook events (to
`ClaudeHooks`), and for `belay mcp-serve` the list of tools it offers and
each call an MCP client makes (run through the console like any agent's,
under an agent named after the client).  It also keeps the Claude sessions
Belay launched through the Agent SDK, so the window can interrupt or stop
them by their agent row.

It needs little of the console, and says exactly what (`Host`): starting
an agent, running a call, owning a task; the console's `Roster`
(core.run.roster) is the one it gets, so a call from a hook goes down to
the pipeline without passing back up through the console.
"""

from __future__ import annotations

import asyncio
import functools
import uuid
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Protocol, TypeVar

from pydantic import BaseModel

from core.ids import AgentId, CallId
from core.models.conversation import Message, capped
from core.models.records import AgentStatus
from core.outside.adapter import HookAdapter
from core.outside.budget import BudgetWatch
from core.outside.claude_session import ClaudeSession, SessionEnd
from core.outside.codex import CodexHooks
from core.outside.endpoint import Endpoint, RefusePeer
from core.outside.gemini import GeminiHooks
from core.outside.hooks import ClaudeHooks
from core.outside.http_door import door_port
from core.outside.intercept import Interceptor
from core.outside.requests import ByeRequest, CallRequest, HookEvent, HookRequest, ToolsRequest, UndoRequest
from core.outside.transcripts import Transcripts
from core.paths import Workspace
from core.recorder import Recorder
from core.run.calls import AgentHandle, CallOutcome
from core.tasks import shielded
from core.tools.base import Tool, ToolArgs
from core.tools.names import ToolName
from core.tools.registry import ToolRegistry
from core.transcripts.reader import TranscriptReader

T = TypeVar("T")

SERVED_TOOLS = frozenset({ToolName.READ, ToolName.WRITE, ToolName.EDIT, ToolName.MULTI_EDIT, ToolName.GLOB,
                          ToolName.GREP, ToolName.LS, ToolName.BASH, ToolName.BASH_OUTPUT, ToolName.KILL_SHELL,
                          ToolName.NOTEBOOK_READ, ToolName.NOTEBOOK_EDIT})
"""What `belay mcp-serve` offers: the supervised file, search, shell and notebook tools."""


class Host(Protocol):
    """What outside agents need to start agents and run their calls (core.run.roster.Roster is one)."""

    async def start_agent(self, name: str, kind: str, *, parent: AgentHandle | None = None,
                          spawned_by: CallId | None = None, tools: Sequence[str] | None = None) -> AgentHandle: ...

    async def call(self, agent: AgentHandle, tool: str, args: object) -> CallOutcome: ...

    def launch(self, coro: Coroutine[Any, Any, T], name: str) -> asyncio.Task[T]: ...



def describe_tool(tool: Tool[ToolArgs]) -> dict[str, Any]:
    """A tool as an MCP client sees it: name, description, JSON schema of its arguments, annotations."""
    a = tool.annotations
    return {"name": tool.name, "description": tool.description,
            "input_schema": _input_schema(tool.Args),
            "annotations": {"read_only": a.read_only, "destructive": a.destructive, "idempotent": a.idempotent,
                            "open_world": a.open_world}}


@functools.cache
def _input_schema(args: type[ToolArgs]) -> dict[str, Any]:
    """Made once per model: pydantic takes milliseconds to build one, and a client lists the tools often."""
    return args.model_json_schema(by_alias=True)


class OutsideAgents:
    """Claude Code sessions (hooked or launched) and MCP clients of one console."""

    def __init__(self, host: Host, recorder: Recorder, interceptor: Interceptor, *, state_dir: Path) -> None:
        self.host, self.recorder, self.state_dir = host, recorder, state_dir
        self.workspace: Workspace = interceptor.workspace
        self.registry: ToolRegistry = interceptor.registry
        self.hooks = ClaudeHooks(interceptor, self)
        self.adapters: dict[str, HookAdapter[Any]] = {"claude": self.hooks, "gemini": GeminiHooks(interceptor, self),
                                                      "codex": CodexHooks(interceptor, self)}
        """Each agent CLI's hook protocol, by the hook command's `--agent`."""
        self._clients: dict[str, AgentHandle] = {}
        """MCP clients served through `belay mcp-serve`, by their session key."""
        self._sessions: list[ClaudeSession] = []
        self.transcripts = Transcripts(recorder, BudgetWatch(recorder, interceptor.calls.policy))
        """The agents' own transcripts, followed beside their calls."""
        self.endpoint: Endpoint | None = None

    async def serve(self, token: str, refuse_peer: RefusePeer | None = None,
                    undo: Callable[[UndoRequest], Awaitable[BaseModel]] | None = None, http: bool = True) -> Endpoint:
        """Open the console's socket with this install's token, and answer on it.

        `refuse_peer(pid)` says which connecting processes to turn away though they hold the token:
        the console's own commands (see core.outside.endpoint).  `undo` answers `belay undo|redo` run in a
        terminal while this console owns the workspace (its report, as JSON).  `http`: also serve Claude Code's
        http hooks, on the workspace's port (core.outside.http_door)."""
        port = await asyncio.to_thread(door_port, self.state_dir) if http else None
        endpoint = Endpoint(self.state_dir, token, self.workspace.root, refuse_peer=refuse_peer, http_port=port)
        endpoint.handle(HookRequest, self._hook)
        endpoint.handle(ToolsRequest, self._tools)
        endpoint.handle(CallRequest, self._call)
        endpoint.handle(ByeRequest, self._bye)
        if undo is not None:
            async def undone(request: UndoRequest) -> dict[str, Any]:
                return {"report": (await undo(request)).model_dump(mode="json")}
            endpoint.handle(UndoRequest, undone)
        await endpoint.start()
        self.endpoint = endpoint
        return endpoint

    async def aclose(self) -> None:
        """Stop serving: the socket closes, the transcripts are no longer followed."""
        try:
            if self.endpoint is not None:
                await self.endpoint.close()
        finally:
            await self.transcripts.aclose()

    # -- Claude Code ---------------------------------------------------------

    async def hook(self, request: HookRequest) -> dict[str, Any]:
        """One hook event from any agent CLI (also handed on by the console for every workspace, core.hub)."""
        return await self._hook(request)

    async def _hook(self, request: HookRequest) -> dict[str, Any]:
        if request.launched and any(s.nonce == request.launched for s in self._sessions):
            # A session this console launched, in a project that also has Belay's hooks installed: its calls
            # are decided through the SDK's callbacks; deciding them again here would wait on its own lock.
            return {"exit": 0, "stdout": None, "stderr": ""}
        await self.recorder.session()
        adapter = self.adapters.get(request.agent)
        if adapter is None:
            return {"exit": 2, "stdout": None, "stderr": f"Belay: this console does not serve {request.agent}'s hooks"}
        return await adapter.request(request)

    def launch_claude(self, prompt: str, *, model: str | None = None, env: dict[str, str] | None = None,
                      cli_path: str | None = None, follow_ups: bool = False) -> asyncio.Task[SessionEnd]:
        session = ClaudeSession(self.hooks, self.workspace.root, prompt, model=model, env=env,
                                cli_path=cli_path, follow_ups=follow_ups)
        self._sessions.append(session)
        return self.host.launch(self._supervised(session), "claude session")

    async def _supervised(self, session: ClaudeSession) -> SessionEnd:
        """Run a launched session, and end its agents with it: the SDK sends no SessionEnd hook, and an agent
        left "running" would read as failed when the workspace is opened again."""
        status, why = AgentStatus.FAILED, "the session failed"
        try:
            end = await session.run()
            status, why = (AgentStatus.DONE if end.ok else AgentStatus.FAILED), end.summary or "finished"
            return end
        except asyncio.CancelledError:
            status, why = AgentStatus.CANCELLED, "the session was stopped"
            raise
        except Exception as e:
            why = f"the session failed: {e}"
            raise
        finally:
            self._sessions.remove(session)
            await shielded(self._end_launched(session, status, why))

    async def _end_launched(self, session: ClaudeSession, status: AgentStatus, why: str) -> None:
        agent = self.hooks.session_agent(session.session_id or "")
        if agent is None:
            return  # it never made a call
        await self.hooks.handle(HookEvent(hook_event_name="SessionEnd", session_id=session.session_id or "",
                                          reason=why))  # its sub-agents end too
        if status is not AgentStatus.DONE:
            await self.recorder.agent_finished(agent.agent_id, status, why)

    async def note(self, agent_id: str, text: str) -> bool:
        """A note from the person to a hooked Claude Code agent: journaled now as the person's words in its
        conversation, delivered once with its next call (core.outside.notes).  To a session Belay launched that
        waits for the person, it is the session's next message instead (its transcript records it as a prompt).
        False: no live session of Claude Code has that agent (or the note is empty), and nothing was kept."""
        launched = self.controls(agent_id)
        if launched is not None and launched.waiting and text.strip():
            launched.send(text.strip())
            return True
        agent = self.hooks.live_agent(agent_id)
        if agent is None or not text.strip():
            return False
        kept, cut = capped(text.strip())
        message = Message(message_id=f"note-{uuid.uuid4().hex}", agent_id=agent.agent_id, kind="note", text=kept,
                          at=datetime.now(timezone.utc), cut=cut)
        self.hooks.notes.hold(agent.agent_id, text.strip())
        await self.recorder.conversation(agent.agent_id, [message], [])
        return True

    def controls(self, agent_id: str) -> ClaudeSession | None:
        for session in self._sessions:
            agent = self.hooks.session_agent(session.session_id or "")
            if agent is not None and agent.agent_id == agent_id:
                return session
        return None

    # -- MCP clients (belay mcp-serve) -----------------------------------------

    async def _tools(self, request: ToolsRequest) -> dict[str, Any]:
        return {"tools": [describe_tool(t) for t in self.registry if t.name in SERVED_TOOLS]}

    async def _call(self, request: CallRequest) -> dict[str, Any]:
        """One MCP client's call, run like any agent's: policy, approval, capture, journal."""
        if request.tool not in SERVED_TOOLS:
            text = f"Belay does not offer {request.tool!r} to MCP clients"
            return {"status": "failed", "text": text, "call_id": None}
        agent = await self._client(request.client or "mcp client", request.client_session or "default")
        outcome = await self.host.call(agent, request.tool, request.args)
        return {"status": outcome.status.value, "text": outcome.text, "data": outcome.data, "call_id": outcome.call_id,
                "error": outcome.error.model_dump(mode="json") if outcome.error else None}

    async def _bye(self, request: ByeRequest) -> dict[str, Any]:
        handle = self._clients.pop(request.client_session or "default", None)
        if handle is not None:
            await self.finish_agent(handle, "the MCP client disconnected")
        return {}

    async def _client(self, client: str, session: str) -> AgentHandle:
        handle = self._clients.get(session)
        if handle is None:
            taken = {h.name for h in self._clients.values()}
            name = next(n for n in (client, *(f"{client} #{i}" for i in range(2, len(taken) + 3))) if n not in taken)
            handle = self._clients[session] = await self.host.start_agent(name, "mcp")
        return handle

    # -- what the hook adapters need (core.outside.adapter.HookHost) ----------------

    async def start_agent(self, name: str, kind: str, *, parent: AgentHandle | None = None,
                          spawned_by: str | None = None) -> AgentHandle:
        return await self.host.start_agent(name, kind, parent=parent,
                                           spawned_by=CallId(spawned_by) if spawned_by is not None else None)

    async def link_agent(self, agent_id: AgentId, spawned_by: str) -> None:
        await self.recorder.agent_linked(agent_id, CallId(spawned_by))

    async def finish_agent(self, agent: AgentHandle, message: str) -> None:
        await self.recorder.agent_finished(agent.agent_id, AgentStatus.DONE, message)

    def follow_transcript(self, path: Path, reader: TranscriptReader) -> None:
        self.transcripts.follow(path, reader)

    async def read_transcripts(self, *agents: AgentHandle, use_id: str = "") -> None:
        """What the agents' transcripts gained; with `use_id`, until the response that made that call is read
        (bounded: core.outside.transcripts.USE_WAIT_S)."""
        if use_id and len(agents) == 1:
            await self.transcripts.catch_up_to(agents[0].agent_id, use_id)
        else:
            await self.transcripts.catch_up(*(agent.agent_id for agent in agents))

    def __repr__(self) -> str:
        return f"<OutsideAgents clients={len(self._clients)} sessions={len(self._sessions)}>"
