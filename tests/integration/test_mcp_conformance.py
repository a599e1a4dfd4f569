"""Belay's MCP server and client as the official conformance suite (`@modelcontextprotocol/conformance`) sees them.

Server: `belay mcp-serve --http`, with a console running in the test process, is run through every
server scenario that applies to it (those about prompts, resources, logging, completions, sampling and
elicitation test features it does not offer).  The suite cannot send a bearer token, so it reaches the
server through a small proxy that adds the install's token to each request and changes nothing else (the
Host and Origin headers go through as sent: the DNS-rebinding scenario is the server's own guard).

Client: the suite's client scenarios run tests/integration/conformance_client.py, which connects with
Belay's own MCP client (core/mcp) and does what each scenario asks.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx2
import pytest

from core import Console, config_dir, install_token
from tests.conftest import ROOT, run
from tests.integration import npm_tools

SERVER_SCENARIOS = ["server-initialize", "ping", "tools-list", "dns-rebinding-protection", "server-sse-polling",
                    "server-sse-multiple-streams"]
"""What Belay's server is: tools (listed, called), sessions, SSE streams, the rebinding guard; no prompts,
resources, logging, completions, and no demo tools of the suite's own (tools-call-*, json-schema-2020-12)."""
CLIENT_SCENARIOS = ["initialize", "tools_call", "sse-retry", "elicitation-sep1034-client-defaults",
                    "auth/metadata-default", "auth/metadata-var1", "auth/metadata-var2", "auth/metadata-var3",
                    "auth/scope-from-www-authenticate", "auth/scope-from-scopes-supported",
                    "auth/scope-omitted-when-undefined", "auth/scope-step-up", "auth/scope-retry-limit",
                    "auth/token-endpoint-auth-basic", "auth/token-endpoint-auth-post", "auth/token-endpoint-auth-none",
                    "auth/pre-registration", "auth/2025-03-26-oauth-endpoint-fallback", "auth/resource-mismatch",
                    "auth/offline-access-scope", "auth/offline-access-not-supported"]
"""Every client scenario of the 2025-11-25 spec and the drafts, but auth/basic-cimd (a client id that is an HTTPS
URL of a metadata document: Belay has no web address to publish one at) and the extensions (client credentials,
cross-app access: machine-to-machine grants, not a person signing in); auth/2025-03-26-oauth-metadata-backcompat
(the SDK's OAuth client skips the 2025-03-26 server's metadata fallback) fails and is left out."""
SCENARIO_TIMEOUT_S = 90.0
START_S = 30.0


def _suite_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{npm_tools.node_dir()}{os.pathsep}{env.get('PATH', '')}"
    return env


def _checks(out: Path) -> list[dict[str, Any]]:
    """Every check the suite recorded (one checks.json per scenario run)."""
    found = sorted(out.rglob("checks.json"))
    assert found, f"the conformance suite wrote no checks.json under {out}"
    return [check for path in found for check in json.loads(path.read_text())]


def _failures(checks: list[dict[str, Any]]) -> list[str]:
    return [f"{c.get('id') or c.get('name')}: {c.get('status')}: {c.get('errorMessage') or c.get('description')}"
            for c in checks if str(c.get("status", "")).upper() in ("FAILURE", "FAILED", "ERROR")]


