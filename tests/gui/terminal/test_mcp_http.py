"""`belay mcp-serve --http`: only the loopback interface, and only with the install's bearer token."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from gui.terminal.mcp_http import BearerGate, listening_socket, loopback, url_host

TOKEN = "t" * 64
RESOURCE = "http://127.0.0.1:8765/mcp"


@pytest.mark.parametrize(("host", "address"), [("localhost", "127.0.0.1"), ("127.0.0.1", "127.0.0.1"),
                                               ("[::1]", "::1"), ("127.0.0.2", "127.0.0.2")])
def test_a_loopback_host_is_taken_as_its_address(host: str, address: str) -> None:
    assert loopback(host) == address


@pytest.mark.parametrize(("host", "said"), [("0.0.0.0", "not a loopback address"), ("example.com", "not an IP"),
                                            ("192.168.1.10", "never on a network interface")])
def test_any_other_host_is_refused_saying_why(host: str, said: str) -> None:
    with pytest.raises(ValueError, match=said):
        loopback(host)


def test_a_listening_socket_is_bound_before_its_url_is_printed() -> None:
    with listening_socket("127.0.0.1", 0) as sock:
        host, port = sock.getsockname()[:2]
        assert (url_host(host), port > 0, url_host("::1")) == ("127.0.0.1", True, "[::1]")


def _request(gate: BearerGate, path: str, headers: dict[bytes, bytes], method: str = "GET") -> tuple[int, Any]:
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {"type": "http", "method": method, "path": path, "headers": list(headers.items()),
             "client": ("127.0.0.1", 5000)}
    asyncio.run(gate(scope, receive, send))  # type: ignore[arg-type]
    start = next(m for m in sent if m["type"] == "http.response.start")
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return start["status"], json.loads(body) if body else None


async def _app(scope: Any, receive: Any, send: Any) -> None:
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b'{"served": true}'})


@pytest.mark.allow_warning_logs(  # each refusal is logged, never the token
    "gui.terminal.mcp_serve: refused GET /mcp from 127.0.0.1:5000: no bearer token",
    "gui.terminal.mcp_serve: refused GET /mcp from 127.0.0.1:5000: a wrong bearer token")
def test_the_token_lets_a_request_through_and_its_absence_is_a_401_naming_the_metadata() -> None:
    gate = BearerGate(_app, TOKEN, RESOURCE)
    assert _request(gate, "/mcp", {b"authorization": f"Bearer {TOKEN}".encode()}) == (200, {"served": True})
    status, body = _request(gate, "/mcp", {})
    assert status == 401 and "no bearer token" in body["error"]["message"]
    status, body = _request(gate, "/mcp", {b"authorization": b"Bearer wrong"})
    assert status == 401 and "a wrong bearer token" in body["error"]["message"] and TOKEN not in str(body)


def test_the_protected_resource_metadata_is_served_without_the_token() -> None:
    gate = BearerGate(_app, TOKEN, RESOURCE)
    assert gate.metadata_url == "http://127.0.0.1:8765/.well-known/oauth-protected-resource/mcp"
    status, body = _request(gate, "/.well-known/oauth-protected-resource/mcp", {})
    assert status == 200 and body["resource"] == RESOURCE and body["bearer_methods_supported"] == ["header"]
    assert _request(gate, "/.well-known/oauth-protected-resource", {}, method="POST")[0] == 405
