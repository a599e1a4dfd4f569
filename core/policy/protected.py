"""Paths that are never written without a person, and secrets that are never read.

Protected paths hold things that run later, outside any check: git hooks
and config (`core.fsmonitor` runs on `git status`), pre-commit's hooks,
agent and editor settings (`.claude/`, `.codex/`, `.gemini/`, `.cursor/`,
`.vscode/`: an agent that can edit them widens its own permissions or
removes the hooks that put it under Belay), dev containers, shell start-up
files, and the configuration of package managers and build tools that name
programs to run (`.npmrc`, `.yarnrc.yml`, `pip.conf`, `.cargo/config.toml`).
They are matched by path component anywhere in the path, inside the
workspace or not, because a nested repository's `.git` is as dangerous as
the top one's.  Not protected: `.github/workflows/` (it runs on CI, after
a push that itself needs a person) and `.gitattributes` (its filters and
drivers run only once `.git/config` names them, which is protected).

Secrets are refused to every reader, never asked about (one approval would
hand the token over): a process's environment, memory and open files
(`/proc/<pid>/environ` holds the agent's or the console's API keys), and
anything under the console's own `/proc/<pid>`; Belay's own configuration
and state (the hook token that opens the console's socket, the journal of
every earlier call's output); the user's credential stores below home
(`_HOME_SECRETS`: keys and keyrings, the logins of Claude Code, Codex and
Gemini CLI, cloud and hosting CLIs, code hosts, package registries and
build tools, databases, browsers' cookies, and shell and REPL histories,
which keep what was typed on a command line); the system's password hashes
and SSH host keys.  A path only partly known before a command runs is a
secret when whatever fills it in makes one: the Bash analysis gives each
run-time part as `UNKNOWN` (`/proc/$PPID/environ`, `/proc/$(pgrep x)/mem`,
`~/.ssh/$KEY`) and a glob stands for any name (`/proc/*/environ`).  The
readers are the file tools on both routes (Belay's own, which also refuse
any path outside the workspace themselves, and an outside agent's), MCP
tools whose arguments name a path, and Bash commands.
"""

from __future__ import annotations

import fnmatch
import functools
import os
import re
from pathlib import PurePath

from core.paths import one_slash, within
from core.policy.settings import config_dir
from core.process.sandbox import CREDENTIAL_STORES
from core.settings import state_root

PROTECTED_DIRS = frozenset({".git", ".belay", ".claude", ".codex", ".gemini", ".cursor", ".vscode", ".idea",
                            ".husky", ".devcontainer", ".ssh"})
"""Directories whose contents configure or run tools: a write anywhere below one is protected.  The agents'
folders hold the hooks that put them under Belay (`.codex/hooks.json`, `.gemini/settings.json`); a dev
container's `initializeCommand` runs on this machine when an editor opens the folder."""
PROTECTED_FILES = frozenset({
    ".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile", ".zshrc", ".zprofile",
    ".zshenv", ".zlogin", ".zlogout", ".envrc", ".gitconfig", ".mcp.json", ".inputrc",
    ".pre-commit-config.yaml", ".npmrc", ".yarnrc", ".yarnrc.yml", ".pypirc", "pip.conf",
})
"""Files that run or configure something the next time a shell, git, an agent or a package manager starts
(`script-shell` in .npmrc, `yarnPath`, an index URL, a pre-commit hook; .pypirc says where uploads and their
passwords go)."""
_PROTECTED_PAIRS = frozenset({(".config", "fish"), (".config", "git"), (".config", "belay"), (".cargo", "config"),
                              (".cargo", "config.toml")})
"""A folder in a folder (or a file in it: cargo's config names the programs a build runs)."""

_PROC_SECRET = re.compile(r"/proc/(?:self|thread-self)(?:/.*)?|"
                          r"/proc/[0-9]+(?:/task/[0-9]+)?/(?:environ|mem|fd|fdinfo|map_files|root|cwd)(?:/.*)?")
