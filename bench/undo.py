"""Undo and rewind against the journal's size: one undo after 20, 2,000 and 10,000 calls; rewinds of 100, 1,000, 5,000.

Each journal is a session of Write calls by one agent, each rewriting one of 50 files (so every file has a long
history of later calls touching it), journaled through the `Journal` methods the console's recorder uses for such
a call (call, decision, running, its change, its end) with the contents in the blob store.  Building them through
the console itself cost ~15 ms a call here (fsynced commits, blob and file writes, a tool run), which would spend the
whole bench's time on building: so they are written on tmpfs, then copied (journal, blobs, workspace files) to a
temporary directory on the disk, where the real `Console` opens them (its first snapshot, recovery and timeline
load included) and everything timed runs: `console.undo` and `console.rewind`, with their fsyncs.

- One undo: the last ROUNDS calls undone one by one, newest first (each undo restores its call's file), median;
  the journals take turns, so that the machine's load weighs on each alike.
- A rewind: `console.rewind` to the call N calls before the last one standing, N undos, in the longest journal
  (after the undos above): three rewinds of the last 100 calls (their median is the baseline), then of the
  1,000 before those, then of the 5,000 before those.  Each rewind also reads the calls after its target that
  earlier rewinds undid (it must look at every later call), so the long ones carry that too.

Run: .venv/bin/python bench/undo.py [--quick]   (--quick: without the 10,000-call undo and the 5,000-call rewind)
"""

from __future__ import annotations

import asyncio
import os
import shutil
import statistics
import sys
import tempfile
import time
from contextlib import AsyncExitStack
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core import Console, RunStatus  # noqa: E402
from core.ids import new_agent_id, new_call_id, new_session_id  # noqa: E402
from core.models.records import ChangeKind, FileChange  # noqa: E402
from core.settings import workspace_state_dir  # noqa: E402
from core.store.blobs import BlobBatch, BlobStore  # noqa: E402
from core.store.journal import Journal  # noqa: E402

FILES = 50
ROUNDS = 15
FAST_DIR = Path("/dev/shm") if Path("/dev/shm").is_dir() else None


def build(workspace: Path, calls: int) -> list[str]:
    """A journal of `calls` Write calls for `workspace` (made on tmpfs, copied to its state dir); their ids."""
    with tempfile.TemporaryDirectory(dir=FAST_DIR, prefix="belay-bench-undo-") as fast:
        journal, blobs = Journal(Path(fast) / "journal.sqlite3"), BlobStore(Path(fast) / "blobs")
        session, agent = new_session_id(), new_agent_id()
        journal.start_session(session, str(workspace))
        journal.add_agent(agent, session, "agent", "scripted", None, None, None)
        ids = []
        with blobs.batch() as batch:  # the contents in packs rather than a file each: quicker to build
            now = {name: (data, batch.put(data)) for name, data in _project().items()}
            for i in range(calls):
                ids.append(_write_call(journal, batch, session, agent, workspace, now, i))
        journal.end_session(session)
        journal.close()
        state = workspace_state_dir(workspace)
        shutil.copytree(fast, state)
    for name, (data, _) in now.items():
        (workspace / name).write_bytes(data)
        (workspace / name).chmod(0o644)
    return ids


def _project() -> dict[str, bytes]:
    """The files the session starts with (so that every call, and every undo, rewrites an existing file)."""
    return {f"src/file_{k}.py": f"# {k}\n".encode() + b"".join(b"line %d\n" % n for n in range(40))
            for k in range(FILES)}


def _write_call(journal: Journal, blobs: BlobBatch, session: str, agent: str, workspace: Path,
                now: dict[str, tuple[bytes, str]], i: int) -> str:
    """What the recorder journals for an allowed Write that rewrote one file."""
    name = f"src/file_{i % FILES}.py"
    data = f"# version {i} of {name}\n" + "".join(f"line {k}\n" for k in range(40))
    before = now[name]
    after = blobs.put(data.encode())
    call_id = new_call_id()
    journal.add_call(call_id, session, agent, "Write", {"file_path": str(workspace / name), "content": data}, name)
    journal.add_decision(call_id, "approved", "allowed by Write [session]", "rule", "Write [session]", durable=False)
    journal.set_status(call_id, RunStatus.RUNNING)
    journal.add_changes(call_id, [FileChange(
        path=name, kind=ChangeKind.MODIFY, before_hash=before[1], after_hash=after, before_mode=0o644,
        after_mode=0o644)])
    journal.finish_run(call_id, RunStatus.DONE, f"Wrote 41 lines to {name}.", None, 0.01)
    now[name] = (data.encode(), after)
    return call_id


