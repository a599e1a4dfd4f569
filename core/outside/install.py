"""Writing Belay's hook entries into Claude Code's settings, and taking exactly them out again.

Every event Belay listens to gets one command hook running `core/outside/hook_client.py` with
`"onFailure": "block"`, so a console that is not running (or a client that crashes) never lets a call
through silently. Installed for one project (`HttpHook`), the events of every tool call (TOOL_EVENTS)
get an http hook instead, to the workspace's loopback door (core/outside/http_door.py): no process per
call. Its bearer token is written into the machine-local settings file, which is then made 0600 (Claude
Code can read a header from an environment variable, but only one the agent's own environment has, which
Belay does not set). The session events keep the command hook: Claude Code sends no http hook for
SessionStart, and the command is what finds a console still starting, or the console for every
workspace, and so opens the workspace's console (and its door) before the first tool call. With no
console, an http hook's refused connection blocks the call (`"onFailure": "block"`), as the command's
refusal does. The entries are recognised by their command, which names Belay's client, or by their URL,
Belay's door's: uninstall removes those and nothing else, drops the lists and the `hooks` table it
leaves empty, and deletes the settings file if Belay created it and nothing else is left in it, then the
folders Belay made for it (`.claude/`) that are empty again. Which files and folders Belay created is
kept in Belay's own config directory. Writes are atomic (a temporary file renamed over the settings).
"""

from __future__ import annotations

import importlib
import json
import os
import shlex
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.store.atomic_file import write_text_atomically

HOOK_EVENTS = ("PreToolUse", "PostToolUse", "PostToolUseFailure", "PermissionRequest", "SubagentStart",
               "SubagentStop", "SessionStart", "SessionEnd")
TOOL_EVENTS = frozenset({"PreToolUse", "PostToolUse", "PostToolUseFailure", "PermissionRequest"})
HOOK_TIMEOUT_S = 3600
"""How long Claude Code waits for an answer: a person may take a while to approve."""
CLIENT = Path(__file__).with_name("hook_client.py")
CREATED_FILE = "hook-settings-created.json"
DOOR_PATH = "/hook/claude"
"""The path of Belay's http hook URL (core.outside.http_door.hook_url), by which its entries are known."""


@dataclass(frozen=True)
class HttpHook:
    """Where a project's http hooks go: its workspace's door, and the door's token."""

    url: str
    token: str

    def handler(self) -> dict[str, Any]:
        return {"type": "http", "url": self.url, "headers": {"Authorization": f"Bearer {self.token}"},
                "timeout": HOOK_TIMEOUT_S, "onFailure": "block"}


@dataclass(frozen=True)
class Changed:
    """What an install or uninstall did to one settings file."""

    path: Path
    events: tuple[str, ...]
    """The events whose entries were added (install) or removed (uninstall)."""
    file_created: bool = False
    file_removed: bool = False


def settings_file(project: Path | None, user: bool) -> Path:
    """Where the hooks go: the user's Claude Code settings, or a project's `.claude/settings.local.json`.

    The hook command names this machine's Python and Belay's paths, and the hooks block every call when
    no console answers; written into the project's shared `settings.json` (which projects commit) they
    would stop a teammate's Claude Code.  `settings.local.json` is the project's file for this machine
    alone, which Claude Code reads as well and git is meant to ignore.
    """
    if user:
        home = os.environ.get("CLAUDE_CONFIG_DIR")
        return (Path(home) if home else Path.home() / ".claude") / "settings.json"
    return (project or Path.cwd()).resolve() / ".claude" / "settings.local.json"


def shared_settings_file(project: Path | None) -> Path:
    """A project's shared `.claude/settings.json`, where earlier versions installed the hooks."""
    return (project or Path.cwd()).resolve() / ".claude" / "settings.json"


