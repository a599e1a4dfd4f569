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

What the command prints goes from the agent's shell straight to the model, past Belay's own caps: so the
wall filters it itself (`_FILTER`), each of stdout and stderr on its own: at most `STDOUT_BYTES` and
`STDERR_BYTES` of it are passed on, then a marker with the count of the bytes cut (the rest is still read,
so a command that prints much is never stopped by a closed pipe); a line longer than MAX_LINE_CHARS is cut
with a marker so that, marker included, it fits; C0 and C1 controls (ESC, CR, BEL...) and invisible format
characters (bidi overrides, zero-width) become `?`, so no live terminal sequence reaches the model, Claude
Code's terminal or Belay's window; a CR before a line's end goes.  `head -c` bounds what awk ever holds (a
line of 50 MB, `cat /dev/zero`), awk does the lines in the C locale (bytes).  The exit status is the
command's own (PIPESTATUS).  The filters run outside bubblewrap, in the agent's shell's process tree: the
sandbox's PID namespace ends with its command (so what it left running in the background goes too, and the
pipes close), and the filters, waiting for the pipes to close, then end as well.  The command's output gains
a final newline where it had none.

No Python runs on the way: the agent's shell starts bash (the filters), bubblewrap, then bash.  What the
model and the person see is the agent's command (the journal keeps it; Claude Code's transcript keeps the
model's input).  What changes for the agent: a `cd` inside the command does not carry over to its next
command, /tmp is private to each command, and the agent's shell functions and aliases are not defined inside.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from core.process.environment import FIXED
from core.process.limits import PidsGroup, ProcessLimit, nproc_for
from core.process.output import LINE_MARK_ROOM, MAX_LINE_CHARS
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


STDOUT_BYTES = 20_000
STDERR_BYTES = 8_000
"""What the wall passes on of a command's stdout and stderr: with the markers, under the 30,000 characters
an agent is given of an output (Claude Code's own cap, and Belay's, core.run.calls.MAX_OUTPUT_CHARS)."""
_ODD = ("[\\000-\\010\\013-\\037\\177]|\\302[\\200-\\237]|\\330\\234|\\341\\240\\216"
        "|\\342\\200[\\213-\\217\\250-\\256]|\\342\\201[\\240-\\244\\246-\\257]"
        "|\\357\\273\\277|\\357\\277[\\271-\\273]|\\363\\240[\\200\\201][\\200-\\277]")
"""In UTF-8 bytes, what core.process.output.sanitize removes or escapes: C0 controls but tab and newline, DEL,
C1 controls, and the invisible format characters (bidi overrides and isolates, zero-width, BOM, tags)."""
_LINES = (
    # awk in the C locale: each record is at most what head passed on; a CR ending it goes, the rest are `?`.
    f'{{ sub(/\\r$/, ""); if ($0 ~ /{_ODD}/) gsub(/{_ODD}/, "?"); n = length($0); '
    f'if (n > {MAX_LINE_CHARS}) $0 = substr($0, 1, {MAX_LINE_CHARS - LINE_MARK_ROOM}) '
    f'"... [line cut: " (n - {MAX_LINE_CHARS - LINE_MARK_ROOM}) " more bytes not shown]"; print }}'
)
_FILTER = (
    # Each filter is its pipeline's last part, run by this shell itself rather than a subshell of its own.
    "shopt -s lastpipe; "
    # f CAP: pass on CAP bytes, lines capped and controls made harmless; then read the rest, counting it.
    "f() { /usr/bin/head -c \"$1\" | LC_ALL=C /usr/bin/awk " + shlex.quote(_LINES) + "; "
    "IFS= read -rd '' -n1 _ || return 0; printf '[... %s bytes cut ...]\\n' \"$(( $(/usr/bin/wc -c) + 1 ))\"; }; "
    # stderr through one filter (a pipe of its own, by way of fd 3), stdout through the other.
    f'{{ "$@" 2>&1 1>&3 3>&- | f {STDERR_BYTES} >&2; exit "${{PIPESTATUS[0]}}"; }} 3>&1 | f {STDOUT_BYTES}; '
    'exit "${PIPESTATUS[0]}"'
)
"""The script of the bash that runs the walled command (its words after the script) with its output filtered."""


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
    # The agent's BASH_ENV (and ENV) is not read again by the filters' bash, which runs outside the wall.
    argv = ["/bin/bash", "--noprofile", "--norc", "-c", _FILTER, "belay-out", *argv]
    words = " ".join(f'"{w}"' if isinstance(w, _Live) else shlex.quote(w) for w in argv)
    if group is None:
        return Walled(f"BASH_ENV= ENV= {words}")
    # A subshell joins the group, then becomes bash: not `sh -c`, which agents unwrap.
    return Walled(f"(echo 0 > {shlex.quote(str(group.path / 'cgroup.procs'))} && BASH_ENV= ENV= exec {words})", group)


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
