"""Retention and `belay gc`: old sessions and unreferenced blobs go, what stays is still undoable, a kill -9
in the middle loses nothing still referenced."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from core import BelayError, Console, RunStatus
from core.settings import workspace_state_dir
from core.store import gc, seals
from core.store.blobs import BlobStore, content_hash
from tests.conftest import ROOT, run

FILES = 40  # the first snapshot stores them in a pack (core.store.blobs.PACK_MIN_BLOBS)
OLD = "2026-01-05T10:00:00+00:00"


def _original(i: int) -> str:
    return f"file {i} as it was\n" * (i + 5)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    for i in range(FILES):
        (root / f"f{i:02}.txt").write_text(_original(i))
    return root


def _session(ws: Path, writes: dict[str, str]) -> list[str]:
    """A console session on `ws` that writes these files through the real pipeline; its call ids."""
    async def main() -> list[str]:
        async with Console(ws) as console:
            await console.add_rule("Write", "allow", "session")
            agent = await console.start_agent("writer", "scripted")
            ids = []
            for name, content in writes.items():
                outcome = await console.call(agent, "Write", {"file_path": str(ws / name), "content": content})
                assert outcome.status == RunStatus.DONE, outcome
                ids.append(outcome.call_id)
            return ids
    return run(main())


def _age(state: Path, call_ids: list[str]) -> None:
    """Moves the session of these calls to January (as if it had happened then)."""
    with sqlite3.connect(state / gc.JOURNAL) as db:
        [sid] = {r[0] for r in db.execute(f"SELECT session_id FROM calls WHERE id IN ({','.join('?' * len(call_ids))})",
                                          call_ids)}
        db.execute("UPDATE sessions SET started_at=?, ended_at=? WHERE id=?", (OLD, OLD, sid))
        db.execute("UPDATE calls SET created_at=? WHERE session_id=?", (OLD, sid))
    db.close()


def _referenced(state: Path) -> set[str]:
    with sqlite3.connect(state / gc.JOURNAL) as db:
        refs = {d for row in db.execute("SELECT before_hash, after_hash FROM changes") for d in row if d}
    db.close()
    return refs


def _history(ws: Path) -> list[str]:
    async def main() -> list[str]:
        async with Console(ws, track=False) as console:
            return [c.call_id for c in await console.history()]
    return run(main())


@pytest.fixture
def aged(ws: Path) -> tuple[Path, list[str], list[str]]:
    """January's session rewrote ten files; today's rewrote f00 again and f20 for the first time."""
    old = _session(ws, {f"f{i:02}.txt": f"january {i}\n" * 50 for i in range(10)})
    new = _session(ws, {"f00.txt": "today 0\n", "f20.txt": "today 20\n"})
    state = workspace_state_dir(ws)
    _age(state, old)
    return state, old, new


def test_gc_ends_the_old_sessions_undo_history_frees_their_blobs_and_keeps_today_undoable(
        ws: Path, aged: tuple[Path, list[str], list[str]]) -> None:
    state, old, new = aged
    before = gc.state_size(state)
    shown = gc.plan(state, gc.Retention(keep_days=30))
    assert [s.calls for s in shown.removed] == [10] and shown.calls_removed == 10
    assert shown.oldest_kept is not None and shown.oldest_kept.call_id == new[0]  # undo reaches back to today
    assert gc.state_size(state) == before  # planning changed nothing
    result = gc.collect(state, gc.Retention(keep_days=30), shown=shown)
    assert result.plan.calls_removed == 10 and result.freed > 0 and result.state_bytes < before
    assert _history(ws) == new
    store = BlobStore(state / gc.BLOBS)
    assert not store.has(content_hash(b"january 5\n" * 50))  # only January's rows named it
    assert not store.has(content_hash(_original(5).encode()))  # the first snapshot's copy, in no row
    assert store.get(content_hash(b"january 0\n" * 50)) == b"january 0\n" * 50  # today's undo of f00 needs it
    assert store.get(content_hash(_original(20).encode())) == _original(20).encode()  # shrunk pack keeps it

    async def undo_today() -> None:
        async with Console(ws) as console:
            for call_id in reversed(new):
                assert (await console.undo(call_id)).ok
    run(undo_today())
    assert (ws / "f00.txt").read_text() == "january 0\n" * 50
    assert (ws / "f20.txt").read_text() == _original(20)


def test_a_second_gc_finds_nothing_more_to_remove(ws: Path, aged: tuple[Path, list[str], list[str]]) -> None:
    state, _, _ = aged
    gc.collect(state, gc.Retention(keep_days=30))
    again = gc.plan(state, gc.Retention(keep_days=30))
    assert again.removed == () and again.blobs_freed == 0


def test_gc_refuses_while_a_console_has_the_workspace_open(ws: Path,
                                                           aged: tuple[Path, list[str], list[str]]) -> None:
    state, old, _ = aged

    async def main() -> None:
        async with Console(ws):
            assert gc.plan(state, gc.Retention()).calls_removed == 10  # a dry run may look
            with pytest.raises(gc.GcRefused, match="has this workspace open"):
                gc.collect(state, gc.Retention())
    run(main())
    assert set(old) <= set(_history(ws))


def test_the_size_limit_removes_the_oldest_sessions_however_recent_but_never_the_newest(ws: Path) -> None:
    first = _session(ws, {"f01.txt": "one\n" * 2000})
    second = _session(ws, {"f02.txt": "two\n" * 2000})
    third = _session(ws, {"f03.txt": "three\n"})
    state = workspace_state_dir(ws)
    tiny = gc.Retention(keep_days=30, max_bytes=1)
    shown = gc.plan(state, tiny)
    assert [s.calls for s in shown.removed] == [1, 1]  # both older sessions, oldest first
    assert any("over the" in note for note in shown.notes)  # the newest alone is over the limit: kept, and said
    gc.collect(state, tiny, shown=shown)
    assert _history(ws) == third
    assert not set(first + second) & set(_history(ws))
    verdict = seals.verify_journal(state / gc.JOURNAL)  # gc's removals are sealed as Belay's, not tampering
    assert verdict.ok, [m.describe() for m in verdict.mismatches]


def test_a_session_not_ended_and_active_within_the_hour_is_kept(ws: Path) -> None:
    old = _session(ws, {"f01.txt": "one\n"})
    _session(ws, {"f02.txt": "two\n"})
    state = workspace_state_dir(ws)
    with sqlite3.connect(state / gc.JOURNAL) as db:
        db.execute("UPDATE sessions SET ended_at=NULL")  # as a console still running (or killed) leaves it
    db.close()
    assert gc.plan(state, gc.Retention(keep_days=0, max_bytes=1)).removed == ()
    _age(state, old)
    assert [s.calls for s in gc.plan(state, gc.Retention(keep_days=30)).removed] == [1]  # in January: dead


_KILLED_GC = """
import sys, time
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from core.store import gc, seals
target = sys.argv[3]