def hook_command(state_root: Path, config_dir: Path, *, wait_s: float | None = None,
                 max_wait_s: float | None = None, agent: str = "claude") -> str:
    """The command line of Belay's hook client: this Python, isolated, with where to find the console.

    `wait_s` is how long a silent console is given before the call is blocked, `max_wait_s` the longest
    any call may wait (a person deciding); left out, the client's defaults (30 s and 3,000 s, or
    $BELAY_HOOK_WAIT and $BELAY_HOOK_MAX_WAIT) apply.  Both stay under HOOK_TIMEOUT_S, so Belay, not
    Claude Code's timeout, is the one that says why a call was blocked.  `agent` names the agent CLI whose
    hook protocol the command speaks (core.outside.hook_client.AGENTS)."""
    limits = [("--wait", wait_s), ("--max-wait", max_wait_s)]
    for flag, value in limits:
        if value is not None and not 0 < value < HOOK_TIMEOUT_S:
            raise ValueError(f"{flag} must be more than 0 and less than {HOOK_TIMEOUT_S} s, not {value}")
    return shlex.join([sys.executable, "-I", "-S", str(CLIENT), "--state-root", str(state_root),
                       "--config-dir", str(config_dir), *(("--agent", agent) if agent != "claude" else ()),
                       *(word for flag, value in limits if value is not None for word in (flag, f"{value:g}"))])


def project_http_hook(project: Path | None, config_dir: Path, state_dir: str | None = None) -> HttpHook:
    """The http hook of a project's workspace (the working directory's when None): its door's URL (its port chosen
    now if no console chose it yet) and the door's token.  Blocking: a few small files."""
    from core.outside.endpoint import install_token
    from core.outside.http_door import door_port, door_token, hook_url
    from core.settings import workspace_state_dir

    state = workspace_state_dir((project or Path.cwd()).resolve(), state_dir)
    return HttpHook(hook_url(door_port(state)), door_token(install_token(config_dir), state))


def install(path: Path, command: str, config_dir: Path, http: HttpHook | None = None) -> Changed:
    """Add Belay's entry for every event (once: installing twice changes nothing); with `http`, the tool events'
    entries are http hooks to that door, replacing Belay's command entries (or another door's) there, and the
    settings file, which then holds the door's token, is made 0600."""
    made = to_be_made(path)
    settings = _read(path)

    def entry(event: str) -> dict[str, Any]:
        handler = {"type": "command", "command": command, "timeout": HOOK_TIMEOUT_S, "onFailure": "block"}
        if http is not None and event in TOOL_EVENTS:
            handler = http.handler()
        return {"matcher": "*", "hooks": [handler]} if event in TOOL_EVENTS else {"hooks": [handler]}

    replaced = _drop_outdated(settings, entry)
    added = add_entries(path, settings, HOOK_EVENTS, entry)
    private = http is not None or _holds_a_door_token(settings)
    write_text_atomically(path, json.dumps(settings, indent=2) + "\n", mode=0o600 if private else None)
    _remember(config_dir, made, True)
    return Changed(path, tuple(e for e in HOOK_EVENTS if e in added or e in replaced), file_created=path in made)


def _drop_outdated(settings: dict[str, Any], entry: Callable[[str], dict[str, Any]]) -> set[str]:
    """Take out Belay's entries that are not what `entry` would write now (a command where an http hook goes, an
    old port or token); the events they were on."""
    hooks = settings.get("hooks")
    dropped: set[str] = set()
    if not isinstance(hooks, dict):
        return dropped
    for event in HOOK_EVENTS:
        entries = hooks.get(event)
        if isinstance(entries, list) and any(_is_ours(e) and e != entry(event) for e in entries):
            hooks[event] = [e for e in entries if not _is_ours(e) or e == entry(event)]
            dropped.add(event)
    return dropped


def _holds_a_door_token(settings: dict[str, Any]) -> bool:
    hooks = settings.get("hooks")
    return isinstance(hooks, dict) and any(
        _is_ours(e) and any(h.get("type") == "http" for h in e["hooks"] if isinstance(h, dict))
        for entries in hooks.values() if isinstance(entries, list) for e in entries)


def add_entries(path: Path, settings: dict[str, Any], events: Iterable[str],
                entry: Callable[[str], dict[str, Any]]) -> list[str]:
    """Add `entry(event)` to `settings["hooks"][event]` for every event that has no entry of Belay's yet (the
    agent CLIs' settings share this shape); returns the events added.  Raises ValueError, touching nothing of
    the person's, when the shape is not what it should be."""
    hooks = settings.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise ValueError(f"{path}: `hooks` is not an object; not touching it")
    added = []
    for event in events:
        entries = hooks.setdefault(event, [])
        if not isinstance(entries, list):
            raise ValueError(f"{path}: hooks.{event} is not a list; not touching it")
        if not any(_is_ours(e) for e in entries):
            entries.append(entry(event))
            added.append(event)
    return added


