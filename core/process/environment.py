"""The environment an agent's command runs with: an allowlist, no secrets, no startup hooks.

A child inherits nothing by default.  A few harmless variables pass (PATH,
HOME, locale...), plus names the user passes through explicitly, but never a
name that looks like a secret or a variable that makes a shell or runtime
execute code on start (BASH_ENV, LD_PRELOAD, NODE_OPTIONS...).  PATH loses
relative entries and entries inside the workspace, so a `git` the agent
planted there is not what `git` runs.  Fixed variables make interactive
programs give up instead of waiting for a person: editors are `true`,
pagers are `cat`, git never prompts.  `CI` is deliberately not set: it
changes how many tools behave (warnings as errors, other defaults), not
only whether they ask.

Values are handed to execve as they are, never written into script text,
and values containing a newline are dropped.
"""

from __future__ import annotations

import ctypes
import os
import re
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

ALLOWED = ("PATH", "HOME", "LANG", "TERM", "USER", "LOGNAME", "SHELL", "TZ", "TMPDIR")
ALLOWED_PREFIXES = ("LC_",)
FIXED = {
    "GIT_TERMINAL_PROMPT": "0", "GIT_EDITOR": "true", "EDITOR": "true", "VISUAL": "true",
    "PAGER": "cat", "GIT_PAGER": "cat", "MANPAGER": "cat", "TERM": "dumb", "NO_COLOR": "1",
    "DEBIAN_FRONTEND": "noninteractive", "PIP_NO_INPUT": "1",
}
"""Set for every command: nothing waits for a person who is not there, nothing paints colours."""
DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin"

_SECRET_NAME = re.compile(
    r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|CREDENTIAL|AUTH(?!OR)|SESSION|COOKIE|_PAT\b|_PAT_|"
    r"DATABASE_URL|DSN|PRIVATE|SIGNATURE|SALT|CERT|ACCESS|API", re.IGNORECASE)
_SECRET_VALUE = re.compile(
    r"sk-[A-Za-z0-9_-]{16,}|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_|AKIA[0-9A-Z]{16}|xox[abposr]-|"
    r"-----BEGIN [A-Z ]*PRIVATE KEY|glpat-|://[^/\s:@]+:[^/\s@]+@")
"""Well-known token shapes and URLs with a password in them, whatever the variable is called."""
_STARTUP_HOOKS = frozenset({
    "BASH_ENV", "ENV", "PROMPT_COMMAND", "SHELLOPTS", "BASHOPTS", "PS1", "PS2", "PS3", "PS4", "IFS",
    "CDPATH", "GLOBIGNORE", "HISTFILE", "INPUTRC", "PYTHONSTARTUP", "PYTHONINSPECT", "PYTHONHOME",
    "PERL5OPT", "PERL5LIB", "PERLLIB", "RUBYOPT", "NODE_OPTIONS", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS",
    "JDK_JAVA_OPTIONS", "SSH_ASKPASS", "LESSOPEN", "LESSCLOSE", "ZDOTDIR",
})
_STARTUP_PREFIXES = ("LD_", "DYLD_", "BASH_FUNC_", "GIT_SSH", "GIT_CONFIG", "GIT_EXEC", "GIT_ASKPASS",
                     "GIT_PROXY", "GIT_EXTERNAL", "GIT_DIR", "GIT_WORK_TREE", "GIT_TEMPLATE", "GIT_INDEX",
                     "GIT_OBJECT", "GIT_ALTERNATE", "GIT_TRACE", "GIT_NAMESPACE", "GIT_CEILING")
_PR_GET_DUMPABLE, _PR_SET_DUMPABLE = 3, 4


def refusal(name: str) -> str | None:
    """Why `name` may not be passed to a command, or None when it may."""
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        return f"{name!r} is not a valid environment variable name"
    upper = name.upper()
    if upper in _STARTUP_HOOKS or upper.startswith(_STARTUP_PREFIXES):
        return f"{name} makes shells, linkers or runtimes run code or change behaviour on start"
    if _SECRET_NAME.search(upper):
        return f"{name} looks like it holds a secret (credentials are never given to agent commands)"
    if upper in FIXED:
        return f"{name} is set by Belay itself ({FIXED[upper]!r}) so that no program waits for input"
    return None


def _acceptable_value(value: str) -> bool:
    return "\n" not in value and "\r" not in value and not _SECRET_VALUE.search(value)


def _inside(path: str, root: str) -> bool:
    try:
        return os.path.commonpath([path, root]) == root
    except ValueError:
        return False


def sanitize_path(value: str, workspace: Path) -> str:
    """PATH without empty, relative or workspace entries; a program the agent planted never shadows a real one."""
    root = os.path.realpath(workspace)
    kept: list[str] = []
    for entry in value.split(os.pathsep):
        if not entry or not os.path.isabs(entry) or _inside(os.path.realpath(entry), root) or entry in kept:
            continue
        kept.append(entry)
    return os.pathsep.join(kept) or DEFAULT_PATH


def build_env(workspace: Path, *, tmpdir: str, passthrough: Iterable[str] = (),
              host: Mapping[str, str] | None = None) -> dict[str, str]:
    """The complete environment for a command run in `workspace`, from the console's own (`host`)."""
    host = os.environ if host is None else host
    passed = {n for n in passthrough if refusal(n) is None}
    env: dict[str, str] = {}
    for name, value in host.items():
        wanted = name in ALLOWED or name.startswith(ALLOWED_PREFIXES) or name in passed
        if wanted and _SECRET_NAME.search(name) is None and _acceptable_value(value):
            env[name] = value
    env["PATH"] = sanitize_path(env.get("PATH", DEFAULT_PATH), workspace)
    env["TMPDIR"] = tmpdir
    if "LANG" not in env and "LC_ALL" not in env:
        env["LANG"] = "C.UTF-8"
    env.update(FIXED)
    return env


def make_non_dumpable() -> bool:
    """Stop processes of the same user from reading this process's memory and /proc/<pid>/environ.

    A command whose environment was scrubbed could otherwise still read the
    console's original environment (secrets included) from /proc.  This does
    not stop a process holding CAP_SYS_PTRACE (root, unless its capabilities
    were dropped, as bubblewrap does); the sandbox's PID namespace hides the
    console's /proc entry altogether.  Returns whether the flag is now set.
    """
    if not sys.platform.startswith("linux"):
        return False
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
        return False
    return bool(libc.prctl(_PR_GET_DUMPABLE, 0, 0, 0, 0) == 0)
