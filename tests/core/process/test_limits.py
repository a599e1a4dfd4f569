"""Process limits: a fork bomb run through the real Bash tool is contained, by a pids cgroup or RLIMIT_NPROC.

Every test that may start processes without end runs them inside an outer
pids cgroup with a small pids.max (`outer`), so a regression fills that
group, not the machine.  CI runs as root, where pids cgroups are writable;
running the same bomb as `nobody` (who may not create cgroups) exercises
the other mechanism, RLIMIT_NPROC in the sandbox's user namespace.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from core.process.limits import PidsGroup, ProcessLimit, detect_limit, nproc_for, pids_parent, user_tasks

ROOT = Path(__file__).resolve().parents[3]
LIMIT = 24
"""The bomb's max_processes: small, so the outer group's margin covers the Python running it."""
OUTER_MAX = LIMIT + 64
NOBODY = 65534

BOMB = f"""
import asyncio, json, sys, tempfile, time
sys.path.insert(0, {str(ROOT)!r})
from pathlib import Path
from core.errors import ToolError
from core.ids import new_agent_id, new_call_id
from core.paths import Workspace
from core.process import limits
from core.process.shells import ShellManager
from core.tools.base import ReadState, ToolContext
from core.tools.bash import BashArgs, BashSettings, BashTool

peaks = []
remove = limits.PidsGroup.remove
limits.PidsGroup.remove = lambda group: (peaks.append(group.peak()), remove(group))[1]  # measure, then remove

async def main(sandbox):
    shells = ShellManager(lambda event: None)
    tool = BashTool(BashSettings(sandbox=sandbox, max_processes={LIMIT}, kill_grace_s=0.5), shells)
    ctx = ToolContext(Workspace(Path(tempfile.mkdtemp())), new_agent_id(), new_call_id(), ReadState())
    info = await tool.sandbox_info()
    results = []
    for command, timeout in ((":(){{ :|:& }};:", 5000), (":(){{ :|:& }};:; sleep 30", 2000)):
        started = time.monotonic()
        try:
            text = (await tool.run(BashArgs(command=command, timeout=timeout), ctx)).text
        except ToolError as e:
            text = e.info.kind + ": " + e.info.message
        results.append({{"text": text[:400], "took": time.monotonic() - started, "peaks": list(peaks)}})
        peaks.clear()
    after = (await tool.run(BashArgs(command="echo still here"), ctx)).text
    await shells.aclose()
    print(json.dumps({{"processes": info.processes, "bomb": results[0], "held": results[1], "after": after}}))