def uninstall(path: Path, config_dir: Path) -> Changed:
    """Remove Belay's entries (and only them); delete the file if Belay made it and it is now empty."""
    if not path.exists():
        remove_made_folders(config_dir, path)
        return Changed(path, ())
    settings = _read(path)
    hooks = settings.get("hooks")
    removed = []
    if isinstance(hooks, dict):
        for event in list(hooks):
            entries = hooks[event]
            if not isinstance(entries, list):
                continue
            kept = [e for e in entries if not _is_ours(e)]
            if len(kept) != len(entries):
                removed.append(event)
            if kept:
                hooks[event] = kept
            else:
                del hooks[event]
        if not hooks:
            del settings["hooks"]
    created = _remember_created(config_dir, path, False)
    if not settings and created:
        path.unlink()
        remove_made_folders(config_dir, path)
        return Changed(path, tuple(removed), file_removed=True)
    write_text_atomically(path, json.dumps(settings, indent=2) + "\n")
    return Changed(path, tuple(removed))


def _is_ours(entry: object) -> bool:
    if not isinstance(entry, dict):
        return False
    handlers = entry.get("hooks")
    return isinstance(handlers, list) and any(isinstance(h, dict) and (
        str(CLIENT) in str(h.get("command", "")) or _is_our_door(h.get("url"))) for h in handlers)


def _is_our_door(url: object) -> bool:
    return isinstance(url, str) and url.startswith("http://127.0.0.1:") and url.endswith(DOOR_PATH)


def _read(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8") or "{}")
    except ValueError as e:
        raise ValueError(f"{path} is not valid JSON ({e}); fix it first, Belay will not overwrite it") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path} does not hold a JSON object; Belay will not overwrite it")
    return data


def to_be_made(path: Path) -> list[Path]:
    """`path` and its folders that do not exist yet: what writing it makes, and so Belay's to remove again."""
    missing = []
    for made in (path, *path.parents):
        if os.path.lexists(made):
            break
        missing.append(made)
    return missing


def remove_made_folders(config_dir: Path, path: Path) -> None:
    """Remove the folders Belay made for `path` that are empty again, innermost first; any other is kept."""
    known, gone = _known(config_dir), []
    for folder in path.parents:
        if str(folder) not in known:
            break
        try:
            folder.rmdir()  # refused unless empty: whatever the person put there keeps it
        except FileNotFoundError:
            pass
        except OSError:
            break
        gone.append(folder)
    _remember(config_dir, gone, False)


def _remember_created(config_dir: Path, path: Path, created: bool) -> bool:
    """Record (or, with created False, forget and report) that Belay created this settings file."""
    return str(path) in _remember(config_dir, [path], created)


def _remember(config_dir: Path, paths: Iterable[Path], created: bool) -> set[str]:
    """Record (or forget) that Belay created these files and folders; what was recorded before."""
    names = {str(p) for p in paths}
    known = _known(config_dir)
    if not names:
        return known
    now = known | names if created else known - names
    config_dir.mkdir(parents=True, exist_ok=True)
    (config_dir / CREATED_FILE).write_text(json.dumps(sorted(now)), encoding="utf-8")
    return known


def _known(config_dir: Path) -> set[str]:
    try:
        return set(json.loads((config_dir / CREATED_FILE).read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError):
        return set()


@dataclass(frozen=True)
class AgentHooks:
    """Where one agent CLI keeps its hook settings, and how Belay's entries go in and come out again."""

    agent: str
    """As the hook command's `--agent` names it (core.outside.hook_client.AGENTS)."""
    settings_file: Callable[[Path | None, bool], Path]
    """(project or None for the working directory, user-wide?) -> the settings file."""
    install: Callable[[Path, str, Path], Changed]
    """(settings file, hook command, Belay's config dir) -> what was added."""
    uninstall: Callable[[Path, Path], Changed]
    """(settings file, Belay's config dir) -> what was taken out."""
    console_word: str = "Claude Code"
    """The agent's name in what `belay hooks` prints."""


CLAUDE = AgentHooks("claude", settings_file, install, uninstall)


def agent_hooks(agent: str) -> AgentHooks:
    """The hook settings of `agent` (claude, codex or gemini)."""
    if agent == "claude":
        return CLAUDE
    if agent in ("codex", "gemini"):  # each agent's module (core.outside.codex, ...) says where its settings are
        hooks: AgentHooks = importlib.import_module(f"core.outside.{agent}").HOOKS
        return hooks
    raise ValueError(f"Belay has no hooks for {agent!r}; it supervises claude, codex and gemini")
