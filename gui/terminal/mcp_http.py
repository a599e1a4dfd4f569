"""`belay mcp-serve --http`: Streamable HTTP on the loopback interface, behind the install's token.

A request without the token is answered 401 with `WWW-Authenticate: Bearer resource_metadata=...`, and
the protected-resource metadata (RFC 9728) is served without the token, as the MCP authorization spec has
a client discover it.  The server listens only on a loopback address (127.0.0.1 or ::1).  What it serves
is gui.terminal.mcp_serve's bridge to the console.
"""

from __future__ import annotations

import hmac
import ipaddress
import logging
import socket
from typing import TYPE_CHECKING, Any

import mcp.types as mt
from mcp.server.transport_security import TransportSecuritySettings
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from core import config_dir

if TYPE_CHECKING:
    from gui.terminal.mcp_serve import McpBridge

log = logging.getLogger("gui.terminal.mcp_serve")  # one logger for the command, whichever transport

SHUTDOWN_GRACE_S = 5
"""How long (whole seconds, as uvicorn takes it) a stopping HTTP server lets requests finish; then calls still
waiting (for approval) are cancelled."""
METADATA_PATH = "/.well-known/oauth-protected-resource"
"""Where a client looks for the protected-resource metadata (RFC 9728), with the resource's path appended."""


class BearerGate:
    """Answers 401 to every HTTP request that does not carry the install's token as its bearer token.

    The protected-resource metadata (RFC 9728) is the one thing served without the token: a client that
    follows the MCP authorization spec reads it after the 401 to learn how to authorize."""

    def __init__(self, app: ASGIApp, token: str, resource: str) -> None:
        """`resource`: the MCP endpoint's URL (http://127.0.0.1:<port>/mcp)."""
        self.app = app
        self._token = token.encode()
        self.resource = resource
        path = resource.partition("://")[2].partition("/")[2]
        base = resource[:len(resource) - len(path) - 1]
        self._metadata_paths = {f"{METADATA_PATH}/{path}", METADATA_PATH}
        self.metadata_url = f"{base}{METADATA_PATH}/{path}"

    def metadata(self) -> dict[str, Any]:
        """What Belay's HTTP server is, as a protected resource: a static bearer token in the header, no
        authorization server (none can issue Belay's token: it is the install's, read from its file), so
        `authorization_servers`, optional in RFC 9728, is left out rather than naming one that cannot back it."""
        return {"resource": self.resource, "resource_name": "Belay (belay mcp-serve)",
                "bearer_methods_supported": ["header"]}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope.get("path") in self._metadata_paths:
            if scope.get("method") in ("GET", "HEAD"):
                await JSONResponse(self.metadata(), 200, {"Cache-Control": "no-store"})(scope, receive, send)
            else:
                await JSONResponse({"error": "method not allowed"}, 405, {"Allow": "GET"})(scope, receive, send)
            return
        if scope["type"] == "http":
            refused = self._refusal(dict(scope["headers"]).get(b"authorization"))
            if refused:
                client = scope.get("client") or ("?", 0)
                log.warning("refused %s %s from %s:%s: %s", scope.get("method"), scope.get("path"), *client, refused)
                # A JSON-RPC error body: the SDK's client shows its message instead of a bare status.
                message = (f"Unauthorized ({refused}): send `Authorization: Bearer <token>` with the token in "
                           f"{config_dir() / 'token'}")
                body = {"jsonrpc": "2.0", "id": None, "error": {"code": mt.INVALID_REQUEST, "message": message}}
                challenge = f'Bearer realm="belay", resource_metadata="{self.metadata_url}"'
                if refused == "a wrong bearer token":
                    challenge += ', error="invalid_token"'
                await JSONResponse(body, 401, {"WWW-Authenticate": challenge})(scope, receive, send)
                return
        await self.app(scope, receive, send)

    def _refusal(self, header: bytes | None) -> str:
        """Why the request is refused ('' when it is not); never the token itself."""
        scheme, _, given = (header or b"").partition(b" ")
        if header is None or scheme.lower() != b"bearer":
            return "no bearer token"
        return "" if hmac.compare_digest(given.strip(), self._token) else "a wrong bearer token"


def loopback(host: str) -> str:
    """`host` as a loopback IP address; anything else is refused, since Belay listens only on this machine."""
    address = "127.0.0.1" if host.lower() == "localhost" else host.strip("[]")
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        raise ValueError(f"--host {host!r} is not an IP address; use 127.0.0.1 or ::1") from None
    if not ip.is_loopback:
        raise ValueError(f"--host {host} is not a loopback address: Belay's MCP server listens only on this "
                         "machine (127.0.0.1 or ::1), never on a network interface")
    return str(ip)


def listening_socket(host: str, port: int) -> socket.socket:
    """Bound and listening before the URL is printed, so a client that reads it can connect at once."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(128)
    except BaseException:
        sock.close()
        raise
    return sock


def url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


async def serve_http(bridge: McpBridge, sock: socket.socket, token: str) -> None:
    """Streamable HTTP at /mcp on `sock`, behind the bearer check and the SDK's DNS-rebinding guard."""
    import uvicorn  # only this mode needs it

    host, port = url_host(sock.getsockname()[0]), sock.getsockname()[1]
    names = [f"{host}:*", "localhost:*"]
    guard = TransportSecuritySettings(allowed_hosts=names, allowed_origins=[f"http://{n}" for n in names])
    app = bridge.server().streamable_http_app(transport_security=guard)
    gate = BearerGate(app, token, f"http://{host}:{port}/mcp")
    config = uvicorn.Config(gate, log_config=None, access_log=False, ws="none", lifespan="on",
                            timeout_graceful_shutdown=SHUTDOWN_GRACE_S)
    await uvicorn.Server(config).serve(sockets=[sock])
