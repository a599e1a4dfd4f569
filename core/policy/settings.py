"""Policy settings files: reading a layer's TOML into rules, and adding or removing one rule in it.

A file that is not valid TOML is ignored as a whole and reported (file and
line); a single bad entry is ignored and reported, the rest of the file
still applies.  Writing keeps every other key of the file but not its
comments (tomli_w writes data, not text).  The format is documented in
`core.policy.engine`.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import platformdirs
import tomli_w

from core.mcp.settings import ServerSettings, parse_servers
from core.models.policy import Mode, RuleAction, RuleEntry, Scope
from core.policy.rules import Rule, parse_rule
from core.store.atomic_file import write_text_atomically
from core.store.gc import GB, Retention
from core.telemetry.settings import TelemetrySettings, read_telemetry
from core.tools.names import ToolName
from core.transcripts.budget import BudgetSettings, read_budget

MODES: dict[str, Mode] = {"default": "default", "accept_edits": "accept_edits", "acceptEdits": "accept_edits",
                          "plan": "plan", "bypass": "bypass", "bypassPermissions": "bypass"}
ACTIONS: tuple[RuleAction, ...] = ("allow", "ask", "deny")
CONFIG_DIR_ENV = "BELAY_CONFIG_DIR"
_KEYS = {"mode", "permissions", "tools", "approval", "bash", "changes", "timeouts", "mcp", "storage", "telemetry",
         "budget"}


@dataclass
class SettingsLayer:
    """What one settings file (or the session) contributes."""

    scope: Scope
    path: Path | None = None
    entries: list[tuple[RuleEntry, Rule]] = field(default_factory=list)
    mode: Mode | None = None
    disable: list[str] = field(default_factory=list)
    timeout_s: float | None = None
    on_timeout: Literal["deny", "allow"] | None = None
    bash: dict[str, Any] = field(default_factory=dict)
    """`[bash]`: how commands run (network, sandbox, limits); read from the user layer only."""
    ignore: list[str] = field(default_factory=list)
    """`[changes] ignore`: gitignore-style patterns of paths whose changes are reported but not stored."""
    timeouts: dict[str, float] = field(default_factory=dict)
    """`[timeouts]`: tool name -> seconds it may work (0: no limit)."""
    mcp_servers: dict[str, ServerSettings] = field(default_factory=dict)
    """`[mcp.servers.<name>]`: MCP servers to start (see `core.mcp.settings`); read from the user layer only."""
    retention: Retention | None = None
    """`[storage]`: how much undo history `belay gc` keeps per workspace; read from the user layer only."""
    telemetry: TelemetrySettings | None = None
    """`[telemetry]`: where spans of the calls are sent (`core.telemetry`); read from the user layer only."""
    budget: BudgetSettings | None = None
    """`[budget]`: what a session or a workspace's day may spend (core.transcripts.budget)."""


def config_dir() -> Path:
    """Where the user layer lives: $BELAY_CONFIG_DIR, else the platform's config directory."""
    env = os.environ.get(CONFIG_DIR_ENV)
    return Path(env).expanduser() if env else Path(platformdirs.user_config_dir("belay", appauthor=False))


def settings_path(scope: Scope, workspace: Path | None) -> Path | None:
    if scope == "user":
        return config_dir() / "settings.toml"
    if scope == "workspace" and workspace is not None:
        return workspace / ".belay" / "settings.toml"
    return None


def load_layer(scope: Scope, path: Path | None) -> tuple[SettingsLayer, list[str]]:
    """The layer in `path` (empty when there is no file) and the problems found in it."""
    layer = SettingsLayer(scope, path)
    if path is None or not path.exists():
        return layer, []
    try:
        text = path.read_text(encoding="utf-8")
        data = tomllib.loads(text)
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        return layer, [f"{path}: {e}; the file is ignored"]
    problems = [f"{path}: unknown key {key!r} (expected {', '.join(sorted(_KEYS))})" for key in data
                if key not in _KEYS]
    problems += _read_mode(data, layer, path) + _read_permissions(data, text, layer, path)
    problems += _read_tools(data, layer, path) + _read_approval(data, layer, path) + _read_bash(data, layer, path)
    problems += _read_changes(data, layer, path) + _read_timeouts(data, layer, path) + _read_mcp(data, layer, path)
    problems += _read_storage(data, layer, path)
    if "telemetry" in data:
        layer.telemetry, found = read_telemetry(data["telemetry"], path, layer.scope)
        problems += found
    if "budget" in data:
        layer.budget, found = read_budget(data["budget"], path)
        problems += found
    return layer, problems


