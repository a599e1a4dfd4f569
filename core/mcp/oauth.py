"""Signing in to an HTTP MCP server with OAuth (the MCP authorization spec), through the SDK's OAuth client.

A server configured with `oauth = true` is reached through the SDK's `OAuthClientProvider`.  When
the server answers 401, it discovers the protected-resource metadata (RFC 9728: the
`resource_metadata` of the 401's WWW-Authenticate, else the well-known paths), then the
authorization server's metadata (RFC 8414, OpenID Connect), registers Belay as a client (RFC 7591)
unless `oauth_client_id` names one registered beforehand, and runs the authorization code flow
with PKCE: the person signs in in their browser (`sign_in` opens the page), which is sent back to
a one-time listener on 127.0.0.1 (`LoopbackCallback`); the code is exchanged for tokens, refreshed
when they expire, and asked for afresh when the server wants more scope.

Tokens and the registration are kept in `<config dir>/mcp-oauth/<server>.json`, in a directory
only the user can enter (0700), written whole and readable by the user only (0600).  They are
never logged.  The redirect URI's port is chosen once per server and kept with them, since a
registration names its redirect URI.
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import json
import logging
import os
import socket
import webbrowser
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider, OAuthFlowError
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken
from pydantic import AnyUrl

from core.mcp.settings import ServerSettings

log = logging.getLogger(__name__)

SIGN_IN_S = 300.0
"""How long Belay waits for the person to sign in (the server's start waits this much longer too)."""
CALLBACK_PATH = "/callback"
SignIn = Callable[[str], Awaitable[None]]
"""Shows the person the authorization page (opens it in their browser)."""


async def open_in_browser(url: str) -> None:
    """The default `SignIn`: the person's web browser, opened on the authorization page."""
    log.info("opening the browser to sign in to an MCP server")
    if not await asyncio.to_thread(webbrowser.open, url):
        raise OAuthFlowError("no web browser could be opened to sign in; open Belay's window and restart the server")


class FileTokenStorage:
    """One server's tokens, registration and redirect port, in one JSON file readable by the user only."""

    def __init__(self, path: Path, settings: ServerSettings) -> None:
        self.path = path
        self._settings = settings

    def _read(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as e:
            log.warning("MCP server %s: its sign-in file %s is unreadable (%s); signing in afresh",
                        self._settings.name, self.path, type(e).__name__)
            return {}
        return data if isinstance(data, dict) else {}

    def _write(self, **changes: Any) -> None:
        data = self._read() | changes
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.chmod(self.path.parent, 0o700)
        spare = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        fd = os.open(spare, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(data, f)
                f.flush()
                os.fsync(f.fileno())
            os.replace(spare, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(spare)
            raise

    async def get_tokens(self) -> OAuthToken | None:
        tokens = (await asyncio.to_thread(self._read)).get("tokens")
        return OAuthToken.model_validate(tokens) if isinstance(tokens, dict) else None

    async def set_tokens(self, tokens: OAuthToken) -> None:
        await asyncio.to_thread(self._write, tokens=tokens.model_dump(mode="json", exclude_none=True))

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        if self._settings.oauth_client_id is not None:  # registered beforehand: from the settings, never stored
            secret = self._settings.oauth_client_secret
            return OAuthClientInformationFull(
                client_id=self._settings.oauth_client_id, client_secret=secret,
                token_endpoint_auth_method="client_secret_basic" if secret else "none",
                redirect_uris=None)
        client = (await asyncio.to_thread(self._read)).get("client")
        return OAuthClientInformationFull.model_validate(client) if isinstance(client, dict) else None

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        if self._settings.oauth_client_id is None:
            await asyncio.to_thread(self._write, client=client_info.model_dump(mode="json", exclude_none=True))

    def redirect_port(self) -> int:
        """The port of this server's redirect URI: kept from the first sign-in (blocking: call it off the loop)."""
        port = self._read().get("redirect_port")
        if isinstance(port, int) and 0 < port < 65536:
            return port
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = int(probe.getsockname()[1])
        self._write(redirect_port=port)
        return port

    def __repr__(self) -> str:
        return f"<FileTokenStorage {self._settings.name} at {self.path}>"


class LoopbackCallback:
    """The redirect URI: a listener on 127.0.0.1 that takes one authorization response, then closes."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.redirect_uri = f"http://127.0.0.1:{port}{CALLBACK_PATH}"
        self._server: asyncio.Server | None = None
        self._result: asyncio.Future[AuthorizationCodeResult] | None = None

    async def listen(self) -> None:
        await self.close()
        self._result = asyncio.get_running_loop().create_future()
        try:
            self._server = await asyncio.start_server(self._answer, "127.0.0.1", self.port)
        except OSError as e:
            raise OAuthFlowError(f"cannot listen for the sign-in's answer on 127.0.0.1:{self.port}: "
                                 f"{e.strerror or e}") from None

    async def result(self, timeout_s: float = SIGN_IN_S) -> AuthorizationCodeResult:
        """The authorization response (the code and state); raises OAuthFlowError when refused or not given."""
        assert self._result is not None, "listen first"
        try:
            async with asyncio.timeout(timeout_s):
                return await self._result
        except TimeoutError:
            raise OAuthFlowError(f"nobody signed in within {timeout_s:g} s") from None
        finally:
            await self.close()

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
            self._server = None

    async def _answer(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            async with asyncio.timeout(10):
                request = (await reader.readline()).decode("latin-1").split()
                while (await reader.readline()).strip():
                    pass
            target = urlsplit(request[1]) if len(request) >= 2 else None
            if target is None or target.path != CALLBACK_PATH:
                writer.write(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                return
            query = {k: v[0] for k, v in parse_qs(target.query).items()}
            said = self._settle(query)
            body = (f"<!doctype html><title>Belay</title><p>{html.escape(said)}</p>"
                    "<p>You can close this tab and return to Belay.</p>").encode()
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n"
                         + f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode() + body)
        except (OSError, TimeoutError, UnicodeError):
            pass
        finally:
            with contextlib.suppress(OSError):
                await writer.drain()
            writer.close()

    def _settle(self, query: dict[str, str]) -> str:
        if self._result is None or self._result.done():
            return "Belay was not waiting for this sign-in."
        if "error" in query:
            why = query["error"] + (f": {query['error_description']}" if query.get("error_description") else "")
            self._result.set_exception(OAuthFlowError(f"the authorization server refused the sign-in ({why})"))
            return "The sign-in was refused."
        if not query.get("code"):
            self._result.set_exception(OAuthFlowError("the sign-in came back without an authorization code"))
            return "The sign-in came back without a code."
        self._result.set_result(AuthorizationCodeResult(code=query["code"], state=query.get("state"),
                                                        iss=query.get("iss")))
        return "Signed in."

    def __repr__(self) -> str:
        return f"<LoopbackCallback {self.redirect_uri}>"


async def oauth_provider(settings: ServerSettings, token_dir: Path, sign_in: SignIn,
                         client_name: str = "Belay") -> OAuthClientProvider:
    """The httpx auth that signs in to `settings`' server (tokens under `token_dir`)."""
    assert settings.url is not None
    storage = FileTokenStorage(token_dir / f"{settings.name}.json", settings)
    callback = LoopbackCallback(await asyncio.to_thread(storage.redirect_port))

    async def redirect(url: str) -> None:
        await callback.listen()  # before the page opens: the answer may come back at once
        try:
            await sign_in(url)
        except BaseException:
            await callback.close()
            raise

    metadata = OAuthClientMetadata(client_name=client_name, redirect_uris=[AnyUrl(callback.redirect_uri)],
                                   grant_types=["authorization_code", "refresh_token"], response_types=["code"],
                                   token_endpoint_auth_method="none" if settings.oauth_client_id is None else None)
    return OAuthClientProvider(settings.url, metadata, storage, redirect_handler=redirect,
                               callback_handler=callback.result)


class OAuthPlace:
    """Where a console keeps its MCP sign-ins, and how it shows the person a sign-in page."""

    def __init__(self, token_dir: Path, sign_in: SignIn = open_in_browser) -> None:
        self.token_dir, self.sign_in = token_dir, sign_in

    async def provider(self, settings: ServerSettings) -> OAuthClientProvider:
        return await oauth_provider(settings, self.token_dir, self.sign_in)

    def __repr__(self) -> str:
        return f"<OAuthPlace {self.token_dir}>"
