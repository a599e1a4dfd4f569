"""Agents Belay does not run itself, served on the console's socket: Claude Code and MCP clients.

The console's endpoint dispatches to this: Claude Code's hook events (to
`ClaudeHooks`), and for `belay mcp-serve` the list of tools it offers and
each call an MCP client makes (run through the console like any agent's,
under an agent named after the client).  It also keeps the Claude sessions
Belay launched through the Agent SDK, so the window can interrupt or stop
them by their agent row.
"""

from __future__ import annotations

import asyncio
import functools
from typing import TYPE_CHECKING, Any

from core.outside.claude_session import ClaudeSession, SessionEnd
from core.outside.endpoint import Endpoint
from core.events import AgentFinished, AgentLinked
from core.outside.hooks import ClaudeHooks
from core.outside.intercept import Interceptor
from core.models.records import AgentStatus
from core.run.pipeline import AgentHandle
from core.tools.base import Tool, ToolArgs

if TYPE_CHECKING:
    from core.console import Console

SERVED_TOOLS = frozenset({"Read", "Write", "Edit", "MultiEdit", "Glob", "Grep", "LS", "Bash", "BashOutput",
                          "KillShell", "NotebookRead", "NotebookEdit"})
"""What `belay mcp-serve` offers: the supervised file, search, shell and notebook tools."""


def describe_tool(tool: Tool) -> dict[str, Any]:
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

    def __init__(self, console: Console, interceptor: Interceptor) -> None:
        self.console = console
        self.hooks = ClaudeHooks(interceptor, console.start_agent, self._link, self._finish)
        self._clients: dict[str, AgentHandle] = {}
        """MCP clients served through `belay mcp-serve`, by their session key."""
        self._sessions: list[ClaudeSession] = []

    async def serve(self, token: str) -> Endpoint:
        """Open the console's socket with this install's token, and answer on it."""
        console = self.console
        endpoint = Endpoint(console.state_dir, token, console.workspace.root)
        endpoint.handle("hook", self._hook)
        endpoint.handle("tools", self._tools)
        endpoint.handle("call", self._call)
        endpoint.handle("bye", self._bye)
        await endpoint.start()
        return endpoint

    # -- Claude Code ---------------------------------------------------------

    async def _hook(self, request: dict[str, Any]) -> dict[str, Any]:
        await self.console.ensure_session()
        return await self.hooks.request(request)

    def launch_claude(self, prompt: str, *, model: str | None = None, env: dict[str, str] | None = None,
                      cli_path: str | None = None) -> asyncio.Task[SessionEnd]:
        session = ClaudeSession(self.hooks, self.console.workspace.root, prompt, model=model, env=env,
                                cli_path=cli_path)
        self._sessions.append(session)
        task = self.console.launch(session.run(), "claude session")
        task.add_done_callback(lambda _: self._sessions.remove(session))
        return task

    def controls(self, agent_id: str) -> ClaudeSession | None:
        for session in self._sessions:
            agent = self.hooks.session_agent(session.session_id or "")
            if agent is not None and agent.agent_id == agent_id:
                return session
        return None

    # -- MCP clients (belay mcp-serve) -----------------------------------------

    async def _tools(self, request: dict[str, Any]) -> dict[str, Any]:
        return {"tools": [describe_tool(t) for t in self.console.registry if t.name in SERVED_TOOLS]}

    async def _call(self, request: dict[str, Any]) -> dict[str, Any]:
        """One MCP client's call, run like any agent's: policy, approval, capture, journal."""
        tool, args = str(request.get("tool", "")), request.get("args")
        if tool not in SERVED_TOOLS:
            return {"status": "failed", "text": f"Belay does not offer {tool!r} to MCP clients", "call_id": None}
        agent = await self._client(str(request.get("client") or "mcp client"),
                                   str(request.get("client_session") or "default"))
        outcome = await self.console.call(agent, tool, args if isinstance(args, dict) else {})
        return {"status": outcome.status.value, "text": outcome.text, "data": outcome.data, "call_id": outcome.call_id,
                "error": outcome.error.model_dump(mode="json") if outcome.error else None}

    async def _bye(self, request: dict[str, Any]) -> dict[str, Any]:
        handle = self._clients.pop(str(request.get("client_session") or "default"), None)
        if handle is not None:
            await self._finish(handle, "the MCP client disconnected")
        return {}

    async def _client(self, client: str, session: str) -> AgentHandle:
        handle = self._clients.get(session)
        if handle is None:
            handle = self._clients[session] = await self.console.start_agent(client, "mcp")
        return handle

    # -- agents ----------------------------------------------------------------

    async def _link(self, agent_id: str, spawned_by: str) -> None:
        await self.console.io(self.console.journal.link_agent, agent_id, spawned_by)
        self.console.bus.publish(AgentLinked(agent_id=agent_id, spawned_by=spawned_by))

    async def _finish(self, handle: AgentHandle, message: str) -> None:
        await self.console.io(self.console.journal.finish_agent, handle.agent_id, AgentStatus.DONE)
        self.console.bus.publish(AgentFinished(agent_id=handle.agent_id, status=AgentStatus.DONE, message=message))

    def __repr__(self) -> str:
        return f"<OutsideAgents clients={len(self._clients)} sessions={len(self._sessions)}>"
