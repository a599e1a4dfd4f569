"""kill -9 of a console in the middle of its work: nothing torn, nothing lost, everything still undoable.

A real child process (tests/integration/crash_writer.py) writes files through the real pipeline and is
killed with SIGKILL at random moments, several times over the same workspace and journal.  After each
kill a new console must open the journal, every file must hold one whole version (never a mix), and
after the last kill every recorded call must still undo.
"""

from __future__ import annotations

import os
import random
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from core import Console
from tests.conftest import run

ROOT = Path(__file__).resolve().parents[2]
KILLS = 6


def _kill_while_writing(workspace: Path, start: int, delay: float) -> None:
    child = subprocess.Popen([sys.executable, str(ROOT / "tests" / "integration" / "crash_writer.py"),
                              str(workspace), str(start)], stdout=subprocess.PIPE, env=dict(os.environ))
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == b"ready"
        time.sleep(delay)
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
        if child.stdout is not None:
            child.stdout.close()


def _whole(path: Path) -> bool:
    """One writer's version entirely: 200 identical lines (or the shell's one line)."""
    text = path.read_text()
    if path.name == "shell.txt":
        return re.fullmatch(r"shell round \d+\n", text) is not None
    lines = text.splitlines(keepends=True)
    return len(lines) == 200 and len(set(lines)) == 1


@pytest.mark.allow_warning_logs  # each restart says which interrupted command's changes it recovered
def test_killed_consoles_leave_whole_files_and_an_undoable_journal(workspace: Path) -> None:
    rng = random.Random(20261122)
    for kill in range(KILLS):
        _kill_while_writing(workspace, kill * 100_000, rng.uniform(0.3, 1.2))
        for name in ("a.txt", "b.txt", "c.txt", "shell.txt"):
            path = workspace / name
            assert not path.exists() or _whole(path), f"{name} is torn after kill {kill}: {path.read_text()[:200]!r}"

    async def undo_everything() -> tuple[int, list[str]]:
        async with Console(workspace) as console:
            records = [r for r in await console.history() if r.changes]
            failures = []
            for record in reversed(records):
                report = await console.undo(record.call_id)
                if not report.ok:
                    failures.append(f"{record.call_id} ({record.status.value}): {report.message}")
            return len(records), failures

    undone, failures = run(undo_everything())
    assert undone > KILLS and failures == []
    for name in ("a.txt", "b.txt", "c.txt", "shell.txt"):
        assert not (workspace / name).exists(), f"{name} is back to before the first call only if every undo worked"


def _kill_while_undoing(workspace: Path, delay: float) -> str:
    """Starts the undo/redo loop, kills it after `delay` s; returns anything it printed besides "ready"."""
    child = subprocess.Popen([sys.executable, str(ROOT / "tests" / "integration" / "crash_undoer.py"),
                              str(workspace)], stdout=subprocess.PIPE, env=dict(os.environ))
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == b"ready"
        time.sleep(delay)
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
        said = child.stdout.read().decode() if child.stdout is not None else ""
        if child.stdout is not None:
            child.stdout.close()
    return said


def _versions(workspace: Path) -> set[str]:
    """Which whole version each file holds: "old", "new", or "torn" for anything else."""
    found = set()
    for path in sorted(workspace.glob("f*.txt")):
        text = path.read_text()
        found.add(next((v for v in ("old", "new") if text == f"{v}\n" * 300), "torn"))
    return found


@pytest.mark.allow_warning_logs  # each restart that finishes an interrupted undo says so
def test_an_undo_killed_half_way_is_finished_on_restart_and_stays_undoable(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    for i in range(200):
        (workspace / f"f{i:03}.txt").write_text("old\n" * 300)
    rng = random.Random(20261123)
    finished = 0
    deadline = time.monotonic() + 60
    kills = 0
    while kills < 6 or (finished == 0 and kills < 30 and time.monotonic() < deadline):
        said = _kill_while_undoing(workspace, rng.uniform(0.05, 0.6))
        kills += 1
        assert "refused" not in said, said

        async def reopen() -> tuple[tuple[str, ...], list[str]]:
            async with Console(workspace) as console:
                [record] = [r for r in await console.history() if r.tool == "Bash"]
                return console.recovery_notes, list(record.undone_paths)

        notes, undone = run(reopen())
        finished += sum("interrupted by a crash and has been finished" in n for n in notes)
        versions = _versions(workspace)
        assert "torn" not in versions and len(versions) == 1, f"after kill {kills}: {versions}, notes {notes}"
        # The journal agrees with the disk: an undone call has every file back, a standing one none.
        assert versions == ({"old"} if len(undone) == 200 else {"new"}), (versions, len(undone), notes)
        assert not any("outside Belay" in n or "not running" in n for n in notes), notes
    assert finished >= 1, f"no kill in {kills} landed inside an undo's writes"

    async def back_to_the_start() -> None:
        async with Console(workspace) as console:
            [record] = [r for r in await console.history() if r.tool == "Bash"]
            if not record.undone_paths:
                report = await console.undo(record.call_id)
                assert report.ok, report.message

    run(back_to_the_start())
    assert _versions(workspace) == {"old"}


_STAGER = """
import os, sys
sys.path.insert(0, sys.argv[1])
from core.store import fsio
dfd = os.open(sys.argv[2], os.O_RDONLY | os.O_DIRECTORY)
print(fsio.write_temp(dfd, sys.argv[3], b"the agent's new content\\n", None), flush=True)
sys.stdin.read()  # killed here: between the staging file's write and its rename over the real file
"""


def _staged_by_a_writer(workspace: Path, name: str) -> tuple[subprocess.Popen[bytes], str]:
    """A real process that has staged `name`'s new content beside it and waits (to be killed, or not)."""
    child = subprocess.Popen([sys.executable, "-c", _STAGER, str(ROOT), str(workspace), name],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert child.stdout is not None
    return child, child.stdout.readline().decode().strip()


def _end(child: subprocess.Popen[bytes]) -> None:
    child.kill()
    child.wait(timeout=30)
    for pipe in (child.stdin, child.stdout):
        if pipe is not None:
            pipe.close()


@pytest.mark.allow_warning_logs  # opening says which staging files it removed
def test_opening_removes_the_staging_files_of_writers_killed_mid_write_and_no_one_elses(workspace: Path) -> None:
    (workspace / "a.py").write_text("whole\n")
    (workspace / ".notes.belay-mine.tmp").write_text("the person's own\n")  # not Belay's pattern
    killed, left = _staged_by_a_writer(workspace, "a.py")
    _end(killed)
    alive, staging = _staged_by_a_writer(workspace, "b.py")  # a writer still at work (another workspace's)
    try:
        assert (workspace / left).read_text() == "the agent's new content\n"

        async def open_and_look() -> tuple[str, ...]:
            async with Console(workspace) as console:
                return console.recovery_notes

        notes = run(open_and_look())

        assert not (workspace / left).exists()
        assert (workspace / "a.py").read_text() == "whole\n"
        assert any(left in note for note in notes), notes
        assert (workspace / staging).exists()  # its writer is alive: it may still rename it
        assert (workspace / ".notes.belay-mine.tmp").read_text() == "the person's own\n"
    finally:
        _end(alive)