"""A process's environment and memory, and its open files, root and cwd (doors into the console's own files)."""
_PROC_ENTRIES = ("environ", "mem", "fd", "fdinfo", "map_files", "root", "cwd")
UNKNOWN = "\0"
"""Stands for a part of a path only known at run time (`$PPID`, `$(pgrep x)`): no real path holds a NUL."""
_ANY_NAME = re.compile(r"[\0*?\[]")
_HOME_SECRETS = CREDENTIAL_STORES
_HOME_SECRET_DEPTH = max(s.count("/") + 1 for s in _HOME_SECRETS)
_SYSTEM_SECRETS = re.compile(r"/etc/(?:g?shadow-?|security/opasswd|ssh/ssh_host_[A-Za-z0-9_]+_key)")
"""The system's password hashes and the machine's SSH host keys (readable when the console runs as root)."""


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
    """Whether `path` reads a process's environment, memory, or the console's own /proc entry; a path with
    globs or parts only known at run time (each an `UNKNOWN`) when it may."""
    text = one_slash(os.path.normpath(os.fspath(path)))
    if not text.startswith("/proc"):
        return False  # every path below is: most are not, and this is asked of every path a call names
    own = f"/proc/{os.getpid()}"
    if text.startswith(own + "/net/") or text == own + "/net":
        return False  # /proc/net resolves here: the network's tables, not the console's own
    return _PROC_SECRET.fullmatch(text) is not None or text == own or text.startswith(own + "/") or \
        _any_process_secret(text.split("/")[2:])


def _any_process_secret(parts: list[str]) -> bool:
    """Whether /proc/<parts> may name a secret entry of a process: its process may be any process
    (`/proc/$PPID/environ`, `/proc/*/mem`, `/proc/$(pgrep x)/fd`) or its entry any entry (`/proc/1/$E`)."""
    if len(parts) < 2 or not (parts[0].isdigit() or _ANY_NAME.search(parts[0])):
        return False
    entry = parts[1:]
    return _may_be(entry[0], _PROC_ENTRIES) or (len(entry) > 2 and _may_be(entry[0], ("task",)) and
                                                 _may_be(entry[2], _PROC_ENTRIES))


def _may_be(part: str, names: tuple[str, ...]) -> bool:
    """Whether a path component, a glob or a run-time part in it matching anything, may be one of `names`."""
    if _ANY_NAME.search(part) is None:
        return part in names
    pattern = re.compile(fnmatch.translate(part.replace(UNKNOWN, "*")))
    return any(pattern.match(name) for name in names)


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
    parts = text[len(home):].lstrip("/").split("/")  # below home: what relpath would say, without its walk
    return any("/".join(parts[:n]) in _HOME_SECRETS for n in range(1, min(len(parts), _HOME_SECRET_DEPTH) + 1))


def system_secret(path: str | os.PathLike[str]) -> bool:
    """Whether `path` is the system's password hashes (/etc/shadow, /etc/gshadow) or a private SSH host key."""
    return _SYSTEM_SECRETS.fullmatch(one_slash(os.path.normpath(os.fspath(path)))) is not None


_MENTIONED = re.compile(
    r"(?:^|[\s/'\"=:;|&(<>`])(" + "|".join(re.escape(n) for n in sorted(
        PROTECTED_DIRS | PROTECTED_FILES | {"/".join(pair) for pair in _PROTECTED_PAIRS}, key=len, reverse=True)) +
    r")(?=$|[\s/'\";|&)<>`])")


def mentioned_protected(text: str) -> str | None:
    """The first protected name a command line spells out (`.git/hooks`, `.bashrc`...), or None.

    Bypass mode cannot see where `python -c '...'` or `echo x > "$f"` writes;
    a line that names a protected place is asked about rather than allowed.
    """
    match = _MENTIONED.search(text)
    return match.group(1) if match else None


def secret_reason(path: str | os.PathLike[str], home: str, named: str | None = None) -> str | None:
    """Why reading `path` is refused outright, or None; the reason calls it `named` when given (the path as the
    call spelled it: `/proc/$PPID/environ`, not the pattern it was matched as)."""
    shown = named or path
    if proc_secret(path):
        return f"{shown} exposes a process's environment or memory (API keys live there)"
    if home_secret(path, home):
        return f"{shown} is in a credential store"
    if system_secret(path):
        return f"{shown} holds the system's password hashes or a host key"
    if belay_secret(path):
        return f"{shown} is Belay's own configuration or state (its hook token, the journal of earlier calls)"
    return None