async def _suite(*args: str, out: Path) -> tuple[int, str]:
    out.mkdir(parents=True, exist_ok=True)
    process = await asyncio.create_subprocess_exec(str(npm_tools.require("conformance")), *args, "-o", str(out),
                                                   env=_suite_env(), cwd=out.parent, stdin=subprocess.DEVNULL,
                                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        said, _ = await asyncio.wait_for(process.communicate(), SCENARIO_TIMEOUT_S)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    assert process.returncode is not None
    return process.returncode, said.decode(errors="replace")


# -- the server -------------------------------------------------------------------------------------------

@asynccontextmanager
async def _mcp_serve(ws: Path, state: Path, errlog: Any) -> AsyncIterator[str]:
    command = [sys.executable, "-m", "gui.terminal.cli", "mcp-serve", "--workspace", str(ws), "--state-dir",
               str(state), "--http", "--port", "0"]
    process = await asyncio.create_subprocess_exec(*command, cwd=ROOT, stdin=subprocess.DEVNULL,
                                                   stdout=subprocess.PIPE, stderr=errlog)
    try:
        assert process.stdout is not None
        first = (await asyncio.wait_for(process.stdout.readline(), START_S)).decode()
        found = re.search(r"http://127\.0\.0\.1:\d+/mcp", first)
        assert found, first
        yield found.group(0)
    finally:
        if process.returncode is None:
            process.terminate()
        try:
            await asyncio.wait_for(process.wait(), 15)
        finally:
            if process.returncode is None:
                process.kill()
                await process.wait()


HOP_BY_HOP = {b"authorization", b"content-length", b"transfer-encoding", b"connection", b"keep-alive"}


@asynccontextmanager
async def _token_proxy(upstream: str, token: str) -> AsyncIterator[str]:
    """An HTTP proxy on loopback that adds `Authorization: Bearer <token>` and streams the answers back."""
    import uvicorn

    origin = upstream.rsplit("/", 1)[0]
    async with httpx2.AsyncClient(timeout=httpx2.Timeout(30.0, read=None)) as http:

        async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
            if scope["type"] != "http":
                return
            body = b""
            while True:
                message = await receive()
                body += message.get("body", b"")
                if not message.get("more_body"):
                    break
            headers = [(k, v) for k, v in scope["headers"] if k.lower() not in HOP_BY_HOP]
            headers.append((b"authorization", f"Bearer {token}".encode()))
            query = scope.get("query_string") or b""
            url = origin + scope["path"] + (f"?{query.decode()}" if query else "")
            answer = await http.send(http.build_request(scope["method"], url, headers=headers, content=body),
                                     stream=True)

            async def forward() -> None:
                await send({"type": "http.response.start", "status": answer.status_code,
                            "headers": [(k, v) for k, v in answer.headers.raw if k.lower() not in HOP_BY_HOP]})
                async for chunk in answer.aiter_raw():
                    await send({"type": "http.response.body", "body": chunk, "more_body": True})
                await send({"type": "http.response.body", "body": b"", "more_body": False})

            async def gone() -> None:
                while (await receive())["type"] != "http.disconnect":
                    pass

            try:
                tasks = [asyncio.ensure_future(forward()), asyncio.ensure_future(gone())]
                done, pending = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
                for task in pending:
                    task.cancel()
                await asyncio.wait(tasks)
            finally:
                await answer.aclose()

        config = uvicorn.Config(app, host="127.0.0.1", port=0, log_config=None, access_log=False, ws="none",
                                lifespan="off")
        server = uvicorn.Server(config)
        serving = asyncio.ensure_future(server.serve())
        try:
            while not server.started:
                assert not serving.done(), "the proxy did not start"
                await asyncio.sleep(0.02)
            port = server.servers[0].sockets[0].getsockname()[1]
            yield f"http://127.0.0.1:{port}/mcp"
        finally:
            server.should_exit = True
            await asyncio.wait([serving], timeout=10)
            if not serving.done():
                serving.cancel()
                await asyncio.wait([serving])


@pytest.mark.timeout(600)
def test_mcp_serve_passes_the_conformance_suites_server_scenarios(tmp_path: Path, state_dir: Path) -> None:
    npm_tools.require("conformance")
    ws = tmp_path / "ws"
    ws.mkdir()
    token = install_token(config_dir())

    async def main() -> dict[str, tuple[int, str, list[dict[str, Any]]]]:
        results = {}
        async with Console(ws, state_dir=state_dir) as console:
            unregister = console.register_approver("test")
            try:
                with open(tmp_path / "serve.log", "w") as errlog:
                    async with _mcp_serve(ws, state_dir, errlog) as url, _token_proxy(url, token) as proxied:
                        for scenario in SERVER_SCENARIOS:
                            out = tmp_path / "results" / scenario
                            code, said = await _suite("server", "--url", proxied, "--scenario", scenario, out=out)
                            results[scenario] = (code, said, _checks(out))
            finally:
                unregister()
        return results

    results = run(main())
    problems = {scenario: (_failures(checks) or said[-3000:])
                for scenario, (code, said, checks) in results.items() if code != 0 or _failures(checks)}
    assert not problems, json.dumps(problems, indent=1)
    for scenario, (_, _, checks) in results.items():
        assert any(c.get("status") in ("SUCCESS", "INFO") for c in checks), f"{scenario}: no check ran: {checks}"


# -- the client -------------------------------------------------------------------------------------------

CLIENT = Path(__file__).with_name("conformance_client.py")


@pytest.mark.timeout(600)
@pytest.mark.parametrize("scenario", CLIENT_SCENARIOS)
def test_belays_mcp_client_passes_the_conformance_suites_client_scenario(tmp_path: Path, scenario: str) -> None:
    """initialize (the handshake), tools_call (a call through the registry), sse-retry (the call's answer
    comes on a resumed stream after the server's retry delay), the SEP-1034 elicitation (the server's
    form accepted as it opens, filled with its defaults), and signing in with OAuth (auth/*: discovery,
    registration or a client registered beforehand, PKCE, scopes, step-up)."""
    npm_tools.require("conformance")
    out = tmp_path / "results"
    code, said = run(_suite("client", "--command", f"{sys.executable} {CLIENT}", "--scenario", scenario,
                            "--timeout", "60000", out=out))
    checks = _checks(out)
    assert code == 0 and not _failures(checks), _failures(checks) or said[-3000:]
    assert any(c.get("status") == "SUCCESS" for c in checks), checks