def load_retention() -> tuple[Retention, list[str]]:
    """The user's `[storage]` settings (the defaults where unset), and what is wrong with them."""
    layer, problems = load_layer("user", settings_path("user", None))
    return layer.retention or Retention(), [p for p in problems if "[storage]" in p or "the file is ignored" in p]


def _read_storage(data: dict[str, Any], layer: SettingsLayer, path: Path) -> list[str]:
    table = data.get("storage")
    if table is None:
        return []
    if not isinstance(table, dict):
        return [f"{path}: [storage] must be a table"]
    if layer.scope != "user":
        # A workspace's file comes with its code: it must not be able to erase the record of what was done to it.
        return [f"{path}: [storage] is ignored here; how much undo history is kept is set in your user settings only"]
    problems = [f"{path}: unknown key {key!r} in [storage] (expected keep_days, max_gb)" for key in table
                if key not in ("keep_days", "max_gb")]
    retention = Retention()
    for key in ("keep_days", "max_gb"):
        value = table.get(key)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
            problems.append(f"{path}: [storage] {key} must be a number above 0; the default applies")
        elif key == "keep_days":
            retention = Retention(float(value), retention.max_bytes)
        else:
            retention = Retention(retention.keep_days, int(value * GB))
    layer.retention = retention
    return problems


def _read_mcp(data: dict[str, Any], layer: SettingsLayer, path: Path) -> list[str]:
    if "mcp" not in data:
        return []
    if layer.scope != "user":
        # A workspace's file comes with its code: configuring a server would start a program of its choosing.
        return [f"{path}: [mcp] is ignored here; MCP servers are configured in your user settings only"]
    layer.mcp_servers, problems = parse_servers(data["mcp"], str(path))
    return problems


def _read_timeouts(data: dict[str, Any], layer: SettingsLayer, path: Path) -> list[str]:
    table = data.get("timeouts")
    if table is None:
        return []
    if not isinstance(table, dict):
        return [f"{path}: [timeouts] must be a table of tool = seconds"]
    problems = []
    for tool, seconds in table.items():
        if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or seconds < 0:
            problems.append(f"{path}: [timeouts] {tool} must be a number of seconds (0 for no limit)")
        else:
            layer.timeouts[str(tool)] = float(seconds)
    return problems


def _read_changes(data: dict[str, Any], layer: SettingsLayer, path: Path) -> list[str]:
    table = data.get("changes")
    if table is None:
        return []
    if not isinstance(table, dict):
        return [f"{path}: [changes] must be a table"]
    unknown = [f"{path}: unknown key {key!r} in [changes] (expected ignore)" for key in table if key != "ignore"]
    patterns = table.get("ignore", [])
    if not isinstance(patterns, list) or not all(isinstance(p, str) for p in patterns):
        return [*unknown, f"{path}: [changes] ignore must be a list of gitignore-style patterns"]
    layer.ignore = list(patterns)
    return unknown


def _read_bash(data: dict[str, Any], layer: SettingsLayer, path: Path) -> list[str]:
    if "bash" not in data:
        return []
    if not isinstance(data["bash"], dict):
        return [f"{path}: [bash] must be a table"]
    if layer.scope != "user":
        # A workspace's file comes with its code: it must not turn the sandbox off or let secrets through.
        return [f"{path}: [bash] is ignored here; how commands are contained is set in your user settings only"]
    layer.bash = dict(data["bash"])
    return []


def _read_mode(data: dict[str, Any], layer: SettingsLayer, path: Path) -> list[str]:
    if "mode" not in data:
        return []
    if data["mode"] not in MODES:
        return [f"{path}: mode {data['mode']!r} is not one of default, accept_edits, plan, bypass"]
    if layer.scope == "workspace" and MODES[data["mode"]] == "bypass":
        # The workspace's file comes with the code: a cloned repository must not switch its own checks off.
        return [f"{path}: mode \"bypass\" is ignored in a workspace's settings; set it in your user settings "
                "or from the window"]
    layer.mode = MODES[data["mode"]]
    return []


def _read_permissions(data: dict[str, Any], text: str, layer: SettingsLayer, path: Path) -> list[str]:
    permissions = data.get("permissions", {})
    if not isinstance(permissions, dict):
        return [f"{path}: [permissions] must be a table"]
    problems = [f"{path}: permissions.{key} is not allow, ask or deny" for key in permissions
                if key not in ACTIONS]
    for action in ACTIONS:
        items = permissions.get(action, [])
        if not isinstance(items, list):
            problems.append(f"{path}: permissions.{action} must be a list of rules")
            continue
        for index, item in enumerate(items):
            try:
                entry, rule = entry_from(item, action, layer.scope, path)
            except ValueError as e:
                problems.append(f"{path}:{_line_of(text, item)}: permissions.{action}[{index}]: {e}")
                continue
            layer.entries.append((entry, rule))
    return problems


