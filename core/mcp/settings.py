"""MCP servers as the user's settings declare them: `[mcp.servers.<name>]`, stdio or Streamable HTTP.

    [mcp.servers.github]                 # stdio: Belay starts the program and speaks MCP on its stdin/stdout
    command = "npx"
    args = ["-y", "@modelcontextprotocol/server-github"]
    env = { GITHUB_TOKEN = "ghp_..." }   # given to this server's process only
    cwd = "~/src"                        # optional; absolute or ~
    timeout_s = 60                       # how long one tool call may take (default 60)
    startup_timeout_s = 30               # how long starting and listing tools may take (default 30)

    [mcp.servers.docs]                   # Streamable HTTP
    url = "http://127.0.0.1:8808/mcp"
    headers = { Authorization = "Bearer ..." }

    [mcp.servers.linear]                 # Streamable HTTP, signing in with OAuth (MCP authorization)
    url = "https://mcp.linear.app/mcp"
    oauth = true                         # the person signs in in their browser when the server asks
    oauth_client_id = "..."              # optional: a client registered beforehand (else dynamic registration)
    oauth_client_secret = "..."          # optional, with oauth_client_id (a secret: never shown)

Only the user's settings may declare servers: a workspace's settings file
comes with the code in it, and must not be able to start programs.  A
stdio server's process gets a minimal environment (HOME, LOGNAME, PATH,
SHELL, TERM, USER) plus its own `env`, never the console's other
variables.  `env`, `headers` and `oauth_client_secret` hold secrets: they are
left out of every repr and are never logged.  OAuth tokens are kept in
`<config dir>/mcp-oauth/<server>.json`, readable by the user only (core.mcp.oauth).
"""

from __future__ import annotations

import os
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from core.mcp.names import server_name_problem

DEFAULT_TIMEOUT_S = 60.0
DEFAULT_STARTUP_TIMEOUT_S = 30.0


class ServerSettings(BaseModel):
    """One MCP server: how to reach it and how long to wait for it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    """Its key in `[mcp.servers]`: the `<server>` of its tools' names."""
    command: str | None = None
    """stdio: the program to run (looked up on PATH)."""
    args: tuple[str, ...] = ()
    env: dict[str, str] = Field(default_factory=dict, repr=False)
    """stdio: extra environment variables for this server's process only (secrets: never shown)."""
    cwd: str | None = None
    """stdio: the directory to run it in (absolute, `~` expanded); None: Belay's own."""
    url: str | None = None
    """Streamable HTTP: the endpoint, http:// or https://."""
    headers: dict[str, str] = Field(default_factory=dict, repr=False)
    """Streamable HTTP: sent with every request (secrets: never shown)."""
    oauth: bool = False
    """Streamable HTTP: sign in with OAuth (the MCP authorization spec) when the server answers 401."""
    oauth_client_id: str | None = None
    """With `oauth`: a client id registered with the authorization server beforehand (None: register)."""
    oauth_client_secret: str | None = Field(default=None, repr=False)
    """With `oauth_client_id`: its secret, for a confidential client (a secret: never shown)."""
    timeout_s: float = Field(default=DEFAULT_TIMEOUT_S, gt=0)
    """How long one tool call may take before it fails as timed out."""
    startup_timeout_s: float = Field(default=DEFAULT_STARTUP_TIMEOUT_S, gt=0)
    """How long connecting, the handshake and listing its tools may take."""

    @property
    def transport(self) -> str:
        return "stdio" if self.command is not None else "http"

    @field_validator("cwd")
    @classmethod
    def _absolute_cwd(cls, cwd: str | None) -> str | None:
        if cwd is None:
            return None
        expanded = os.path.expanduser(cwd)
        if not os.path.isabs(expanded):
            raise ValueError(f"must be an absolute path (or start with ~), got {cwd!r}")
        return expanded

    @field_validator("url")
    @classmethod
    def _http_url(cls, url: str | None) -> str | None:
        if url is not None and not url.startswith(("http://", "https://")):
            raise ValueError("must start with http:// or https://")
        return url

    @model_validator(mode="after")
    def _one_transport(self) -> ServerSettings:
        if (self.command is None) == (self.url is None):
            raise ValueError("give either command (a program speaking MCP on stdio) or url (Streamable HTTP)")
        if self.command is not None and not self.command.strip():
            raise ValueError("command is empty")
        if self.url is None and self.headers:
            raise ValueError("headers are for url servers")
        if self.command is None and (self.args or self.env or self.cwd):
            raise ValueError("args, env and cwd are for command servers")
        if (self.oauth_client_id or self.oauth_client_secret) and not self.oauth:
            raise ValueError("oauth_client_id and oauth_client_secret need oauth = true")
        if self.oauth_client_secret and not self.oauth_client_id:
            raise ValueError("oauth_client_secret needs oauth_client_id")
        if self.oauth and self.url is None:
            raise ValueError("oauth is for url servers")
        if self.oauth and any(k.lower() == "authorization" for k in self.headers):
            raise ValueError("give either oauth = true or an Authorization header, not both")
        return self


def parse_servers(table: object, where: str) -> tuple[dict[str, ServerSettings], list[str]]:
    """The servers of an `[mcp]` table, and the problems found (each bad server is left out, not the rest)."""
    if not isinstance(table, dict):
        return {}, [f"{where}: [mcp] must be a table"]
    problems = [f"{where}: unknown key {key!r} in [mcp] (expected servers)" for key in table if key != "servers"]
    servers_table = table.get("servers", {})
    if not isinstance(servers_table, dict):
        return {}, [*problems, f"{where}: [mcp.servers] must be a table of servers"]
    servers = {}
    for name, entry in servers_table.items():
        server, problem = _server(str(name), entry)
        if server is None:
            problems.append(f"{where}: [mcp.servers.{name}]: {problem}; this server is not started")
        else:
            servers[server.name] = server
    return servers, problems


def _server(name: str, entry: object) -> tuple[ServerSettings | None, str]:
    bad_name = server_name_problem(name)
    if bad_name is not None:
        return None, bad_name
    if not isinstance(entry, dict):
        return None, "must be a table"
    try:
        return ServerSettings.model_validate({**entry, "name": name}), ""
    except ValidationError as e:
        return None, "; ".join(_describe(err) for err in e.errors())


def _describe(err: Any) -> str:
    # Never echo the input: an env or header value is a secret.
    where = ".".join(str(part) for part in err["loc"])
    message = str(err["msg"]).removeprefix("Value error, ")
    return f"{where}: {message}" if where else message
