"""Belay's hooks in Codex's `hooks.json`, and Codex's trust in exactly those hooks.

Codex runs a command hook only once the person has trusted it: its user config.toml records, per hook
(`[hooks.state."<hooks.json path>:<event>:<group>:<handler>"]`), the `trusted_hash` of the hook's
definition, and a hook with no such record (or a record of another definition) is skipped without a
word, so every call would run unsupervised.  `belay hooks install --agent codex` is the person's
decision to have Belay's hooks, so it also records that trust, for Belay's own entries alone: the hash
is Codex's own (sha256 of the hook's normalized definition as compact JSON with sorted keys; checked
with the real CLI in tests/integration/test_codex_cli.py), the lines go in a block marked as Belay's,
and uninstall removes that block.  Nothing else of the config file is touched; a file whose result
would not parse is left as it was.

The trust key names the hooks.json by its absolute path and the entry by its position: editing the
file by hand (or moving it) makes Codex skip Belay's hooks until `belay hooks install --agent codex`
is run again.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tomllib
from pathlib import Path
from typing import Any

from core.outside import install
from core.store.atomic_file import write_text_atomically

EVENTS = ("PreToolUse", "PostToolUse", "PermissionRequest", "SubagentStart", "SubagentStop", "SessionStart",
          "SessionEnd", "Stop")
TIMEOUTS_S = {"PreToolUse": install.HOOK_TIMEOUT_S, "PermissionRequest": install.HOOK_TIMEOUT_S,
              "SessionEnd": 3}
"""Seconds Codex gives each hook (it clamps SessionEnd's to 3 s); others get DEFAULT_TIMEOUT_S.  Codex lets a
call run when its hook times out, so the hook client's own limit (--max-wait) stays under these."""
DEFAULT_TIMEOUT_S = 600
NO_MATCHER = frozenset({"UserPromptSubmit", "Stop"})
"""Events whose matcher Codex ignores (and leaves out of the hash)."""


def codex_home() -> Path:
    home = os.environ.get("CODEX_HOME")
    return Path(home) if home else Path.home() / ".codex"


def settings_file(project: Path | None, user: bool) -> Path:
    """`$CODEX_HOME/hooks.json` (default ~/.codex), or a project's `.codex/hooks.json`.

    Codex has no machine-local project file (Claude Code's settings.local.json): a project's
    `.codex/hooks.json` is the one its config layer reads, and Codex loads it only in a project the
    person trusts."""
    if user:
        return codex_home() / "hooks.json"
    return (project or Path.cwd()).resolve() / ".codex" / "hooks.json"


def install_hooks(path: Path, command: str, config_dir: Path) -> install.Changed:
    """Add Belay's command hook to every event Belay reads (once: installing twice changes nothing), and
    record Codex's trust in them.

    No matcher (every tool), and no `onFailure`: Codex has none, and lets a call run when a hook fails
    (an exit code other than 0 or 2, a timeout), which the hook client never does on purpose."""
    config = codex_home() / "config.toml"
    made = [*install.to_be_made(path), *install.to_be_made(config)]
    settings = install._read(path)
    added = install.add_entries(path, settings, EVENTS, lambda event: {"hooks": [
        {"type": "command", "command": command, "timeout": TIMEOUTS_S.get(event, DEFAULT_TIMEOUT_S)}]})
    trust = trusted_hashes(path.absolute(), settings["hooks"])
    text = with_trust(config.read_text(encoding="utf-8") if config.exists() else "", path.absolute(), trust)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomically(path, json.dumps(settings, indent=2) + "\n")
    config.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomically(config, text)
    install._remember(config_dir, made, True)
    return install.Changed(path, tuple(added), file_created=path in made)


def uninstall_hooks(path: Path, config_dir: Path) -> install.Changed:
    """Take Belay's entries out of the hooks file and Belay's trust out of Codex's config; a config Belay
    created and nothing else is left in is removed, with the folders Belay made for it."""
    config = codex_home() / "config.toml"
    if config.exists():
        text = config.read_text(encoding="utf-8")
        kept = with_trust(text, path.absolute(), {})
        if not kept.strip() and install._remember_created(config_dir, config, False):
            config.unlink()
            install.remove_made_folders(config_dir, config)
        elif kept != text:
            write_text_atomically(config, kept)
    return install.uninstall(path, config_dir)


# -- Codex's trust -------------------------------------------------------------------


def event_label(event: str) -> str:
    """Codex's snake_case name of an event in trust keys: PreToolUse -> pre_tool_use."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", event).lower()


def hook_hash(event: str, matcher: str | None, handler: dict[str, Any]) -> str:
    """Codex's `trusted_hash` of one command hook: its normalized definition, hashed as Codex hashes it."""
    timeout = handler.get("timeout")
    timeout = int(timeout) if isinstance(timeout, int | float) else None
    normal: dict[str, Any] = {"type": "command", "command": handler["command"], "async": bool(handler.get("async")),
                              "timeout": min(max(timeout or 1, 1), 3) if event == "SessionEnd"
                              else max(timeout or 600, 1)}
    if handler.get("statusMessage") is not None:
        normal["statusMessage"] = handler["statusMessage"]
    identity: dict[str, Any] = {"event_name": event_label(event), "hooks": [normal]}
    if matcher is not None and event not in NO_MATCHER:
        identity["matcher"] = matcher
    text = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def trusted_hashes(path: Path, hooks: dict[str, Any]) -> dict[str, str]:
    """Trust key -> hash for each of Belay's hooks in a hooks.json's `hooks` object."""
    trust = {}
    for event, groups in hooks.items():
        for g, group in enumerate(groups if isinstance(groups, list) else []):
            handlers = group.get("hooks") if isinstance(group, dict) else None
            for h, handler in enumerate(handlers if isinstance(handlers, list) else []):
                if isinstance(handler, dict) and str(install.CLIENT) in str(handler.get("command", "")):
                    matcher = group.get("matcher")
                    trust[f"{path}:{event_label(event)}:{g}:{h}"] = hook_hash(
                        event, matcher if isinstance(matcher, str) else None, handler)
    return trust


def _markers(path: Path) -> tuple[str, str]:
    return (f"# >>> Belay trusts its hooks in {path} (`belay hooks uninstall --agent codex` removes this)",
            f"# <<< Belay trusts its hooks in {path}")


def with_trust(text: str, path: Path, trust: dict[str, str]) -> str:
    """Codex's config text with Belay's trust block for `path` replaced by `trust` (none: removed).

    A key the person's own lines already hold is left to them (defining it twice would break the file);
    ValueError when the result would not parse, before anything is written."""
    start, end = _markers(path)
    lines = text.splitlines()
    if start in lines and end in lines[lines.index(start):]:
        first = lines.index(start)
        last = lines.index(end, first)
        lines = lines[:first] + lines[last + 1:]
    while lines and not lines[-1].strip():
        lines.pop()
    rest = "\n".join(lines) + ("\n" if lines else "")
    if not trust:  # taking Belay's lines out needs nothing else of the file, not even that it parses
        return rest
    try:
        hooks = tomllib.loads(rest).get("hooks")
    except tomllib.TOMLDecodeError as e:
        raise ValueError(f"Codex's config.toml does not parse ({e}); fix it first, Belay will not change it") from None
    theirs = hooks.get("state") if isinstance(hooks, dict) else None
    theirs = theirs if isinstance(theirs, dict) else {}
    stale = [key for key, value in trust.items()
             if isinstance(theirs.get(key), dict) and theirs[key].get("trusted_hash") not in (None, value)]
    if stale:
        raise ValueError(f"Codex's config.toml trusts another version of Belay's hook {stale[0]}, so Codex would "
                         f"skip it: remove that [hooks.state] entry (or trust the hook again in Codex's /hooks)")
    block = [f"[hooks.state.{json.dumps(key, ensure_ascii=False)}]\ntrusted_hash = \"{value}\""
             for key, value in trust.items() if key not in theirs]
    if not block:
        return rest
    result = rest + ("\n" if rest else "") + "\n".join([start, *block, end]) + "\n"
    try:
        tomllib.loads(result)
    except tomllib.TOMLDecodeError as e:
        raise ValueError(f"Belay's trust lines would not fit Codex's config.toml ({e}); trust Belay's hooks "
                         f"in Codex instead (/hooks)") from None
    return result
