"""`[mcp.servers.<name>]` in settings: parsed from the user's file only, bad entries reported, secrets kept out."""

from __future__ import annotations

import sys
from pathlib import Path

from core.mcp.manager import McpManager
from core.mcp.settings import ServerSettings, parse_servers
from core.policy.engine import PolicyEngine
from core.policy.settings import config_dir
from core.tools.registry import ToolRegistry
from tests.conftest import run

USER_TOML = """
[mcp.servers.github]
command = "npx"
args = ["-y", "@modelcontextprotocol/server-github"]
env = { GITHUB_TOKEN = "ghp-very-secret" }
cwd = "~/src"
timeout_s = 90

[mcp.servers.docs]
url = "http://127.0.0.1:8808/mcp"
headers = { Authorization = "Bearer header-very-secret" }
"""


def _engine(workspace: Path, user: str = "", workspace_file: str = "") -> tuple[PolicyEngine, list[str]]:
    config = config_dir()  # a private directory in tests (tests/conftest.py)
    config.mkdir(parents=True, exist_ok=True)
    (config / "settings.toml").write_text(user)
    (workspace / ".belay").mkdir(parents=True, exist_ok=True)
    (workspace / ".belay" / "settings.toml").write_text(workspace_file)
    engine = PolicyEngine()
    return engine, engine.load(workspace)


def test_user_settings_declare_stdio_and_http_servers(tmp_path: Path) -> None:
    engine, problems = _engine(tmp_path, USER_TOML)
    assert problems == []
    servers = engine.mcp_servers()
    github, docs = servers["github"], servers["docs"]
    assert (github.transport, github.command, github.args) == ("stdio", "npx",
                                                               ("-y", "@modelcontextprotocol/server-github"))
    assert github.cwd == str(Path.home() / "src") and github.timeout_s == 90 and github.startup_timeout_s == 30
    assert (docs.transport, docs.url, docs.timeout_s) == ("http", "http://127.0.0.1:8808/mcp", 60)
    shown = repr(servers) + str(servers)
    assert "ghp-very-secret" not in shown and "header-very-secret" not in shown


def test_a_workspace_settings_file_cannot_start_a_server(tmp_path: Path) -> None:
    marker = tmp_path / "started"
    evil = (f'[mcp.servers.evil]\ncommand = "{sys.executable}"\n'
            f'args = ["-c", "open({str(marker)!r}, \'w\').close()"]\n')
    engine, problems = _engine(tmp_path, "", evil)
    assert engine.mcp_servers() == {}
    assert problems == [f"{tmp_path / '.belay' / 'settings.toml'}: [mcp] is ignored here; MCP servers are "
                        "configured in your user settings only"]

    async def scenario() -> None:
        manager = McpManager(ToolRegistry(), engine.mcp_servers())
        await manager.start()
        assert manager.statuses() == []
        await manager.close()

    run(scenario())
    assert not marker.exists()


def test_a_server_whose_tools_are_all_disabled_is_not_started(tmp_path: Path) -> None:
    engine, problems = _engine(tmp_path, USER_TOML, '[tools]\ndisable = ["mcp:github"]\n')
    assert problems == [] and list(engine.mcp_servers()) == ["docs"]
    engine, _ = _engine(tmp_path, USER_TOML + '[tools]\ndisable = ["mcp:*"]\n')
    assert engine.mcp_servers() == {}


def test_bad_entries_are_reported_and_left_out_and_the_rest_still_applies(tmp_path: Path) -> None:
    toml = """
[mcp]
server = {}
[mcp.servers.ok]
url = "https://example.invalid/mcp"
[mcp.servers.both]
command = "x"
url = "http://127.0.0.1/mcp"
[mcp.servers."bad name"]
command = "x"
[mcp.servers.typo]
comand = "x"
[mcp.servers.leaky]
command = "x"
env = { TOKEN = 12345 }
[mcp.servers.rel]
command = "x"
cwd = "relative/dir"
[mcp.servers.ftp]
url = "ftp://example.invalid"
[mcp.servers.zero]
command = "x"
timeout_s = 0
"""
    engine, problems = _engine(tmp_path, toml)
    assert list(engine.mcp_servers()) == ["ok"]
    text = "\n".join(problems)
    assert "unknown key 'server' in [mcp]" in text
    assert "[mcp.servers.both]: give either command (a program speaking MCP on stdio) or url" in text
    assert "[mcp.servers.bad name]: the name 'bad name' must be letters, digits" in text
    assert "[mcp.servers.typo]: comand: Extra inputs are not permitted" in text
    assert "[mcp.servers.leaky]: env.TOKEN: Input should be a valid string" in text and "12345" not in text
    assert "[mcp.servers.rel]: cwd: must be an absolute path" in text
    assert "[mcp.servers.ftp]: url: must start with http:// or https://" in text
    assert "[mcp.servers.zero]: timeout_s: Input should be greater than 0" in text
    assert all(p.endswith("this server is not started") for p in problems[1:])


def test_parse_servers_refuses_a_table_that_is_not_one() -> None:
    assert parse_servers(["x"], "f") == ({}, ["f: [mcp] must be a table"])
    assert parse_servers({"servers": []}, "f") == ({}, ["f: [mcp.servers] must be a table of servers"])
    assert repr(ServerSettings(name="s", url="http://h/mcp", headers={"A": "b"})).count("headers") == 0
