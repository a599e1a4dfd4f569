"""Undo when the disk refuses: full, or read-only.  A clear error, and nothing half undone.

The faults are real: a bubblewrap mount namespace gives the undo a read-only directory or a 4 MB tmpfs
to fill, so the errors come from the kernel (EROFS, ENOSPC), not from a fake.  Without root, a
read-only directory is a chmod; the full disk needs bubblewrap (installed by `make test`).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from core import Console
from tests.conftest import run

ROOT = Path(__file__).resolve().parents[2]
BWRAP = shutil.which("bwrap")
needs_bwrap = pytest.mark.skipif(BWRAP is None, reason="bubblewrap is not installed (make test installs it)")


def _bwrap(*mounts: str) -> list[str]:
    assert BWRAP is not None
    return [BWRAP, "--bind", "/", "/", "--dev", "/dev", *mounts, "--"]


def _changed_in_two_places(workspace: Path) -> str:
    async def scenario() -> str:
        async with Console(workspace) as console:
            console.set_mode("bypass")
            agent = await console.start_agent("agent", "scripted")
            outcome = await console.call(agent, "Bash", {"command": "echo new > top.txt && echo new > sub/inner.txt"})
            return outcome.call_id

    return run(scenario())


def test_an_undo_into_a_read_only_directory_says_so_and_changes_nothing(tmp_path: Path, state_dir: Path) -> None:
    workspace = tmp_path / "ws"
    (workspace / "sub").mkdir(parents=True)
    (workspace / "top.txt").write_text("old\n")
    (workspace / "sub" / "inner.txt").write_text("old\n")
    call_id = _changed_in_two_places(workspace)
    command = [sys.executable, "-m", "gui.terminal.cli", "undo", call_id, "--workspace", str(workspace), "--json"]
    if os.geteuid() == 0:  # root writes through permission bits: only a read-only mount stops it
        if BWRAP is None:
            pytest.skip("as root, a read-only directory needs bubblewrap (make test installs it)")
        command = _bwrap("--ro-bind", str(workspace / "sub"), str(workspace / "sub")) + command
    else:
        os.chmod(workspace / "sub", 0o555)
    try:
        done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=60)
    finally:
        os.chmod(workspace / "sub", 0o755)
    report = json.loads(done.stdout)
    assert done.returncode == 1 and not report["ok"]
    assert "sub/inner.txt" in report["message"] and "Nothing was undone" in report["message"]
    assert "read-only" in report["message"] or "permission denied" in report["message"]
    assert (workspace / "top.txt").read_text() == "new\n"  # not restored alone: all or nothing
    assert (workspace / "sub" / "inner.txt").read_text() == "new\n"
    assert not [p for p in workspace.rglob("*") if ".belay-" in p.name]  # no staged file left behind

    async def undo_now() -> tuple[bool, bool]:
        async with Console(workspace) as console:
            [before] = await console.history()
            report = await console.undo(call_id)
            return before.undone_by is None, report.ok

    assert run(undo_now()) == (True, True)
    assert (workspace / "top.txt").read_text() == "old\n" and (workspace / "sub" / "inner.txt").read_text() == "old\n"


@needs_bwrap
def test_an_undo_on_a_full_disk_says_so_changes_nothing_and_works_once_there_is_room(tmp_path: Path) -> None:
    disk = tmp_path / "small-disk"
    disk.mkdir()
    state = tmp_path / "state"
    command = _bwrap("--size", str(4 * 1024 * 1024), "--tmpfs", str(disk)) + [
        sys.executable, str(ROOT / "tests" / "integration" / "full_disk_undoer.py"), str(disk), str(state)]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert not seen["refused_ok"]
    assert "no space left" in seen["refused_message"] and "Nothing was undone" in seen["refused_message"]
    assert seen["after_refusal"] == {"big.txt": "short\nshort\n", "small.txt": "changed\n"}
    assert not seen["small_refused_ok"]  # full to the last byte: even a small file cannot be staged
    assert seen["small_ok"], seen["small_message"]  # with room again, both undos go through
    assert seen["undo_ok"] and seen["big_restored"], seen["undo_message"]
    assert [undone for _, undone in seen["history"]] == [True, True]
