"""ChangeTracker: who changed what, with one author at a time, on a real workspace and a real blob store."""

from __future__ import annotations

import asyncio
import os
import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from core.changes.tracker import Captured, ChangeTracker, WatchState
from core.models.records import ChangeKind, FileChange
from core.paths import Workspace
from core.store.blobs import BlobStore, content_hash
from tests.conftest import run, wait_until
from tests.inotify_limits import limit_instances_to, limit_watches_to

External = list[tuple[list[tuple[str, ChangeKind]], str]]


def make_workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "app.py").write_text("x = 1\n")
    (ws / "notes.txt").write_text("notes\n")
    return ws


@asynccontextmanager
async def tracking(tmp_path: Path, *, watch: bool = True) -> AsyncIterator[tuple[ChangeTracker, External]]:
    """A started tracker on the workspace in `tmp_path`, and what it recorded as external: (changes, note)."""
    external: External = []

    async def on_external(changes: list[FileChange], note: str) -> None:
        external.append(([(c.path, c.kind) for c in changes], note))

    tracker = ChangeTracker(Workspace(tmp_path / "ws"), BlobStore(tmp_path / "blobs"), on_external, watch=watch)
    await tracker.start()
    try:
        yield tracker, external
    finally:
        await tracker.stop()


def git(ws: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=T", "-c", "user.email=t@example.com", "-c", "init.defaultBranch=main",
                           "-c", "core.hooksPath=/dev/null", *args], cwd=ws, check=True, capture_output=True,
                          text=True).stdout.strip()


def test_what_changed_before_a_mutation_is_external_and_capture_returns_only_the_commands_own(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path)

    async def scenario() -> None:
        async with tracking(tmp_path) as (tracker, external):
            (ws / "notes.txt").write_text("the person's edit\n")  # made while no call runs
            async with tracker.mutation("call 1"):
                assert external == [([("notes.txt", ChangeKind.MODIFY)], "before call 1")]
                (ws / "src" / "app.py").write_text("x = 2\n")  # what the command does
                (ws / "src" / "new.py").write_text("y = 1\n")
                (ws / "notes.txt").rename(ws / "renamed.txt")
                captured = await tracker.capture()
                assert await tracker.capture() == Captured((), ())  # each change is captured once
            assert len(external) == 1
            assert captured.git == ()
            assert [(c.path, c.old_path, c.kind) for c in captured.changes] == [
                ("renamed.txt", "notes.txt", ChangeKind.RENAME), ("src/app.py", None, ChangeKind.MODIFY),
                ("src/new.py", None, ChangeKind.CREATE)]
            modified = captured.changes[1]
            assert tracker.index.blobs.get(modified.before_hash) == b"x = 1\n"  # what undo puts back
    run(scenario())


def test_capture_reports_the_git_references_a_command_moved(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path)
    git(ws, "init", "-q")
    git(ws, "add", "-A")
    git(ws, "commit", "-q", "-m", "Start")

    async def scenario() -> None:
        async with tracking(tmp_path) as (tracker, external):
            async with tracker.mutation("call 1"):
                (ws / "src" / "app.py").write_text("x = 2\n")
                git(ws, "commit", "-q", "-am", "Fix rounding")
                git(ws, "tag", "v1")
                captured = await tracker.capture()
            tip = git(ws, "rev-parse", "HEAD")
            assert [(c.path, c.kind) for c in captured.changes] == [("src/app.py", ChangeKind.MODIFY)]  # not .git
            assert [(g.ref, g.kind, g.after, g.what) for g in captured.git] == [
                ("refs/heads/main", "commit", tip, f"commit {tip[:7]} on main: Fix rounding"),
                ("refs/tags/v1", "created", tip, f"created tag v1 at {tip[:7]}")]
            assert external == []
    run(scenario())


def test_absorb_takes_belays_own_writes_in_and_reports_anything_else_found_there(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path)

    async def scenario() -> None:
        async with tracking(tmp_path, watch=False) as (tracker, external):
            async with tracker.mutation("call 1"):
                old = content_hash(b"x = 1\n")
                (ws / "src" / "app.py").write_text("x = 2\n")  # Belay's write, as planned
                (ws / "notes.txt").write_text("someone else got here first\n")  # Belay meant b"planned\n"
                await tracker.absorb([
                    FileChange(path="src/app.py", kind=ChangeKind.MODIFY, before_hash=old,
                               after_hash=content_hash(b"x = 2\n")),
                    FileChange(path="notes.txt", kind=ChangeKind.MODIFY, before_hash=content_hash(b"notes\n"),
                               after_hash=content_hash(b"planned\n")),
                ])
                assert external == [([("notes.txt", ChangeKind.MODIFY)], "while Belay was writing those files")]
                assert (await tracker.capture()).changes == ()  # both taken in: no command is blamed later
    run(scenario())


