"""How many processes one command may have: a pids cgroup of its own, else RLIMIT_NPROC in the sandbox's user namespace.

A fork bomb (`:(){ :|:& };:`) run with the user's `ulimit -u` starts
processes until the machine's pid table is full and everything stalls, the
console included.  Where a pids cgroup can be created (cgroup v1 `pids` or
a v2 hierarchy with the pids controller, writable by us: root in a
container, a delegated subtree), every command gets a group of its own with
`pids.max` = the limit: the command joins it before anything else runs
(`join_argv`, a `sh` prefix in the argv, so no Python runs between fork and
exec), and when the command ends or times out the group is sealed (pids.max
0, so nothing new can start) and every member is killed, then removed.

Otherwise, for a user other than root inside bubblewrap, the command runs
in its own user namespace with RLIMIT_NPROC set inside it.  Since Linux
5.14 that limit is counted per user namespace, so it counts the sandbox's
processes only, not the user's others (verified on 6.18: with 24 processes
of the user outside, a sandbox limited to 10 still started its 10).  It is
not enforced for root in the initial namespace (the kernel exempts the root
user however the sandbox maps uids): as root without a cgroup there is no
limit, and the status line says so.  Without a user namespace (sandbox
off) RLIMIT_NPROC counts all of the user's processes, so a command gets
what the user has now plus the limit: approximate, but a fork bomb stops.
"""

from __future__ import annotations

import functools
import itertools
import os
import resource
import signal
import subprocess
import time
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

_PREFIX = "belay-"
_KILL_ROUNDS_S = 2.0
_REMOVE_TRIES = 100
_PROBE_TIMEOUT_S = 10.0
_ids = itertools.count(1)


class ProcessLimit(BaseModel):
    """What keeps one command's process count down here, found once per process and limit."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["cgroup", "rlimit", "user-rlimit", "none"]
    """cgroup: a pids cgroup per command; rlimit: RLIMIT_NPROC in the sandbox's user namespace; user-rlimit:
    RLIMIT_NPROC over all the user's processes, set to what they have now plus `maximum` (`nproc_for`); none."""
    maximum: int
    """Processes (and threads) one command may have at once."""
    parent: str = ""
    """cgroup: the directory the per-command groups are made in."""
    why: str = ""
    """none: why nothing limits processes here."""

    def text(self) -> str:
        """For the status line: "at most 256 processes (pids cgroup)", or what is missing."""
        if self.kind == "cgroup":
            return f"at most {self.maximum} processes (pids cgroup)"
        if self.kind == "rlimit":
            return f"at most {self.maximum} processes (RLIMIT_NPROC in the sandbox's user namespace)"
        if self.kind == "user-rlimit":
            return f"about {self.maximum} processes at most (RLIMIT_NPROC, counted with all your processes)"
        return f"no process limit ({self.why})"


def detect_limit(maximum: int, *, bwrap: str | None) -> ProcessLimit:
    """The best mechanism for `maximum` processes per command (blocking: probes); `bwrap` when sandboxed."""
    parent = pids_parent()
    if parent is not None:
        return ProcessLimit(kind="cgroup", maximum=maximum, parent=str(parent))
    if os.getuid() == 0:
        return ProcessLimit(kind="none", maximum=maximum,
                            why="no pids cgroup can be created here, and RLIMIT_NPROC does not bind root")
    if bwrap and own_user_namespace_works(bwrap):
        return ProcessLimit(kind="rlimit", maximum=maximum)
    return ProcessLimit(kind="user-rlimit", maximum=maximum)


def nproc_for(limit: ProcessLimit) -> int | None:
    """The RLIMIT_NPROC a command gets under `limit`, or None when it gets none (blocking: may scan /proc).

    For user-rlimit the kernel counts every task of the user, so the command may start `maximum` more than
    the user has now: approximate (the budget moves as the user's other programs start and end), but it
    stops a fork bomb, and other programs keep their own, unchanged limit.
    """
    if limit.kind == "rlimit":
        wanted = limit.maximum
    elif limit.kind == "user-rlimit":
        wanted = user_tasks(os.getuid()) + limit.maximum
    else:
        return None
    hard = resource.getrlimit(resource.RLIMIT_NPROC)[1]
    return wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)  # only root may raise a hard limit


def user_tasks(uid: int) -> int:
    """How many live tasks (threads included, as RLIMIT_NPROC counts them) `uid` has now.

    Zombies are left out though the kernel counts them until they are reaped: a budget taken over them would
    let the next command add to what a killed one left, while without them those leftovers use up its share.
    """
    count = 0
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            status = Path(f"/proc/{name}/status").read_text()
        except OSError:
            continue
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        if int(fields.get("Uid", "-1 ").split()[0]) == uid and not fields.get("State", "").strip().startswith("Z"):
            count += int(fields.get("Threads", "1").strip() or 1)
    return count


@functools.cache
def own_user_namespace_works(bwrap: str) -> bool:
    """Whether bubblewrap can give a sandbox its own user namespace here (a setuid bwrap may be refused)."""
    try:
        return subprocess.run([bwrap, "--ro-bind", "/", "/", "--unshare-user", "--", "true"], capture_output=True,
                              timeout=_PROBE_TIMEOUT_S, stdin=subprocess.DEVNULL).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