asyncio.run(main(sys.argv[1]))
"""


@pytest.fixture
def parent() -> Path:
    found = pids_parent()
    if found is None:
        pytest.skip("no writable pids cgroup here (CI runs as root, where there is)")
    return found


@pytest.fixture
def outer(parent: Path) -> Iterator[PidsGroup]:
    """A pids cgroup of OUTER_MAX processes for whatever a test starts: the safety net."""
    group = PidsGroup.create(ProcessLimit(kind="cgroup", maximum=OUTER_MAX, parent=str(parent)))
    try:
        yield group
    finally:
        assert group.remove(), "the outer group would not go"


def run_bomb(outer: PidsGroup, sandbox: str, user: tuple[str, ...] = ()) -> dict[str, Any]:
    """The bomb through the Bash tool in a child process inside `outer`; what the child measured."""
    argv = [*outer.join_argv(), *user, sys.executable, "-c", BOMB, sandbox]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL, cwd="/")
    assert done.returncode == 0, done.stderr[-2000:]
    result: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    assert outer.refused() == 0, f"the outer safety net had to stop processes: {result}"
    return result


def test_the_text_says_the_limit_and_what_enforces_it() -> None:
    assert ProcessLimit(kind="cgroup", maximum=256).text() == "at most 256 processes (pids cgroup)"
    assert "RLIMIT_NPROC" in ProcessLimit(kind="rlimit", maximum=64).text()
    assert "all your processes" in ProcessLimit(kind="user-rlimit", maximum=64).text()
    assert ProcessLimit(kind="none", maximum=256, why="no cgroup").text() == "no process limit (no cgroup)"


def test_without_a_user_namespace_the_budget_is_what_the_user_has_plus_the_limit() -> None:
    before = user_tasks(os.getuid())
    budget = nproc_for(ProcessLimit(kind="user-rlimit", maximum=100))
    after = user_tasks(os.getuid())
    assert budget is not None and min(before, after) - 50 <= budget - 100 <= max(before, after) + 50  # others churn
    assert before >= len(os.listdir("/proc/self/task"))
    assert nproc_for(ProcessLimit(kind="rlimit", maximum=100)) == 100
    assert nproc_for(ProcessLimit(kind="cgroup", maximum=100)) is None


def test_the_budget_never_asks_for_more_than_the_hard_limit() -> None:
    """Raising a hard limit needs privilege: prlimit would fail, and with it every command."""
    script = ("import sys; sys.path.insert(0, sys.argv[1]); from core.process.limits import ProcessLimit, nproc_for; "
              "print(nproc_for(ProcessLimit(kind='rlimit', maximum=100)))")
    done = subprocess.run(["prlimit", "--nproc=50:50", sys.executable, "-c", script, str(ROOT)], capture_output=True,
                          text=True, timeout=60, check=True)
    assert done.stdout.strip() == "50"


def test_a_users_tasks_are_counted(outer: PidsGroup) -> None:
    if os.getuid() != 0:
        pytest.skip("starting processes as nobody needs root (CI runs as root)")
    busy = PidsGroup.create(ProcessLimit(kind="cgroup", maximum=10, parent=str(outer.path)))
    try:
        subprocess.run([*busy.join_argv(), "setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups",
                        "sh", "-c", "for i in 1 2 3; do sleep 20 & done"], timeout=10, check=True, cwd="/",
                       stdout=subprocess.DEVNULL)
        assert user_tasks(NOBODY) == 3
    finally:
        busy.remove()


def test_a_writable_pids_cgroup_is_preferred(parent: Path) -> None:
    limit = detect_limit(100, bwrap=None)
    assert (limit.kind, limit.maximum, limit.parent) == ("cgroup", 100, str(parent))
    assert list(parent.glob(f"belay-probe-{os.getpid()}")) == []


def test_a_group_caps_its_members_and_kills_even_escaped_ones(outer: PidsGroup) -> None:
    inner = PidsGroup.create(ProcessLimit(kind="cgroup", maximum=5, parent=str(outer.path)))
    script = "for i in 1 2 3 4 5 6 7 8; do setsid sleep 30 >/dev/null 2>&1 & done"
    subprocess.run([*inner.join_argv(), "sh", "-c", script], capture_output=True, timeout=20)
    members = inner.pids()
    assert 1 <= len(members) <= 5  # sh itself took one of the five places while it ran
    assert inner.refused() > 0 and inner.peak() in (None, 5)
    assert inner.remove() and not inner.path.exists()
    assert all(not Path(f"/proc/{pid}/cmdline").exists() or Path(f"/proc/{pid}/cmdline").read_bytes() == b""
               for pid in members), "the setsid'd sleeps survived the group"


def test_joining_fails_closed(tmp_path: Path) -> None:
    """If the group is gone, the command does not run unlimited: it does not run."""
    ghost = PidsGroup(tmp_path / "gone", 10)
    done = subprocess.run([*ghost.join_argv(), "echo", "ran"], capture_output=True, text=True, timeout=10)
    assert done.returncode != 0 and "ran" not in done.stdout


@pytest.mark.parametrize("sandbox", ["auto", "off"])
def test_a_fork_bomb_through_the_bash_tool_is_contained_by_the_cgroup(outer: PidsGroup, sandbox: str) -> None:
    result = run_bomb(outer, sandbox)
    assert result["processes"] == f"at most {LIMIT} processes (pids cgroup)"
    # The classic bomb's first shell returns at once, and the call ends with every process of the bomb; unless
    # the group filled up between its two forks: then it retries, until the call's timeout (5 s) ends it.  Each
    # call ended well before run_bomb's 60 s (its generous deadline), by the group's limit or its own timeout.
    bomb = result["bomb"]
    assert bomb["peaks"] and max(bomb["peaks"]) <= LIMIT
    # Held open by its shell, the bomb fills its group (and no more) until the call's timeout ends it.
    held = result["held"]
    assert held["peaks"] == [LIMIT]
    assert held["text"].startswith("timeout: the command timed out after 2 s")
    assert "fork: retry: Resource temporarily unavailable" in held["text"]
    assert result["after"] == "still here\n"
    assert outer.pids() == [], "processes of the bomb outlived the command"


@pytest.mark.parametrize(("sandbox", "enforcer"), [
    ("auto", "RLIMIT_NPROC in the sandbox's user namespace"),
    ("off", "RLIMIT_NPROC, counted with all your processes"),
])
def test_without_a_cgroup_rlimit_nproc_contains_it(outer: PidsGroup, sandbox: str, enforcer: str) -> None:
    """As `nobody`, who may not create cgroups: RLIMIT_NPROC, in bubblewrap's own user namespace where it counts
    the sandbox's processes only, or without the sandbox over all of nobody's, plus the limit."""
    if os.getuid() != 0:
        pytest.skip("switching to nobody needs root (CI runs as root)")
    user = ("setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups")
    busy = PidsGroup.create(ProcessLimit(kind="cgroup", maximum=40, parent=str(outer.path)))
    try:
        subprocess.run([*busy.join_argv(), *user, "sh", "-c", "for i in $(seq 30); do sleep 20 & done"], timeout=10)
        assert len(busy.pids()) == 30  # nobody has 30 processes outside the sandbox: more than the limit
        result = run_bomb(outer, sandbox, user)
    finally:
        busy.remove()
    assert enforcer in result["processes"] and str(LIMIT) in result["processes"]
    held = result["held"]  # both calls ended before run_bomb's 60 s; the held one by its 2 s timeout, as it says
    assert held["text"].startswith("timeout: the command timed out after 2 s")
    assert "fork: retry: Resource temporarily unavailable" in held["text"]
    assert result["after"] == "still here\n"
    assert outer.pids() == [], "processes of the bomb outlived the command"
