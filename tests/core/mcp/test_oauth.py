"""Signing in to an HTTP MCP server with OAuth: the settings, where the sign-in is kept, the loopback listener.

The whole flow (discovery, registration, PKCE, scopes, step-up) against a real authorization server is
the conformance suite's auth/* scenarios (tests/integration/test_mcp_conformance.py).
"""

from __future__ import annotations

import asyncio
import stat
from pathlib import Path

import httpx2
import pytest
from mcp.client.auth import OAuthFlowError
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

from core.mcp.manager import McpManager
from core.mcp.oauth import FileTokenStorage, LoopbackCallback, OAuthPlace
from core.mcp.settings import ServerSettings, parse_servers
from core.models.mcp import ServerState
from core.tools.registry import ToolRegistry
from tests.conftest import run


def test_oauth_settings_are_for_url_servers_and_keep_the_secret_out_of_sight() -> None:
    servers, problems = parse_servers({"servers": {
        "linear": {"url": "https://mcp.example.org/mcp", "oauth": True, "oauth_client_id": "belay",
                   "oauth_client_secret": "s3cret-value"},
        "local": {"command": "x", "oauth": True},
        "both": {"url": "https://a.example/mcp", "oauth": True, "headers": {"Authorization": "Bearer t"}},
        "orphan": {"url": "https://a.example/mcp", "oauth_client_secret": "s3cret-value"},
    }}, "settings.toml")
    assert list(servers) == ["linear"] and servers["linear"].oauth
    assert "s3cret-value" not in repr(servers["linear"]) and "s3cret-value" not in " ".join(problems)
    assert any("local" in p and "oauth is for url servers" in p for p in problems)
    assert any("both" in p and "either oauth = true or an Authorization header" in p for p in problems)
    assert any("orphan" in p and "need oauth = true" in p for p in problems)


def test_the_sign_in_is_kept_readable_by_the_user_only(tmp_path: Path) -> None:
    settings = ServerSettings(name="docs", url="https://mcp.example.org/mcp", oauth=True)
    storage = FileTokenStorage(tmp_path / "mcp-oauth" / "docs.json", settings)

    async def scenario() -> None:
        assert await storage.get_tokens() is None and await storage.get_client_info() is None
        await storage.set_tokens(OAuthToken(access_token="at-1", refresh_token="rt-1", expires_in=60))
        await storage.set_client_info(OAuthClientInformationFull(client_id="c-1", redirect_uris=None))
        tokens = await storage.get_tokens()
        assert tokens is not None and (tokens.access_token, tokens.refresh_token) == ("at-1", "rt-1")
        client = await storage.get_client_info()
        assert client is not None and client.client_id == "c-1"

    run(scenario())
    port = storage.redirect_port()
    assert port == storage.redirect_port() > 0  # chosen once: the registration names it
    assert stat.S_IMODE(storage.path.stat().st_mode) == 0o600
    assert stat.S_IMODE(storage.path.parent.stat().st_mode) == 0o700
    assert [p.name for p in storage.path.parent.iterdir()] == ["docs.json"]  # no temporary file left


def test_a_client_registered_beforehand_comes_from_the_settings_and_is_never_stored(tmp_path: Path) -> None:
    settings = ServerSettings(name="docs", url="https://mcp.example.org/mcp", oauth=True, oauth_client_id="belay",
                              oauth_client_secret="s3cret-value")
    storage = FileTokenStorage(tmp_path / "docs.json", settings)

    async def scenario() -> OAuthClientInformationFull | None:
        await storage.set_client_info(OAuthClientInformationFull(client_id="other", redirect_uris=None))
        return await storage.get_client_info()

    client = run(scenario())
    assert client is not None and (client.client_id, client.client_secret) == ("belay", "s3cret-value")
    assert client.token_endpoint_auth_method == "client_secret_basic"
    assert not storage.path.exists()


@pytest.mark.parametrize(("query", "outcome"), [
    ("code=abc&state=xyz", "abc/xyz"),
    ("error=access_denied&error_description=the+person+said+no", "refused the sign-in (access_denied: the person said no)"),
    ("state=xyz", "without an authorization code"),
])
def test_the_loopback_listener_takes_one_answer(tmp_path: Path, query: str, outcome: str) -> None:
    settings = ServerSettings(name="docs", url="https://mcp.example.org/mcp", oauth=True)
    callback = LoopbackCallback(FileTokenStorage(tmp_path / "docs.json", settings).redirect_port())

    async def scenario() -> str:
        await callback.listen()
        async with httpx2.AsyncClient() as browser:
            elsewhere = await browser.get(callback.redirect_uri.replace("/callback", "/favicon.ico"))
            assert elsewhere.status_code == 404
            page = await browser.get(f"{callback.redirect_uri}?{query}")
            assert page.status_code == 200 and "return to Belay" in page.text
        try:
            result = await callback.result(5)
        except OAuthFlowError as e:
            return str(e)
        return f"{result.code}/{result.state}"

    assert outcome in run(scenario())


def test_nobody_signing_in_ends_the_wait(tmp_path: Path) -> None:
    callback = LoopbackCallback(0)

    async def scenario() -> None:
        await callback.listen()
        with pytest.raises(OAuthFlowError, match="nobody signed in within 0.1 s"):
            await callback.result(0.1)

    run(scenario())


@pytest.mark.allow_warning_logs  # the SDK's OAuth client logs its failure as a warning
def test_a_server_that_wants_a_sign_in_nobody_can_give_fails_saying_so(tmp_path: Path) -> None:
    """A 401 naming no authorization server (Belay's own mcp-serve, say) fails the start: nothing to sign in with,
    and no page is opened.  A console that keeps no sign-ins fails such a server at once."""
    import uvicorn
    from starlette.applications import Starlette
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    async def refuse(request: object) -> JSONResponse:
        return JSONResponse({"error": "invalid_token"}, 401, {"WWW-Authenticate": 'Bearer realm="x"'})

    opened: list[str] = []

    async def sign_in(url: str) -> None:
        opened.append(url)

    async def start(settings: ServerSettings, place: OAuthPlace | None) -> str:
        manager = McpManager(ToolRegistry(), {"web": settings}, oauth=place)
        await manager.start()
        try:
            [status] = await manager.wait_started(30)
        finally:
            await manager.close()
        assert status.state == ServerState.FAILED
        return status.describe()

    async def scenario() -> tuple[str, str]:
        app = Starlette(routes=[Route("/{path:path}", refuse, methods=["GET", "POST", "DELETE"])])
        server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_config=None, lifespan="off"))
        serving = asyncio.ensure_future(server.serve())
        try:
            while not server.started:
                await asyncio.sleep(0.02)
            port = server.servers[0].sockets[0].getsockname()[1]
            settings = ServerSettings(name="web", url=f"http://127.0.0.1:{port}/mcp", oauth=True,
                                      startup_timeout_s=5)
            return (await start(settings, OAuthPlace(tmp_path / "tokens", sign_in)), await start(settings, None))
        finally:
            server.should_exit = True
            await asyncio.wait([serving])

    with_place, without = run(scenario())
    assert opened == []
    assert with_place.startswith("failed") and "Registration failed: 401" in with_place, with_place
    assert "keeps no sign-ins" in without