@functools.cache
def pids_parent() -> Path | None:
    """Our own pids cgroup directory when we may create groups in it (proved by making one), else None."""
    for candidate in _own_pids_dirs():
        probe = candidate / f"{_PREFIX}probe-{os.getpid()}"
        try:
            probe.mkdir()
        except OSError:
            continue
        try:
            (probe / "pids.max").write_text("1")
            return candidate
        except OSError:
            continue
        finally:
            _rmdir(probe)
            _remove_stale(candidate)
    return None


def _own_pids_dirs() -> list[Path]:
    """Where our pids cgroup lives: in the v1 `pids` hierarchy, or in v2 if the pids controller is on there."""
    mounts = _cgroup_mounts()
    found: list[Path] = []
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return []
    for line in lines:
        _, controllers, path = line.split(":", 2)
        v1 = "pids" in controllers.split(",")
        mount = mounts.get("pids") if v1 else mounts.get("") if controllers == "" else None
        if mount is None:
            continue
        directory = mount / path.lstrip("/")
        if controllers == "" and not _v2_has_pids(directory):
            continue
        found.append(directory)
    return found


def _cgroup_mounts() -> dict[str, Path]:
    """Mount points: "pids" for the v1 pids hierarchy, "" for the v2 unified one."""
    mounts: dict[str, Path] = {}
    try:
        lines = Path("/proc/self/mounts").read_text().splitlines()
    except OSError:
        return mounts
    for line in lines:
        _, where, kind, options, *_ = line.split()
        if kind == "cgroup" and "pids" in options.split(","):
            mounts["pids"] = Path(where)
        elif kind == "cgroup2":
            mounts.setdefault("", Path(where))
    return mounts


def _v2_has_pids(directory: Path) -> bool:
    """Whether children of `directory` get pids.max; turned on if we may (it fails while it holds processes)."""
    control = directory / "cgroup.subtree_control"
    try:
        if "pids" in control.read_text().split():
            return True
        if "pids" not in (directory / "cgroup.controllers").read_text().split():
            return False
        control.write_text("+pids")
        return True
    except OSError:
        return False


def _remove_stale(parent: Path) -> None:
    """Empty groups of consoles that died without removing them (an rmdir fails on a group still in use)."""
    for entry in parent.glob(f"{_PREFIX}*-*"):
        owner = entry.name.removeprefix(_PREFIX).split("-")[0]
        if owner.isdigit() and not _alive(int(owner)):
            for inner in sorted(entry.rglob(f"{_PREFIX}*"), key=lambda p: len(p.parts), reverse=True):
                _rmdir(inner)  # groups of the groups (a test's safety net held commands' groups)
            _rmdir(entry)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _rmdir(path: Path) -> bool:
    try:
        path.rmdir()
    except FileNotFoundError:
        return True
    except OSError:
        return False
    return True


class PidsGroup:
    """One command's pids cgroup: at most `maximum` members, all of them killed when it is removed."""

    def __init__(self, path: Path, maximum: int) -> None:
        self.path, self.maximum = path, maximum

    @classmethod
    def create(cls, limit: ProcessLimit) -> PidsGroup:
        """A fresh group under `limit.parent` (blocking; OSError when the cgroup filesystem refuses)."""
        path = Path(limit.parent) / f"{_PREFIX}{os.getpid()}-{next(_ids)}"
        path.mkdir()
        group = cls(path, limit.maximum)
        try:
            (path / "pids.max").write_text(str(limit.maximum))
        except OSError:
            _rmdir(path)
            raise
        return group

    def join_argv(self) -> list[str]:
        """An argv prefix that moves itself into the group, then runs the rest: everything it starts is inside.

        If joining fails the command does not run at all (`&&`), rather than run without a limit.
        """
        return ["/bin/sh", "-c", 'echo 0 > "$0" && exec "$@"', str(self.path / "cgroup.procs")]

    def pids(self) -> list[int]:
        """The members now (none once the group is gone)."""
        try:
            return [int(pid) for pid in (self.path / "cgroup.procs").read_text().split()]
        except (OSError, ValueError):
            return []

    def holds(self, pid: int) -> bool:
        """Whether `pid` is in the group now."""
        return pid in self.pids()

    def refused(self) -> int:
        """How many times a new process was refused because the group was full (pids.events `max`)."""
        try:
            events = (self.path / "pids.events").read_text().split()
            return int(events[events.index("max") + 1])
        except (OSError, ValueError, IndexError):
            return 0

    def peak(self) -> int | None:
        """The most members the group has had at once (pids.peak; None on kernels without it)."""
        try:
            return int((self.path / "pids.peak").read_text())
        except (OSError, ValueError):
            return None

    def seal(self) -> None:
        """No new process may start in the group: a fork bomb being killed cannot replace what dies."""
        try:
            (self.path / "pids.max").write_text("0")
        except OSError:
            pass  # already removed

    def kill_all(self, within_s: float = _KILL_ROUNDS_S) -> bool:
        """Seal the group and SIGKILL its members until none is left; True when it emptied in time."""
        self.seal()
        deadline = time.monotonic() + within_s
        while pids := self.pids():
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    continue
            if time.monotonic() > deadline:
                return False
            time.sleep(0.005)
        return True

    def remove(self) -> bool:
        """Kill every member and delete the group (blocking, usually instant); False if it would not go."""
        self.kill_all()
        for _ in range(_REMOVE_TRIES):  # a member killed a moment ago may still be leaving the group
            if _rmdir(self.path):
                return True
            time.sleep(0.01)
        return False

    def __repr__(self) -> str:
        return f"<PidsGroup {self.path.name} max {self.maximum}>"
