"""`belay mcp-serve` on the points of the protocol a spec-following client relies on (issue 13).

Progress while a call waits for a person; JSON-RPC errors for an unknown tool and a cursor Belay never
gave; its version in serverInfo; the 401's pointer to the protected-resource metadata and that document;
and an HTTP client's agent ended when its MCP session ends (DELETE, or the idle timeout of a session its
client abandoned), not only when mcp-serve exits.
"""

from __future__ import annotations

import asyncio
import importlib.metadata
from pathlib import Path
from typing import Any

import httpx2
import mcp.types as mt
import pytest
from mcp.shared.exceptions import MCPError

from core import AgentStatus, Console, config_dir, install_token
from gui.terminal.mcp_serve import PROGRESS_EVERY_S, ConsoleLink, McpBridge
from tests.conftest import run, wait_until
from tests.integration.test_mcp_serve import ERAS, _http_server, _over_http, _over_stdio, _text


@ERAS
def test_a_waiting_call_sends_progress_and_protocol_errors_are_json_rpc_errors(tmp_path: Path, state_dir: Path,
                                                                               mode: str) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    target = ws / "slow.txt"
    heard: list[tuple[float, float | None, str | None]] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        heard.append((done, total, message))

    async def main() -> None:
        async with Console(ws, state_dir=state_dir) as console:
            unregister = console.register_approver("test")
            try:
                with open(tmp_path / "serve.log", "w") as errlog:
                    async with _over_stdio(ws, state_dir, errlog, mode) as client:
                        assert client.server_info is not None
                        assert client.server_info.name == "belay"
                        assert client.server_info.version == importlib.metadata.version("belay-console")

                        with pytest.raises(MCPError) as unknown:
                            await client.call_tool("Delete", {"file_path": str(target)})
                        assert unknown.value.code == mt.INVALID_PARAMS and "Delete" in unknown.value.message
                        with pytest.raises(MCPError) as cursor:
                            await client.list_tools(cursor="not-a-cursor", cache_mode="bypass")
                        assert cursor.value.code == mt.INVALID_PARAMS

                        call = asyncio.ensure_future(client.call_tool(
                            "Write", {"file_path": str(target), "content": "late\n"}, progress_callback=progress))
                        await wait_until(console.pending_approvals, 20, "the Write to wait for approval")
                        await wait_until(lambda: len(heard) >= 2, 3 * PROGRESS_EVERY_S + 10,
                                         "two progress notifications while the approval waits")
                        [pending] = console.pending_approvals()
                        assert console.approve(pending.call_id)
                        done = await asyncio.wait_for(call, 20)
                        assert not done.is_error, _text(done)
            finally:
                unregister()

    run(main())
    assert target.read_text() == "late\n"
    assert all("waiting for approval in Belay" in (message or "") for _, _, message in heard), heard
    assert [p for p, _, _ in heard] == sorted({p for p, _, _ in heard}), heard  # strictly increasing


