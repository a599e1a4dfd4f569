"""Which workspaces the person trusts: only theirs may loosen the rules from inside the workspace.

A workspace's own `.belay/settings.toml` travels with it: a cloned
repository could allow its own commands, switch to bypass mode, or stop
its changes from being kept for undo.  So what a workspace's file loosens
(allow rules, a mode other than default or plan, `on_timeout = "allow"`,
`[changes] ignore`) waits until the person trusts that workspace in the
window; what it tightens (deny and ask rules, disabled tools) applies at
once.  Trust is kept in the user's configuration directory, outside every
workspace (and hidden from commands), keyed by the workspace's real path.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

from core.policy.settings import config_dir
from core.store.atomic_file import write_text_atomically

log = logging.getLogger(__name__)

TRUST_FILE = "trusted-workspaces.json"


def trust_path() -> Path:
    return config_dir() / TRUST_FILE


def is_trusted(workspace: str | os.PathLike[str]) -> bool:
    return os.path.realpath(workspace) in _trusted()


def trust(workspace: str | os.PathLike[str]) -> None:
    """Remember that the person trusts `workspace` (written atomically; other entries kept)."""
    kept = _trusted()
    kept.add(os.path.realpath(workspace))
    path = trust_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomically(path, json.dumps({"trusted": sorted(kept)}, indent=2) + "\n")


def _trusted() -> set[str]:
    path = trust_path()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return set()
    except (OSError, ValueError) as e:
        log.warning("%s cannot be read (%s): no workspace is trusted until it is fixed or removed", path, e)
        return set()
    entries = data.get("trusted") if isinstance(data, dict) else None
    return {e for e in entries if isinstance(e, str)} if isinstance(entries, list) else set()