def test_a_held_paths_change_is_left_to_the_call_holding_it(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path)

    async def scenario() -> None:
        async with tracking(tmp_path) as (tracker, external):
            tracker.hold("call-7", frozenset({"src/app.py"}))
            (ws / "src" / "app.py").write_text("x = 7\n")  # the outside agent's approved write
            (ws / "notes.txt").write_text("the person's edit\n")
            async with tracker.mutation("call 8"):
                (ws / "src" / "extra.py").write_text("z = 1\n")
                captured = await tracker.capture()
            assert external == [([("notes.txt", ChangeKind.MODIFY)], "before call 8")]
            assert [c.path for c in captured.changes] == ["src/extra.py"]  # never another call's change
            async with tracker.mutation("call-7 reports back"):
                await tracker.absorb([FileChange(path="src/app.py", kind=ChangeKind.MODIFY,
                                                 before_hash=content_hash(b"x = 1\n"),
                                                 after_hash=content_hash(b"x = 7\n"))])
                tracker.release("call-7")
            async with tracker.mutation("call 9"):
                assert (await tracker.capture()).changes == ()
            assert len(external) == 1  # the held write was the call's, not external
    run(scenario())


def test_changes_made_while_nothing_runs_are_recorded_after_a_quiet_moment(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path)

    async def scenario() -> None:
        async with tracking(tmp_path) as (tracker, external):
            assert tracker.watching
            (ws / "src" / "app.py").unlink()
            (ws / "draft.md").write_text("# draft\n")
            await wait_until(lambda: external, timeout=5.0, what="the outside changes to be recorded")
            assert external == [([("draft.md", ChangeKind.CREATE), ("src/app.py", ChangeKind.DELETE)],
                                 "while no call was running")]
    run(scenario())


def test_holding_names_the_author_while_others_wait_and_nobody_once_it_lets_go(tmp_path: Path) -> None:
    make_workspace(tmp_path)

    async def scenario() -> None:
        async with tracking(tmp_path, watch=False) as (tracker, _):
            assert tracker.holding is None
            async with tracker.mutation("call call_abc123"):
                assert tracker.holding is None  # held, but nobody waits: nothing to explain
                waiter = asyncio.ensure_future(_briefly(tracker))
                await wait_until(lambda: tracker.holding is not None, what="the waiter to be counted")
                held = tracker.holding
                assert held is not None and (held.who, held.call_id, held.waiting) == ("call call_abc123", "call_abc123", 1)
            await waiter
            assert tracker.holding is None

    run(scenario())


async def _briefly(tracker: ChangeTracker) -> None:
    async with tracker.mutation("call call_def456"):
        pass


@pytest.mark.parametrize("limit", ["instances", "watches"])
def test_at_an_inotify_limit_each_command_is_looked_at_whole_and_nothing_is_missed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, limit: str) -> None:
    """Many editors open (every inotify instance taken) or a large repository (more directories than watches):
    the tracker cannot watch, says why, and compares the whole workspace before and after each command."""
    ws = make_workspace(tmp_path)
    if limit == "instances":
        limit_instances_to(monkeypatch, 0)
    else:
        limit_watches_to(monkeypatch, {os.fsencode(ws)})

    async def scenario() -> None:
        async with tracking(tmp_path) as (tracker, external):
            state = tracker.watch_state
            assert state is not None and not state.watching and not tracker.watching
            assert state.limit == limit and state.problem.startswith("cannot watch ")
            (ws / "notes.txt").write_text("the person's edit\n")  # no watcher sees it: the next look does
            for n in (1, 2):
                async with tracker.mutation(f"call {n}"):
                    subprocess.run(["sh", "-c", f"echo {n} > src/new{n}.py; echo {n} >> src/app.py"], cwd=ws,
                                   check=True)
                    captured = await tracker.capture()
                assert [(c.path, c.kind) for c in captured.changes] == [
                    ("src/app.py", ChangeKind.MODIFY), (f"src/new{n}.py", ChangeKind.CREATE)]
            assert external == [([("notes.txt", ChangeKind.MODIFY)], "before call 1")]
            assert tracker.watch_state == state  # no retry at each look: it would walk a large tree in vain

    run(scenario())


def test_a_tracker_that_watches_says_so_and_one_made_not_to_says_nothing(tmp_path: Path) -> None:
    make_workspace(tmp_path)

    async def scenario() -> None:
        async with tracking(tmp_path) as (tracker, _):
            assert tracker.watch_state == WatchState(True)
        async with tracking(tmp_path, watch=False) as (tracker, _):
            assert tracker.watch_state is None

    run(scenario())
