"""Paths that are never written without a person, and secrets that are never read.

Protected paths hold things that run later, outside any check: git hooks
and config (`core.fsmonitor` runs on `git status`), agent and editor
settings (an agent that can edit them widens its own permissions), shell
start-up files.  They are matched by path component anywhere in the path,
inside the workspace or not, because a nested repository's `.git` is as
dangerous as the top one's.

Secrets are what a process can read about the console itself
(`/proc/self/environ` holds its API keys; anything under the console's own
`/proc/<pid>`), Belay's own configuration and state (the hook token that
opens the console's socket, the journal of every earlier call's output),
and the user's credential stores (SSH, cloud, package registries, Claude
Code's login).
"""

from __future__ import annotations

import functools
import os
import re
from pathlib import PurePath

from core.paths import one_slash, within
from core.policy.settings import config_dir
from core.process.sandbox import CREDENTIAL_STORES
from core.settings import state_root

PROTECTED_DIRS = frozenset({".git", ".belay", ".claude", ".vscode", ".idea", ".husky", ".ssh"})
"""Directories whose contents configure or run tools: a write anywhere below one is protected."""
PROTECTED_FILES = frozenset({
    ".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile", ".zshrc", ".zprofile",
    ".zshenv", ".zlogin", ".zlogout", ".envrc", ".gitconfig", ".mcp.json", ".inputrc",
})
"""Files that run or configure something the next time a shell, git or an agent starts."""
_PROTECTED_PAIRS = ((".config", "fish"), (".config", "git"), (".config", "belay"))

_PROC_SECRET = re.compile(r"/proc/(?:self|thread-self)(?:/.*)?|"
                          r"/proc/[0-9]+(?:/task/[0-9]+)?/(?:environ|mem|fd|fdinfo|map_files|root|cwd)(?:/.*)?")
"""A process's environment and memory, and its open files, root and cwd (doors into the console's own files)."""
_HOME_SECRETS = CREDENTIAL_STORES


def protected_reason(path: str | os.PathLike[str]) -> str | None:
    """Why writing `path` needs a person even in bypass mode, or None."""
    if belay_secret(path):
        return f"{path} is Belay's own configuration or state (the workspaces you trust, the journal)"
    parts = PurePath(path).parts
    for index, part in enumerate(parts):
        if part in PROTECTED_DIRS:
            return f"{path} is inside {part}, a protected directory: what is written there runs later"
        if part in PROTECTED_FILES and index == len(parts) - 1:
            return f"{path} is {part}, a protected file that runs or configures a tool at start-up"
        if index and (parts[index - 1], part) in _PROTECTED_PAIRS:
            return f"{path} is inside {parts[index - 1]}/{part}, a protected configuration directory"
    return None


def proc_secret(path: str | os.PathLike[str]) -> bool:
    """Whether `path` reads a process's environment, memory, or the console's own /proc entry."""
    text = one_slash(os.path.normpath(os.fspath(path)))
    if not text.startswith("/proc"):
        return False  # every path below is: most are not, and this is asked of every path a call names
    own = f"/proc/{os.getpid()}"
    if text.startswith(own + "/net/") or text == own + "/net":
        return False  # /proc/net resolves here: the network's tables, not the console's own
    return _PROC_SECRET.fullmatch(text) is not None or text == own or text.startswith(own + "/")


def belay_secret(path: str | os.PathLike[str]) -> bool:
    """Whether `path` lies in Belay's own configuration or state (wherever the environment moved them)."""
    text = os.path.normpath(os.fspath(path))
    config, state = _belay_dirs(*map(os.environ.get, _DIR_VARIABLES))
    return within(text, config) or within(text, state)


_DIR_VARIABLES = ("BELAY_CONFIG_DIR", "BELAY_STATE_DIR", "HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME")
"""What the two directories are computed from: they are worked out again only when one of these changes."""


@functools.lru_cache(maxsize=16)
def _belay_dirs(*_environment: str | None) -> tuple[str, str]:
    """Belay's config and state roots for these variables (a search checks thousands of paths: not each time)."""
    return os.path.normpath(config_dir()), os.path.normpath(state_root())


def home_secret(path: str | os.PathLike[str], home: str) -> bool:
    """Whether `path` lies in one of the user's credential stores (~/.ssh, ~/.aws, ...)."""
    text, home = one_slash(os.path.normpath(os.fspath(path))), one_slash(os.path.normpath(home))
    if not os.path.isabs(text) or not within(text, home):
        return False
    rest = text[len(home):].lstrip("/")  # below home: what relpath would say, without its walk of both
    return any(rest == s or rest.startswith(s + "/") for s in _HOME_SECRETS)


_MENTIONED = re.compile(
    r"(?:^|[\s/'\"=:;|&(<>`])(" + "|".join(re.escape(n) for n in sorted(PROTECTED_DIRS | PROTECTED_FILES)) +
    r")(?=$|[\s/'\";|&)<>`])")


def mentioned_protected(text: str) -> str | None:
    """The first protected name a command line spells out (`.git/hooks`, `.bashrc`...), or None.

    Bypass mode cannot see where `python -c '...'` or `echo x > "$f"` writes;
    a line that names a protected place is asked about rather than allowed.
    """
    match = _MENTIONED.search(text)
    return match.group(1) if match else None


def secret_reason(path: str | os.PathLike[str], home: str) -> str | None:
    """Why reading `path` is refused outright, or None."""
    if proc_secret(path):
        return f"{path} exposes a process's environment or memory (API keys live there)"
    if home_secret(path, home):
        return f"{path} is in a credential store"
    if belay_secret(path):
        return f"{path} is Belay's own configuration or state (its hook token, the journal of earlier calls)"
    return None
