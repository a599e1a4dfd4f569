"""Bash change capture on a generated 10,000-file workspace, against a shadow git repository, in one run.

Figures (each a ratio to git doing the same job on the same tree, measured here):
- first full snapshot: `WorkspaceIndex.changes_since()` reading every file into the blob store, against
  `git add -A && git write-tree` into a fresh shadow repository;
- incremental capture after a command touched 10 files, against `git add -A && git write-tree` again;
- undo of a call that changed 100 files (hash checks, restores, journal), against `git checkout` of
  those 100 paths from the shadow tree.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.blobs import BlobStore  # noqa: E402
from core.paths import Workspace  # noqa: E402
from core.snapshot import WorkspaceIndex  # noqa: E402

FILES = 10_000
ROUNDS = 5


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


def touch(work: Path, count: int, round_: int) -> list[Path]:
    paths = sorted(work.glob("pkg*/mod0/*.py"))[:count]
    for path in paths:
        path.write_text(path.read_text() + f"y = {round_}\n")
    return paths


async def undo_ms(work: Path, state: Path) -> tuple[float, float]:
    """A Bash call that changes 100 files through the console, then its undo; and git's checkout of them."""
    from core import Console
    async with Console(work, state_dir=state) as console:
        await console.add_rule("Bash(sed:*)", "allow", "session")
        agent = await console.start_agent("bench", "scripted")
        await console.call(agent, "Bash", {"command": "true"})  # the first look at the workspace
        outcome = await console.call(agent, "Bash", {"command": "sed -i 's/x = 1/x = 2/' pkg1*/mod1/*.py"})
        changed = len(console.timeline.runs[outcome.call_id].changes)
        assert changed >= 100, changed
        started = time.perf_counter()
        report = await console.undo(outcome.call_id)
        assert report.ok, report.message
        return (time.perf_counter() - started) * 1000, changed


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        work, shadow = base / "work", base / "shadow.git"
        work.mkdir()
        generate(work)
        os.sync()  # neither side pays for flushing the generator's writes
        subprocess.run(["git", "init", "-q", "--bare", str(shadow)], check=True)
        git_first = timed(lambda: (git(shadow, work, "add", "-A"), git(shadow, work, "write-tree")))
        index = WorkspaceIndex(Workspace(work), BlobStore(base / "blobs"))
        ours_first = timed(index.changes_since)
        ours_inc, git_inc = [], []
        for round_ in range(ROUNDS):
            touch(work, 10, round_)
            ours_inc.append(timed(index.changes_since))
            touch(work, 10, round_ + 100)
            index.changes_since()  # keep both sides seeing the same amount of change
            git_inc.append(timed(lambda: (git(shadow, work, "add", "-A"), git(shadow, work, "write-tree"))))
        ours_undo, changed = asyncio.run(undo_ms(work, base / "state"))
        paths = [str(p.relative_to(work)) for p in sorted(work.glob("pkg1*/mod1/*.py"))]
        git(shadow, work, "add", "-A")
        git_undo = timed(lambda: git(shadow, work, "checkout", "--", *paths))
        shutil.rmtree(base / "blobs", ignore_errors=True)
    inc, ginc = statistics.median(ours_inc), statistics.median(git_inc)
    print(f"{FILES:,} files. first snapshot: ours {ours_first:.0f} ms, git {git_first:.0f} ms. "
          f"incremental (10 files changed, median of {ROUNDS}): ours {inc:.1f} ms, git {ginc:.1f} ms. "
          f"undo of a call that changed {changed} files: ours {ours_undo:.0f} ms, git checkout {git_undo:.0f} ms")
    print(f"RESULT capture_incremental_speedup = {ginc / inc:.2f} x faster (git add -A && git write-tree on a "
          f"shadow repository; goal >= 5)")
    print(f"RESULT capture_first_snapshot = {ours_first / git_first:.2f} x the time (git add -A && git write-tree "
          f"into a fresh shadow repository; goal <= 1.5)")
    print(f"RESULT undo_100_files = {ours_undo / git_undo:.2f} x the time (git checkout of the same paths)")


if __name__ == "__main__":
    main()
