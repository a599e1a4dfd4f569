"""Belay's MCP client (core/mcp) as the conformance suite's client scenarios run it: `python conformance_client.py URL`.

The suite starts a test server for the scenario named in MCP_CONFORMANCE_SCENARIO and runs this with
its URL.  The server is configured as Belay would configure it (an HTTP server in the settings),
started by Belay's `McpManager`, and its tools are called through the registry the way the pipeline
calls them.  A server's request for the person's input goes through Belay's `Elicitations`, answered
as a person would who presses Accept on the form as it opens (filled with the schema's defaults).

The auth/* scenarios configure the server with `oauth = true` (and, for a pre-registered client, the
client id and secret the suite gives in MCP_CONFORMANCE_CONTEXT): Belay's sign-in (core.mcp.oauth)
runs against the suite's authorization server, whose authorization page answers at once by sending
the browser back to Belay's loopback listener; the "browser" here is an HTTP client that follows it.

Exit 0 when the scenario's work was done; what the suite checks is what it saw on the wire.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
import tempfile
from pathlib import Path

import httpx2

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from core.events import ElicitationRequested, Event  # noqa: E402
from core.ids import AgentId, CallId  # noqa: E402
from core.mcp.elicitation import Elicitations, defaults  # noqa: E402
from core.mcp.manager import McpManager  # noqa: E402
from core.mcp.oauth import OAuthPlace  # noqa: E402
from core.mcp.settings import ServerSettings  # noqa: E402
from core.models.mcp import ServerState  # noqa: E402
from core.paths import Workspace  # noqa: E402
from core.run import arguments  # noqa: E402
from core.tools.base import ReadState, RunTool, ToolContext  # noqa: E402
from core.tools.registry import ToolRegistry  # noqa: E402

SERVER = "conformance"
CALLS = {
    "tools_call": ("add_numbers", {"a": 5, "b": 3}),
    "sse-retry": ("test_reconnection", {}),
    "elicitation-sep1034-client-defaults": ("test_client_elicitation_defaults", {}),
}
"""The tool each scenario's server offers for the client to call (initialize only connects)."""


async def main(url: str, scenario: str) -> int:
    registry = ToolRegistry()
    workspace = Workspace(Path.cwd())
    person: list[asyncio.Task[None]] = []

    def published(event: Event) -> None:
        if isinstance(event, ElicitationRequested):  # the window shows the form; the person accepts it as it is
            async def accept() -> None:
                elicitations.answer(event.elicitation_id, "accept", defaults(event.requested_schema))
            person.append(asyncio.ensure_future(accept()))

    elicitations = Elicitations(published, can_ask=lambda: True)
    settings = ServerSettings(name=SERVER, url=url, timeout_s=20, startup_timeout_s=20, **_oauth(scenario))
    tokens = tempfile.TemporaryDirectory(prefix="belay-conformance-oauth-")
    manager = McpManager(registry, {SERVER: settings}, elicit=elicitations.ask, cwd=workspace.root,
                         oauth=OAuthPlace(Path(tokens.name), _browser))
    await manager.start()
    try:
        [status] = await manager.wait_started()
        if status.state != ServerState.READY:
            print(f"the server did not start: {status.describe()}", file=sys.stderr)
            return 1
        if scenario.startswith("auth/"):  # signed in; a call may need more scope (step-up)
            name, args = next((t.removeprefix(f"mcp__{SERVER}__"), {}) for t in registry.names()
                              if t.startswith(f"mcp__{SERVER}__"))
        elif scenario in CALLS:
            name, args = CALLS[scenario]
        else:
            return 0
        tool = registry.get(f"mcp__{SERVER}__{name}")
        if not isinstance(tool, RunTool):
            print(f"no tool {name}: {registry.names()}", file=sys.stderr)
            return 1
        ctx = ToolContext(workspace, AgentId("agt_conformance"), CallId("call_conformance"), ReadState())
        output = await tool.run(arguments.validate(tool, arguments.decode(args)), ctx)
        print(output.text)
        return 0
    finally:
        await manager.close()
        await asyncio.gather(*person, return_exceptions=True)
        tokens.cleanup()


def _oauth(scenario: str) -> dict[str, object]:
    if not scenario.startswith("auth/"):
        return {}
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    given = {"oauth_client_id": context.get("client_id"), "oauth_client_secret": context.get("client_secret")}
    return {"oauth": True, **{k: v for k, v in given.items() if v}}


async def _browser(url: str) -> None:
    """The person's browser: opens the authorization page and follows it back to Belay's listener."""
    async with httpx2.AsyncClient(follow_redirects=True, timeout=20) as browser:
        await browser.get(url)


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, stream=sys.stderr)
    sys.exit(asyncio.run(main(sys.argv[1], os.environ.get("MCP_CONFORMANCE_SCENARIO", ""))))