def test_a_401_points_to_the_protected_resource_metadata_which_says_how_to_authorize(tmp_path: Path,
                                                                                    state_dir: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()

    async def main() -> None:
        with open(tmp_path / "serve.log", "w") as errlog:
            async with _http_server(ws, state_dir, errlog) as (url, _), httpx2.AsyncClient() as http:
                bare = await http.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
                assert bare.status_code == 401
                challenge = bare.headers["www-authenticate"]
                assert challenge.startswith("Bearer ")
                metadata_url = challenge.split('resource_metadata="')[1].split('"')[0]
                origin = url.removesuffix("/mcp")
                assert metadata_url == f"{origin}/.well-known/oauth-protected-resource/mcp"
                wrong = await http.post(url, json={}, headers={"Authorization": "Bearer nope"})
                assert wrong.status_code == 401 and 'error="invalid_token"' in wrong.headers["www-authenticate"]

                for where in (metadata_url, f"{origin}/.well-known/oauth-protected-resource"):
                    document = await http.get(where)  # no token: discovery comes before authorization
                    assert document.status_code == 200, where
                    metadata = document.json()
                    assert metadata["resource"] == url
                    assert metadata["bearer_methods_supported"] == ["header"]
                    assert "authorization_servers" not in metadata  # none can issue Belay's static token
                assert (await http.post(metadata_url)).status_code == 405
                assert (await http.get(f"{origin}/.well-known/other")).status_code == 401

    run(main())


@pytest.mark.parametrize("mode", ["legacy"], ids=["initialize handshake"])
def test_an_http_clients_agent_ends_when_its_session_ends(tmp_path: Path, state_dir: Path, mode: str) -> None:
    """The SDK's client ends its session with DELETE on close: its agent ends then, while mcp-serve runs on."""
    ws = tmp_path / "ws"
    ws.mkdir()
    token = install_token(config_dir())

    async def main() -> None:
        async with Console(ws, state_dir=state_dir) as console:
            with open(tmp_path / "serve.log", "w") as errlog:
                async with _http_server(ws, state_dir, errlog) as (url, process):
                    agents = []
                    for i in range(2):
                        async with _over_http(url, token, mode) as client:
                            read = await client.call_tool("LS", {"path": str(ws)})
                            assert not read.is_error, _text(read)
                            [agent] = [a for a in console.timeline.agents.values()
                                       if a.name == "test-client" and a not in agents]
                            assert agent.status == AgentStatus.RUNNING
                        await wait_until(lambda a=agent: a.status != AgentStatus.RUNNING, 10,  # type: ignore[misc]
                                         f"session {i}'s agent to end when the client closed its session")
                        assert agent.status == AgentStatus.DONE and process.returncode is None
                        agents.append(agent)

    run(main())


class _Link(ConsoleLink):
    """The console's side, recorded: every call is done at once, every request is kept."""

    def __init__(self, workspace: Path) -> None:
        super().__init__(workspace, workspace, "token")
        self.asked: list[tuple[str, dict[str, Any]]] = []

    async def ask(self, kind: str, **fields: Any) -> dict[str, Any]:
        self.asked.append((kind, fields))
        return {"ok": True, "status": "done", "text": "listed", "tools": None}


def test_a_session_the_client_abandons_ends_its_agent_when_it_times_out(tmp_path: Path) -> None:
    """A client that goes away without DELETE: its session's idle timeout ends it, and with it its agent."""
    import uvicorn

    link = _Link(tmp_path)
    bridge = McpBridge(link, prefix="test")
    app = bridge.server().streamable_http_app(session_idle_timeout=0.5)
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}

    async def main() -> None:
        server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_config=None, lifespan="on"))
        serving = asyncio.ensure_future(server.serve())
        try:
            while not server.started:
                await asyncio.sleep(0.02)
            url = f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}/mcp"
            async with httpx2.AsyncClient(headers=headers, timeout=10) as http:
                opened = await http.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                    "protocolVersion": "2025-11-25", "capabilities": {},
                    "clientInfo": {"name": "gone-client", "version": "1"}}})
                session = opened.headers["mcp-session-id"]
                mine = {"mcp-session-id": session, "mcp-protocol-version": "2025-11-25"}
                await http.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=mine)
                called = await http.post(url, json={"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
                    "name": "LS", "arguments": {"path": str(tmp_path)}}}, headers=mine)
                assert called.status_code == 200 and "listed" in called.text
                # No DELETE: the client is gone.  Half a second idle ends the session, and its agent.
                await wait_until(lambda: ("bye", {"client_session": f"test:{session}"}) in link.asked, 10,
                                 "the abandoned session's agent to be ended")
                assert (await http.post(url, json={"jsonrpc": "2.0", "id": 3, "method": "ping"},
                                        headers=mine)).status_code == 404
        finally:
            server.should_exit = True
            await asyncio.wait([serving])

    run(main())
    assert [k for k, _ in link.asked].count("bye") == 1
    [(_, call)] = [a for a in link.asked if a[0] == "call"]
    assert call["client"] == "gone-client" and call["client_session"].startswith("test:")