def step(name):
    print(name, flush=True)
    if name == target:
        time.sleep(60)

gc.collect(Path(sys.argv[2]), gc.Retention(keep_days=30), on_step=step)
"""


@pytest.mark.parametrize("killed_after", ["rows", "loose", "pack copied", "pack dropped"])
def test_a_gc_killed_at_any_step_loses_nothing_still_referenced(
        ws: Path, aged: tuple[Path, list[str], list[str]], killed_after: str) -> None:
    state, _, new = aged
    child = subprocess.Popen([sys.executable, "-c", _KILLED_GC, str(ROOT), str(state), killed_after],
                             stdout=subprocess.PIPE)
    try:
        assert child.stdout is not None
        steps = []
        while not steps or steps[-1] != killed_after:
            line = child.stdout.readline().decode().strip()
            assert line, f"gc ended before {killed_after!r} (steps: {steps})"
            steps.append(line)
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
        if child.stdout is not None:
            child.stdout.close()
    store = BlobStore(state / gc.BLOBS)
    for digest in _referenced(state):  # every blob a committed row names is whole
        assert content_hash(store.get(digest)) == digest
    assert set(new) <= set(_history(ws))
    gc.collect(state, gc.Retention(keep_days=30))  # the next gc finishes the job
    assert _history(ws) == new
    assert not BlobStore(state / gc.BLOBS).has(content_hash(b"january 5\n" * 50))
    for digest in _referenced(state):
        assert BlobStore(state / gc.BLOBS).get(digest)


def test_usage_reports_the_state_size_and_how_far_back_undo_reaches(
        ws: Path, aged: tuple[Path, list[str], list[str]]) -> None:
    state, _, _ = aged
    seen = gc.usage(state)
    assert seen.calls == 12 and seen.oldest_call_at is not None and seen.oldest_call_at.isoformat() == OLD
    assert seen.state_bytes == gc.state_size(state) > 0


def test_no_stored_copy_is_deleted_while_a_console_may_be_writing(
        ws: Path, aged: tuple[Path, list[str], list[str]]) -> None:
    state, _, new = aged
    snapshot_copy = content_hash(_original(5).encode())  # no row names it: a console may be about to

    def a_console_opens_meanwhile(step: str) -> None:
        if step == "rows":
            async def look() -> None:
                with pytest.raises(BelayError, match=r"open in another Belay console: belay gc \(pid"):
                    await Console(ws).open()  # the lock is gc's: no console works on the workspace meanwhile
                async with Console(ws, track=False) as console:  # a reader takes no lock; should it write...
                    await console.recorder.session()  # ...its session begins, and gc sees it
            run(look())
    result = gc.collect(state, gc.Retention(keep_days=30), on_step=a_console_opens_meanwhile)
    assert result.plan.calls_removed == 10 and result.blobs_removed == 0
    assert any("a console opened the workspace during gc" in note for note in result.notes)
    assert BlobStore(state / gc.BLOBS).has(snapshot_copy)

    with sqlite3.connect(state / gc.JOURNAL) as db:
        db.execute("UPDATE sessions SET ended_at=NULL WHERE id=(SELECT session_id FROM calls WHERE id=?)", (new[0],))
    db.close()
    result = gc.collect(state, gc.Retention(keep_days=30))
    assert result.blobs_removed == 0 and any("has not ended" in note for note in result.notes)
    assert BlobStore(state / gc.BLOBS).has(snapshot_copy)
    assert _history(ws) == new


def test_an_old_call_undone_recently_keeps_its_session(ws: Path) -> None:
    old = _session(ws, {"f01.txt": "january\n"})
    state = workspace_state_dir(ws)
    _age(state, old)

    async def undo_today() -> None:
        async with Console(ws) as console:
            assert (await console.undo(old[0])).ok
    run(undo_today())
    assert gc.plan(state, gc.Retention(keep_days=30)).removed == ()  # the undo can still be redone
    gc.collect(state, gc.Retention(keep_days=30))
    assert _history(ws) == old
    assert (ws / "f01.txt").read_text() == _original(1)


def test_the_size_gc_reports_afterwards_is_what_the_state_takes(ws: Path,
                                                                 aged: tuple[Path, list[str], list[str]]) -> None:
    """Worked out from the sweep's own listing and what it removed and wrote, not by listing the folder again."""
    state, _, _ = aged
    result = gc.collect(state, gc.Retention(keep_days=30))
    assert result.blobs_removed > 0 and result.packs_rewritten > 0  # loose blobs and a pack shrunk
    assert result.state_bytes == gc.state_size(state)
