"""The wall around an outside agent's command: the command Belay allowed, rewritten to run in Belay's sandbox.

Claude Code, Codex and Gemini CLI run their shell commands themselves.  When Belay allows one, it answers
with the same command wrapped (`updatedInput`, or Gemini's `tool_input`), so the agent's own shell starts
bubblewrap instead of the command: the workspace writable, the rest of the machine read-only, a private
/tmp, Belay's state and settings and the user's credential stores hidden, no capabilities, a PID namespace,
the network as the `[bash]` settings say, and the process limit (the command's pids cgroup, joined before
bubblewrap starts, or RLIMIT_NPROC in a user namespace of its own).  Inside, the environment is the
allow-list Belay's own Bash uses, taken from the agent's environment when the command starts: values are
expanded by the agent's shell and handed to `env -i` as arguments, never pasted into script text.  The
command itself reaches bash as an argument (`bash -c "$1"`), exactly as the agent wrote it.

No Python runs on the way: the agent's shell starts bubblewrap, then bash.  What the model and the person
see is the agent's command (the journal keeps it; Claude Code's transcript keeps the model's input).  What
changes for the agent: a `cd` inside the command does not carry over to its next command, /tmp is private
to each command, and the agent's shell functions and aliases are not defined inside.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from core.process.environment import FIXED
from core.process.limits import PidsGroup, ProcessLimit, nproc_for
from core.process.sandbox import SandboxInfo, wrap
from core.tools.bash import BashSettings

_LIVE = ("PATH", "HOME", "USER", "LOGNAME", "SHELL", "TZ", "LANG", "LC_ALL", "LC_CTYPE", "LC_MESSAGES")
"""The allow-listed variables taken from the agent's environment (TERM and TMPDIR are fixed inside)."""

_INSIDE = (
    # The agent's PATH without relative entries and entries inside the workspace (a planted `git`); empty
    # variables the agent did not have are unset; then the limits, and the command as bash's own -c.
    'set -f; p=; IFS=:; for d in $PATH; do case "$d" in /*) case "$d/" in "$BELAY_WS"/*) ;; '
    '*) p="${p:+$p:}$d";; esac;; esac; done; unset IFS BELAY_WS; set +f; '
    'export PATH="${p:-/usr/local/bin:/usr/bin:/bin}"; unset p d; '
    'for v in USER LOGNAME SHELL TZ LC_ALL LC_CTYPE LC_MESSAGES; do [ -n "${!v}" ] || unset "$v"; done; unset v; '
    '{limits}exec /bin/bash --noprofile --norc -c "$1"'
)


@dataclass
class Walled:
    """A command rewritten to run in the sandbox, and the pids group it joins (removed when the call ends)."""

    command: str
    group: PidsGroup | None = None


class _Live(str):
    """A word the agent's shell expands when the command starts (a variable of the agent's environment)."""


def walled(command: str, *, workspace: Path, info: SandboxInfo, limit: ProcessLimit, settings: BashSettings,
           hide: Sequence[Path]) -> Walled | None:
    """`command` as the agent's shell should run it inside the wall (blocking: may create a pids cgroup);
    None when there is no wall here (no working bubblewrap): the agent then runs it as it wrote it."""
    if not info.available:
        return None
    ws = os.path.realpath(workspace)
    group = PidsGroup.create(limit) if limit.kind == "cgroup" else None
    nproc = nproc_for(limit) if limit.kind == "rlimit" else None
    inner = ["/usr/bin/env", "-i", *_environment(settings, ws), "/bin/bash", "--noprofile", "--norc", "-c",
             _INSIDE.replace("{limits}", _limits(settings, nproc)), "belay-wall", command]
    argv = wrap(inner, workspace=workspace, tmp=None, network=settings.network, info=info, hide=hide,
                own_users=limit.kind == "rlimit", chdir=_Live("$PWD"))  # a /tmp of its own; where the agent runs it
    line = " ".join(f'"{w}"' if isinstance(w, _Live) else shlex.quote(w) for w in argv)
    if group is not None:  # a subshell joins the group, then becomes bubblewrap: not `sh -c`, which agents unwrap
        line = f"(echo 0 > {shlex.quote(str(group.path / 'cgroup.procs'))} && exec {line})"
    return Walled(line, group)


def _environment(settings: BashSettings, ws: str) -> list[str]:
    """`NAME=value` words: the agent's allow-listed variables (expanded by its shell), then the fixed ones."""
    live = [*_LIVE, *(n for n in settings.env_passthrough if n not in _LIVE)]
    words: list[str] = [_Live(f"{name}=${{{name}-}}") for name in live]
    words += [f"{name}={value}" for name, value in FIXED.items()]
    return [*words, "TMPDIR=/tmp", f"BELAY_WS={ws}"]


def _limits(settings: BashSettings, nproc: int | None) -> str:
    """The `ulimit` prefix: address space, file size and core dumps as for Belay's own Bash, and the process
    count where RLIMIT_NPROC is the limit (in the sandbox's own user namespace).  A limit that cannot be set
    stops the command (exit 126) rather than run it without."""
    parts = ["ulimit -c 0"]
    if settings.memory_limit_mb:
        parts.append(f"ulimit -v {settings.memory_limit_mb * 1024}")  # KiB
    if settings.file_size_limit_mb:
        parts.append(f"ulimit -f {settings.file_size_limit_mb * 1024}")  # bash's blocks are 1 KiB
    if nproc is not None and nproc > 0:
        parts.append(f"ulimit -u {nproc}")
    return " && ".join(parts) + " || exit 126; "