async def opened(root: Path, calls: int, stack: AsyncExitStack) -> tuple[Console, list[str]]:
    """A console on a fresh workspace whose journal holds `calls` calls, and their ids."""
    workspace = root / f"ws-{calls}"
    (workspace / "src").mkdir(parents=True)
    ids = build(workspace, calls)
    console = await stack.enter_async_context(Console(workspace, serve=False))
    assert not console.recovery_notes, console.recovery_notes  # the files are as the journal says
    return console, ids


async def undos(journals: dict[int, tuple[Console, list[str]]]) -> dict[int, float]:
    """Median seconds of one undo per journal size: the last ROUNDS calls of each, newest first, the
    journals taking turns so that the machine's load and the disk's pace weigh on each alike."""
    times: dict[int, list[float]] = {n: [] for n in journals}
    for k in range(1, ROUNDS + 1):
        for n, (console, ids) in journals.items():
            started = time.perf_counter()
            report = await console.undo(ids[-k])
            times[n].append(time.perf_counter() - started)
            assert report.ok, report.message
    return {n: statistics.median(t) for n, t in times.items()}


async def rewind(console: Console, ids: list[str], calls: int) -> float:
    """Seconds to rewind the last `calls` calls still standing (`ids`: the journal's calls still standing,
    shortened by the rewind)."""
    to = ids[-calls - 1]
    started = time.perf_counter()
    reports = await console.rewind(to)
    took = time.perf_counter() - started
    assert len(reports) == calls and all(r.ok for r in reports), reports[-1].message
    del ids[-calls:]
    return took


async def main(quick: bool) -> None:
    sizes = (20, 2000) if quick else (20, 2000, 10_000)
    long_rewinds = (1000,) if quick else (1000, 5000)
    with tempfile.TemporaryDirectory(prefix="belay-bench-undo-") as tmp:
        root = Path(tmp)
        os.environ["BELAY_STATE_DIR"] = str(root / "state")
        os.environ["BELAY_CONFIG_DIR"] = str(root / "config")
        async with AsyncExitStack() as stack:
            journals = {n: await opened(root, n, stack) for n in sizes}
            undo = await undos(journals)
            console, ids = journals[sizes[-1]]
            del ids[-ROUNDS:]
            short = [await rewind(console, ids, 100) for _ in range(3)]  # the baseline: their median
            rewinds = {n: await rewind(console, ids, n) for n in long_rewinds}
            rewinds[100] = statistics.median(short)
    for n, took in undo.items():
        print(f"one undo after {n:>6,} calls: {took * 1000:6.2f} ms (median of {ROUNDS})")
    print(f"rewinds in the {sizes[-1]:,}-call journal: the last 100 calls {', '.join(f'{t:.2f}' for t in short)} s")
    for n, took in sorted(rewinds.items()):
        print(f"rewind of {n:>5,} calls: {took:6.2f} s ({took / n * 1000:.2f} ms a call)")
    print(f"load: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"RESULT undo_after_2000_vs_20 = {undo[2000] / undo[20]:.2f} x (one undo after 20 calls: "
          f"{undo[20] * 1000:.2f} ms)")
    if 10_000 in undo:
        print(f"RESULT undo_after_10000_vs_20 = {undo[10_000] / undo[20]:.2f} x (one undo after 20 calls)")
    print(f"RESULT rewind_1000_vs_100 = {rewinds[1000] / rewinds[100]:.1f} x (linear would be 10)")
    if 5000 in rewinds:
        print(f"RESULT rewind_5000_vs_100 = {rewinds[5000] / rewinds[100]:.1f} x (linear would be 50)")


if __name__ == "__main__":
    asyncio.run(main("--quick" in sys.argv[1:]))
