"""Bash change capture and undo on a generated 10,000-file workspace, against a shadow git repository, in one run.

Figures (each a ratio to git doing the same job on the same tree, measured here):
- incremental capture after a command touched 10 files: what Belay does once a command has exited
  (the watchdog barrier, then reading and storing only the dirty files, then the git state), against
  `git add -A && git write-tree` into the shadow repository;
- first full snapshot: the workspace index reading every file into the blob store, against
  `git add -A && git write-tree` into a fresh shadow repository;
- undo of a Bash call that changed 100 files, through the console (plan, store what is replaced,
  journal, stage, rename, fsync), against `git checkout` of those 100 paths from the shadow index.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.changes.gitstate import read_git_state  # noqa: E402
from core.changes.snapshot import WorkspaceIndex  # noqa: E402
from core.changes.watcher import DirtyTracker  # noqa: E402
from core.paths import Workspace  # noqa: E402
from core.store.blobs import BlobStore  # noqa: E402

FILES = 10_000
ROUNDS = 7
UNDONE = 100


def generate(root: Path) -> None:
    for i in range(FILES):
        folder = root / f"pkg{i % 50}" / f"mod{i % 7}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"file{i}.py").write_text(f"# file {i}\n" + "x = 1\n" * (20 + i % 40))


def git(shadow: Path, work: Path, *args: str) -> None:
    env = {**os.environ, "GIT_DIR": str(shadow), "GIT_WORK_TREE": str(work)}
    subprocess.run(["git", *args], env=env, check=True, capture_output=True)


def timed(fn) -> float:  # type: ignore[no-untyped-def]
    started = time.perf_counter()
    fn()
    return (time.perf_counter() - started) * 1000


def touch_command(work: Path, round_: int) -> list[str]:
    """A real command (a child process) that appends a line to 10 files."""
    paths = [str(p) for p in sorted(work.glob("pkg*/mod0/*.py"))[round_ * 10:(round_ + 1) * 10]]
    return ["sh", "-c", f'for f in "$@"; do echo "y = {round_}" >> "$f"; done', "sh", *paths]


def incremental(work: Path, blobs: BlobStore, shadow: Path) -> tuple[list[float], list[float], float]:
    watcher = DirtyTracker(work)
    assert watcher.start(), watcher.problem
    index = WorkspaceIndex(Workspace(work), blobs)
    first = timed(index.changes_since)
    watcher.take()  # the first take after starting vouches for nothing; the console's first look walks
    ours, theirs = [], []
    try:
        for round_ in range(ROUNDS):
            subprocess.run(touch_command(work, round_), check=True)

            def look() -> None:
                dirty = watcher.take()
                assert not dirty.everything
                changes = index.changes_since(dirty.paths)
                read_git_state(work)
                assert len(changes) == 10, changes

            ours.append(timed(look))
            git(shadow, work, "add", "-A")  # git sees this round's change first, then the same kind of change
            subprocess.run(touch_command(work, round_ + ROUNDS), check=True)
            watcher.take()
            index.changes_since()
            theirs.append(timed(lambda: (git(shadow, work, "add", "-A"), git(shadow, work, "write-tree"))))
    finally:
        watcher.stop()
    return ours, theirs, first


async def undo_ms(work: Path, state: Path) -> tuple[float, list[str]]:
    """A Bash call that changes 100 files through the console, then its undo."""
    from core import Console
    paths = [str(p.relative_to(work)) for p in sorted(work.glob("pkg*/mod3/*.py"))[:UNDONE]]
    async with Console(work, state_dir=state) as console:
        console.set_mode("bypass")
        agent = await console.start_agent("bench", "scripted")
        outcome = await console.call(agent, "Bash", {"command": "sed -i 's/x = 1/x = 2/' " + " ".join(paths)})
        changed = len(console.timeline.runs[outcome.call_id].changes)
        assert changed == UNDONE, changed
        started = time.perf_counter()
        report = await console.undo(outcome.call_id)
        assert report.ok, report.message
        return (time.perf_counter() - started) * 1000, paths


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        work, shadow = base / "work", base / "shadow.git"
        work.mkdir()
        generate(work)
        os.sync()  # neither side pays for flushing the generator's writes
        subprocess.run(["git", "init", "-q", "--bare", str(shadow)], check=True)
        git_first = timed(lambda: (git(shadow, work, "add", "-A"), git(shadow, work, "write-tree")))
        ours_inc, git_inc, ours_first = incremental(work, BlobStore(base / "blobs"), shadow)
        ours_undo, paths = asyncio.run(undo_ms(work, base / "state"))
        git(shadow, work, "add", "-A")
        subprocess.run(["sed", "-i", "s/x = 1/x = 2/", *paths], cwd=work, check=True)
        git_undo = timed(lambda: git(shadow, work, "checkout", "--", *paths))
    inc, ginc = statistics.median(ours_inc), statistics.median(git_inc)
    print(f"{FILES:,} files. first snapshot: ours {ours_first:.0f} ms, git {git_first:.0f} ms. "
          f"incremental (10 files changed, median of {ROUNDS}): ours {inc:.1f} ms, git {ginc:.1f} ms. "
          f"undo of a call that changed {UNDONE} files: ours {ours_undo:.0f} ms, git checkout {git_undo:.0f} ms")
    print(f"RESULT capture_incremental_speedup = {ginc / inc:.2f} x faster (git add -A && git write-tree on a "
          f"shadow repository; goal >= 5)")
    print(f"RESULT capture_first_snapshot = {ours_first / git_first:.2f} x the time (git add -A && git write-tree "
          f"into a fresh shadow repository; goal <= 1.5)")
    print(f"RESULT undo_100_files = {ours_undo / git_undo:.2f} x the time (git checkout of the same paths)")


if __name__ == "__main__":
    main()
