"""Storage over time: the state folder's size against the workspace's, before and after `belay gc`, in one run.

A generated 10,000-file workspace (the same tree as bench/capture.py) is opened by a real console (its first
snapshot stores a copy of every file), then 1,000 edits go through the real pipeline as Write calls: 900 in a
first session, 100 in a second.  Sizes are apparent sizes (the bytes of every file, `du --apparent-size`),
the state folder's (journal with its WAL, blobs) against the workspace's own files, measured:
- after the first snapshot;
- after the 1,000 edits;
- after `belay gc` with the default retention (30 days, 2 GB): every edit is recent, so only the copies no
  journal row refers to go (the first snapshot's copies of files never edited);
- after `belay gc` once the first session is dated 40 days back (as if it were): its 900 edits' history goes;
- after the console opens the workspace again: its snapshot stores the files' current contents again.
gc's own time is given against the console's first snapshot of the same workspace.
"""

from __future__ import annotations

import asyncio
import os
import random
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("BELAY_CONFIG_DIR", tempfile.mkdtemp(prefix="belay-bench-config-"))

from core import Console  # noqa: E402
from core.settings import workspace_state_dir  # noqa: E402
from core.store import gc  # noqa: E402

FILES = 10_000
OLD_EDITS, NEW_EDITS = 900, 100
AGED = "2026-01-05T10:00:00+00:00"


def generate(root: Path) -> list[Path]:
    paths = []
    for i in range(FILES):
        folder = root / f"pkg{i % 50}" / f"mod{i % 7}"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"file{i}.py"
        path.write_text(f"# file {i}\n" + "x = 1\n" * (20 + i % 40))
        paths.append(path)
    return paths


def apparent(root: Path) -> int:
    total = 0
    for folder, _, names in os.walk(root):
        total += sum(os.lstat(os.path.join(folder, n)).st_size for n in names)
    return total


async def session(work: Path, state: Path, edits: list[tuple[Path, str]]) -> tuple[float, list[str]]:
    """A console on `work` making these Write calls; how long its opening took, and the call ids."""
    started = time.perf_counter()
    async with Console(work, state_dir=state) as console:
        opened = time.perf_counter() - started
        await console.add_rule("Write", "allow", "session")
        agent = await console.start_agent("editor", "scripted")
        ids = []
        for path, content in edits:
            outcome = await console.call(agent, "Write", {"file_path": str(path), "content": content})
            assert outcome.status.value == "done", outcome
            ids.append(outcome.call_id)
    return opened, ids


def edits(paths: list[Path], count: int, rng: random.Random, tag: str) -> list[tuple[Path, str]]:
    """`count` edits of files picked at random (some more than once): each appends a line to what it had."""
    out: list[tuple[Path, str]] = []
    contents: dict[Path, str] = {}
    for n in range(count):
        path = rng.choice(paths)
        contents[path] = contents.get(path) or path.read_text()
        contents[path] += f"y_{tag}_{n} = {n}\n"
        out.append((path, contents[path]))
    return out


def age(state: Path, call_ids: list[str]) -> None:
    with sqlite3.connect(state / gc.JOURNAL) as db:
        [sid] = {r[0] for r in db.execute("SELECT session_id FROM calls WHERE id=?", (call_ids[0],))}
        db.execute("UPDATE sessions SET started_at=?, ended_at=? WHERE id=?", (AGED, AGED, sid))
        db.execute("UPDATE calls SET created_at=? WHERE session_id=?", (AGED, sid))
    db.close()


def result(name: str, state: Path, workspace_bytes: int) -> None:
    size = apparent(state)
    journal = sum(os.path.getsize(p) for p in state.glob(f"{gc.JOURNAL}*"))
    print(f"RESULT {name} = {size / workspace_bytes:.2f} x (workspace size {workspace_bytes / 1e6:.1f} MB; "
          f"state {size / 1e6:.2f} MB, of which the journal {journal / 1e6:.2f} MB)", flush=True)


def main() -> None:
    rng = random.Random(16)
    with tempfile.TemporaryDirectory(prefix="belay-bench-storage-") as tmp:
        work, state_root = Path(tmp) / "ws", Path(tmp) / "state"
        paths = generate(work)
        state = workspace_state_dir(work, state_root)
        old = edits(paths, OLD_EDITS, rng, "old")
        snapshot_s, old_ids = asyncio.run(session(work, state_root, []))
        workspace_bytes = apparent(work)
        result("state_after_first_snapshot", state, workspace_bytes)
        _, old_ids = asyncio.run(session(work, state_root, old))
        _, new_ids = asyncio.run(session(work, state_root, edits(paths, NEW_EDITS, rng, "new")))
        workspace_bytes = apparent(work)
        result("state_after_1000_edits", state, workspace_bytes)

        started = time.perf_counter()
        kept = gc.collect(state, gc.Retention())
        recent_s = time.perf_counter() - started
        assert kept.plan.removed == (), kept.plan
        result("state_after_gc_all_edits_recent", state, workspace_bytes)

        age(state, old_ids)
        started = time.perf_counter()
        aged = gc.collect(state, gc.Retention())
        aged_s = time.perf_counter() - started
        assert aged.plan.calls_removed == OLD_EDITS, aged.plan
        result("state_after_gc_900_edits_past_horizon", state, workspace_bytes)

        asyncio.run(session(work, state_root, []))
        result("state_after_gc_then_reopened", state, workspace_bytes)
        print(f"RESULT gc_time_all_recent = {recent_s:.2f} s (the console's first snapshot of the workspace: "
              f"{snapshot_s:.2f} s)")
        print(f"RESULT gc_time_900_past_horizon = {aged_s:.2f} s (the console's first snapshot of the workspace: "
              f"{snapshot_s:.2f} s)")


if __name__ == "__main__":
    main()
