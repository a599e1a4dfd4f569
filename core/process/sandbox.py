"""Containing a command: bubblewrap when it works here, otherwise its process group swept via /proc.

Under bubblewrap a command sees the host read-only, the workspace and a
private /tmp writable, its own PID namespace (it cannot see or signal the
console, and when the sandbox's first process dies the kernel kills every
process inside, `setsid` daemons included), no capabilities, and optionally
no network.  Without bubblewrap a command runs in its own session and
process group; `tree_pids` finds what it left behind by session, group and
ancestry, remembering what it saw so a child whose parent dies first is still
found.  What escapes that sweep: a process that called `setsid` and whose
parent exited before any scan saw it (a classic double-fork daemon, or
`(setsid cmd &)`), because nothing on the host links it back to the command.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

_PROBE_TIMEOUT_S = 10.0
CREDENTIAL_STORES = frozenset({
    # keys and keyrings
    ".ssh", ".gnupg", ".password-store", ".local/share/keyrings", ".config/op", ".vault-token",
    # the logins of the agents Belay supervises (their settings are not secrets, their login is)
    ".claude/.credentials.json", ".claude.json", ".codex/auth.json", ".gemini/oauth_creds.json", ".gemini/.env",
    # clouds, hosting and tunnels
    ".aws", ".azure", ".config/gcloud", ".kube", ".oci", ".s3cfg", ".boto", ".config/rclone", ".config/doctl",
    ".terraform.d/credentials.tfrc.json", ".fly", ".config/heroku", ".wrangler", ".config/.wrangler",
    ".ngrok2", ".config/ngrok", ".config/hcloud", ".databrickscfg", ".cache/huggingface/token",
    ".huggingface/token",
    # code hosts, package registries and build tools
    ".netrc", ".git-credentials", ".config/git/credentials", ".config/gh", ".config/hub", ".config/glab-cli",
    ".docker/config.json", ".config/containers/auth.json", ".npmrc", ".yarnrc", ".yarnrc.yml", ".pypirc",
    ".cargo/credentials", ".cargo/credentials.toml", ".gem/credentials", ".m2/settings.xml",
    ".m2/settings-security.xml", ".gradle/gradle.properties", ".composer/auth.json", ".config/composer/auth.json",
    ".pgpass", ".my.cnf",
    # browsers' cookies and saved passwords
    ".mozilla", ".config/google-chrome", ".config/chromium", ".config/BraveSoftware",
    # what was typed earlier: shells and REPLs keep passwords and tokens given on a command line
    ".bash_history", ".zsh_history", ".histfile", ".sh_history", ".local/share/fish/fish_history",
    ".python_history", ".psql_history", ".mysql_history", ".sqlite_history", ".node_repl_history",
    ".rediscli_history", ".irb_history", ".ipython/profile_default/history.sqlite", ".lesshst", ".viminfo",
    ".local/state/nvim/shada", ".local/share/nvim/shada",
    # Belay's own configuration and state, where the environment does not move them
    ".config/belay", ".local/share/belay", ".local/state/belay",
})
"""The user's credential stores, relative to their home: never read by a tool (core.policy.protected) and hidden
from every sandboxed command (`credential_paths`)."""


class SandboxInfo(BaseModel):
    """Whether commands can be sandboxed here, found once per process."""

    model_config = ConfigDict(frozen=True)

    available: bool
    """bubblewrap is installed and a probe run with every option Belay uses succeeded."""
    kind: Literal["bubblewrap", "none"]
    """What `wrap` will use."""
    detail: str
    """One sentence for the window and the logs."""
    executable: str = ""
    """Absolute path of bwrap when available."""
    processes: str = ""
    """How many processes a command may have and what enforces it ("at most 256 processes (pids cgroup)");
    filled in by the Bash tool, which knows the setting (core.process.limits)."""


def describe(info: SandboxInfo, network: bool) -> str:
    """One line on what an approved command can reach, for approval cards and the status line."""
    limit = f", {info.processes}" if info.processes else ""
    if not info.available:
        why = info.detail.rpartition(": ")[0] or info.detail  # "<why>: commands run unsandboxed ..."
        return (f"sandbox off: commands can read and write anything your user can, including files outside "
                f"the workspace ({why}){limit}")
    return f"bubblewrap sandbox (network {'on' if network else 'off'}){limit}: {info.detail}"


def _base_options(network: bool) -> list[str]:
    options = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-pid",
               "--die-with-parent", "--new-session", "--cap-drop", "ALL"]
    return options if network else [*options, "--unshare-net"]


@functools.cache
def detect_sandbox() -> SandboxInfo:
    """Find bubblewrap and prove it works in this environment (containers often forbid namespaces)."""
    path = shutil.which("bwrap")
    fallback = "commands run unsandboxed in their own process group"
    if path is None:
        return SandboxInfo(available=False, kind="none", detail=f"bubblewrap not found: {fallback}")
    version = _run([path, "--version"]).stdout.strip() or "bubblewrap"
    probe = _run([path, *_base_options(network=False), "--", "true"])
    if probe.returncode != 0:
        why = (probe.stderr.strip().splitlines() or [f"exit code {probe.returncode}"])[-1]
        return SandboxInfo(available=False, kind="none", detail=f"{version} does not work here ({why}): {fallback}")
    return SandboxInfo(available=True, kind="bubblewrap", executable=path,
                       detail=f"{version}: PID namespace, read-only root, private /tmp, no capabilities")


def _run(argv: list[str]) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=_PROBE_TIMEOUT_S,
                              stdin=subprocess.DEVNULL, env={"PATH": os.defpath})
    except (OSError, subprocess.TimeoutExpired) as e:
        return subprocess.CompletedProcess(argv, 127, "", str(e))


def wrap(argv: Sequence[str], *, workspace: Path, tmp: Path | None, network: bool, info: SandboxInfo,
         hide: Sequence[Path] = (), own_users: bool = False, chdir: str | None = None) -> list[str]:
    """`argv` run inside bubblewrap (unchanged when `info` says there is none).

    The private `tmp` (None: an empty tmpfs) is mounted on /tmp before the
    workspace, so a workspace under /tmp stays visible.  Each existing
    directory in `hide` (the console's state and settings, the user's
    credential stores) is covered by an empty tmpfs and each file by an empty
    one, unless it holds the workspace.  `own_users` gives the sandbox its own
    user namespace, where RLIMIT_NPROC counts only the sandbox's processes
    (core.process.limits).  The command starts in `chdir` (default: the
    workspace root).
    """
    if not info.available:
        return list(argv)
    ws = os.path.realpath(workspace)
    users = ["--unshare-user"] if own_users else []
    private = ["--bind", str(tmp), "/tmp"] if tmp is not None else ["--tmpfs", "/tmp"]
    options = [info.executable, *_base_options(network), *users, *private, "--bind", ws, ws]
    for path in hide:
        real = os.path.realpath(path)
        if _overlaps(real, ws) or _overlaps(real, "/tmp"):
            continue
        if os.path.isdir(real):
            options += ["--tmpfs", real]
        elif os.path.isfile(real):
            options += ["--ro-bind", "/dev/null", real]
    return [*options, "--chdir", ws if chdir is None else chdir, "--", *argv]


def credential_paths(home: str | os.PathLike[str] | None = None) -> list[Path]:
    """The credential stores of `home` (the user's by default) that exist, for `wrap` to hide."""
    root = Path(home if home is not None else os.path.expanduser("~"))
    return [p for p in (root / s for s in sorted(CREDENTIAL_STORES)) if os.path.lexists(p)]


def _overlaps(a: str, b: str) -> bool:
    common = os.path.commonpath([a, b])
    return common in (a, b)


def proc_stat(pid: int) -> tuple[int, int, int, str, int] | None:
    """(ppid, pgid, session, state, start time) of `pid`, or None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            raw = f.read().decode("ascii", "replace")
    except OSError:
        return None
    fields = raw[raw.rfind(")") + 2:].split()  # the command name may contain spaces and parentheses
    return int(fields[1]), int(fields[2]), int(fields[3]), fields[0], int(fields[19])


def tree_pids(root: int, known: Mapping[int, int] | None = None) -> dict[int, int]:
    """Live processes of the command started as `root` (a session leader), as pid -> start time.

    Members of its session or group, processes in `known` (from an earlier
    scan, matched by start time so a reused pid is not mistaken for one),
    and every descendant of those.  Blocking (reads /proc): call it off the
    loop thread.
    """
    table: dict[int, tuple[int, int, int, str, int]] = {}
    for name in os.listdir("/proc"):
        if name.isdigit() and (entry := proc_stat(int(name))) is not None and entry[3] != "Z":
            table[int(name)] = entry
    known = known or {}
    found = {pid for pid, (_, pgid, sid, _, start) in table.items()
             if root in (pgid, sid) or known.get(pid) == start}
    found.discard(os.getpid())
    frontier = set(found) | {root}
    while frontier:
        children = {pid for pid, entry in table.items() if entry[0] in frontier} - found
        found |= children
        frontier = children
    return {pid: table[pid][4] for pid in found}


def signal_pids(pids: Iterable[int], signum: int) -> None:
    """Send `signum` to each of `pids` that still exists."""
    for pid in pids:
        try:
            os.kill(pid, signum)
        except (ProcessLookupError, PermissionError):
            continue  # already gone, or not ours to signal