def entry_from(item: object, action: RuleAction, scope: Scope, path: Path | None) -> tuple[RuleEntry, Rule]:
    """A rule string, or an inline table { rule = "...", timeout_s = 60, on_timeout = "deny", preview = true }."""
    if isinstance(item, dict):
        unknown = set(item) - {"rule", "timeout_s", "on_timeout", "preview"}
        if unknown:
            raise ValueError(f"unknown keys {sorted(unknown)} (expected rule, timeout_s, on_timeout, preview)")
        timeout, on_timeout, preview = item.get("timeout_s"), item.get("on_timeout"), item.get("preview", False)
        if not isinstance(preview, bool):
            raise ValueError(f"preview must be true or false, got {preview!r}")
        if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, (int, float))
                                    or timeout < 0):
            raise ValueError(f"timeout_s must be a number of seconds >= 0, got {timeout!r}")
        if on_timeout not in (None, "deny", "allow"):
            raise ValueError(f"on_timeout must be \"deny\" or \"allow\", got {on_timeout!r}")
        rule = parse_rule(item.get("rule"))
        if preview and rule.tool != ToolName.BASH:
            raise ValueError(f"preview applies to Bash rules only, not {rule.text}")
        entry = RuleEntry(rule=rule.text, action=action, scope=scope, source=path,
                          timeout_s=float(timeout) if timeout is not None else None, on_timeout=on_timeout,
                          preview=preview)
        return entry, rule
    rule = parse_rule(item)
    return RuleEntry(rule=rule.text, action=action, scope=scope, source=path), rule


def _read_tools(data: dict[str, Any], layer: SettingsLayer, path: Path) -> list[str]:
    tools = data.get("tools", {})
    disable = tools.get("disable", []) if isinstance(tools, dict) else None
    if not isinstance(disable, list) or not all(isinstance(d, str) and d.strip() for d in disable):
        return [f"{path}: tools.disable must be a list of tool names, \"*\", \"mcp:*\" or \"mcp:<server>\""]
    layer.disable = [d.strip() for d in disable]
    return []


def _read_approval(data: dict[str, Any], layer: SettingsLayer, path: Path) -> list[str]:
    approval = data.get("approval", {})
    if not isinstance(approval, dict):
        return [f"{path}: [approval] must be a table"]
    problems = []
    timeout = approval.get("timeout_s")
    if timeout is not None:
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout < 0:
            problems.append(f"{path}: approval.timeout_s must be a number of seconds >= 0")
        else:
            layer.timeout_s = float(timeout)
    on_timeout = approval.get("on_timeout")
    if on_timeout is not None:
        if on_timeout not in ("deny", "allow"):
            problems.append(f"{path}: approval.on_timeout must be \"deny\" or \"allow\"")
        else:
            layer.on_timeout = on_timeout
    return problems


def _line_of(text: str, item: object) -> int:
    needle = item.get("rule") if isinstance(item, dict) else item
    if isinstance(needle, str) and needle:
        for number, line in enumerate(text.splitlines(), 1):
            if needle in line:
                return number
    return 0


def edit_rules(path: Path, action: RuleAction, rule: str, add: bool) -> bool:
    """Adds or removes the (normalised) `rule` in the file's permissions.<action>; True when the file changed."""
    data: dict[str, Any] = {}
    if path.exists():
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
            raise ValueError(f"{path} cannot be read as TOML ({e}); fix it before changing rules") from None
    permissions = data.setdefault("permissions", {})
    items = permissions.setdefault(action, []) if isinstance(permissions, dict) else None
    if not isinstance(items, list):
        raise ValueError(f"{path}: permissions.{action} is not a list of rules; fix it before changing rules")
    present = [i for i in items if _same(i, rule)]
    if add == bool(present):
        return False
    data["permissions"][action] = items + [rule] if add else [i for i in items if not _same(i, rule)]
    write_text_atomically(path, tomli_w.dumps(data), mode=0o600)
    return True


def _same(item: object, rule: str) -> bool:
    text = item.get("rule") if isinstance(item, dict) else item
    if not isinstance(text, str):
        return False
    try:
        return parse_rule(text).text == rule
    except ValueError:
        return text.strip() == rule
