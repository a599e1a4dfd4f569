"""Group commit: the loop's journal writes share transactions, without losing order, errors or announcements."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path

import pytest

from core.models.records import RunStatus
from core.store.group_commit import GroupWriter
from core.store.journal import Journal
from tests.conftest import run


@asynccontextmanager
async def writer(tmp_path: Path, delay_s: float = 0.005) -> AsyncIterator[GroupWriter]:
    executor = ThreadPoolExecutor(max_workers=1)
    journal = await asyncio.get_running_loop().run_in_executor(executor, Journal, tmp_path / "j.sqlite3")
    journal.start_session("s", "/ws")
    journal.add_agent("a", "s", "agent", "scripted", None, None, None)
    try:
        yield GroupWriter(journal, executor, asyncio.get_running_loop(), delay_s)
    finally:
        await asyncio.get_running_loop().run_in_executor(executor, journal.close)
        executor.shutdown(wait=True)


def _rows(path: Path, query: str) -> list[tuple[object, ...]]:
    """What another process would read from the file now."""
    db = sqlite3.connect(path)
    try:
        return db.execute(query).fetchall()
    finally:
        db.close()


def test_a_burst_of_calls_shares_commits_and_every_row_is_written(tmp_path: Path) -> None:
    calls = 64

    async def one(w: GroupWriter, i: int) -> None:
        j = w.journal
        w.defer(f"c{i}", partial(j.add_call, f"c{i}", "s", "a", "Read", {"i": i}, f"read {i}"))
        w.defer(f"c{i}", partial(j.set_status, f"c{i}", RunStatus.RUNNING))
        await asyncio.sleep(0)  # the calls interleave, as concurrent calls do
        await w.commit(f"c{i}", partial(j.finish_run, f"c{i}", RunStatus.DONE, "ok", None, 0.0, durable=False))

    async def scenario() -> None:
        async with writer(tmp_path) as w:
            before = w.commits
            await asyncio.wait_for(asyncio.gather(*(one(w, i) for i in range(calls))), 10)
            assert w.commits - before < calls  # several calls per commit: 3 writes each, far fewer commits
            assert w.idle

    run(scenario())
    done = _rows(tmp_path / "j.sqlite3", "SELECT status FROM runs")
    assert len(done) == calls and {s for (s,) in done} == {"done"}


def test_one_call_one_commit_and_its_events_in_order_once_committed(tmp_path: Path) -> None:
    seen: list[tuple[str, list[tuple[object, ...]]]] = []

    def announce(what: str) -> None:  # the journal as another process reads it when the event goes out
        seen.append((what, _rows(tmp_path / "j.sqlite3", "SELECT status FROM runs WHERE call_id='c1'")))

    async def scenario() -> None:
        async with writer(tmp_path, delay_s=60) as w:
            j = w.journal
            before = w.commits
            w.defer("c1", partial(j.add_call, "c1", "s", "a", "Read", {}, "read"), then=partial(announce, "queued"))
            w.defer("c1", partial(j.set_status, "c1", RunStatus.RUNNING), then=partial(announce, "started"))
            w.announce(partial(announce, "output"))  # no row of its own: after the rows before it, not before
            await asyncio.sleep(0.05)  # deferred: nothing is committed (nor announced) until a step waits
            assert seen == [] and not w.idle and w.commits == before
            await w.commit("c1", partial(j.finish_run, "c1", RunStatus.DONE, "ok", None, 0.0, durable=False),
                           then=partial(announce, "finished"))
            assert w.commits - before == 1
            assert seen == [(what, [("done",)]) for what in ("queued", "started", "output", "finished")]

    run(scenario())


def test_deferred_writes_are_committed_soon_without_anyone_waiting(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with writer(tmp_path, delay_s=0.01) as w:
            w.defer("c1", partial(w.journal.add_call, "c1", "s", "a", "Read", {}, "read"))
            for _ in range(200):
                if w.idle:
                    break
                await asyncio.sleep(0.01)
            assert w.idle

    run(scenario())
    assert _rows(tmp_path / "j.sqlite3", "SELECT id FROM calls") == [("c1",)]


def test_a_read_on_the_journals_thread_sees_the_writes_handed_over_before_it(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with writer(tmp_path, delay_s=60) as w:
            w.defer("c1", partial(w.journal.add_call, "c1", "s", "a", "Read", {}, "read"))
            w.kick()
            loop = asyncio.get_running_loop()
            calls = await loop.run_in_executor(w._executor, w.journal.calls)  # noqa: SLF001 - its own thread
            assert [c.call_id for c in calls] == ["c1"]

    run(scenario())


@pytest.mark.allow_warning_logs  # the deferred write's failure is logged where it happens
def test_a_failed_write_fails_alone_and_a_deferred_ones_error_reaches_the_calls_next_commit(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with writer(tmp_path, delay_s=60) as w:
            j = w.journal
            w.defer("c1", partial(j.add_call, "c1", "s", "a", "Read", {}, "read"))
            w.defer("c2", partial(j.add_call, "c2", "s", "a", "Read", {}, "read"))
            w.defer("c2", partial(j.add_call, "c2", "s", "a", "Read", {}, "again"))  # the same id: refused
            await w.commit("c1", partial(j.set_status, "c1", RunStatus.RUNNING))  # c1's writes are not c2's
            with pytest.raises(sqlite3.IntegrityError):
                await w.commit("c2", partial(j.set_status, "c2", RunStatus.RUNNING))
            await w.commit("c2", partial(j.set_status, "c2", RunStatus.DONE))  # raised once, then forgotten

    run(scenario())
    assert _rows(tmp_path / "j.sqlite3", "SELECT c.id, c.summary, r.status FROM calls c JOIN runs r ON r.call_id=c.id"
                 " ORDER BY c.id") == [("c1", "read", "running"), ("c2", "read", "done")]


def test_a_caller_is_woken_before_the_events_of_its_group_wake_anyone_else(tmp_path: Path) -> None:
    order: list[str] = []

    async def scenario() -> None:
        async with writer(tmp_path, delay_s=60) as w:
            j = w.journal
            announced = asyncio.Event()

            async def subscriber() -> None:
                await announced.wait()
                order.append("subscriber")

            listening = asyncio.ensure_future(subscriber())
            await asyncio.sleep(0)
            w.defer("c1", partial(j.add_call, "c1", "s", "a", "Bash", {}, "x"), then=announced.set)
            await w.commit("c1", partial(j.set_status, "c1", RunStatus.BLOCKED_ON_USER))
            order.append("caller")  # e.g. registers the approval the subscriber will answer
            await listening

    run(scenario())
    assert order == ["caller", "subscriber"]


def test_a_deferred_write_is_amended_until_the_journals_thread_takes_it(tmp_path: Path) -> None:
    announced: list[str] = []

    async def scenario() -> None:
        async with writer(tmp_path, delay_s=60) as w:
            j = w.journal
            queued = w.defer("c1", partial(j.add_call, "c1", "s", "a", "Read", {}, "first"),
                             then=partial(announced.append, "queued"))
            started = w.defer("c1", partial(j.set_status, "c1", RunStatus.RUNNING),
                              then=partial(announced.append, "started"))
            assert w.amend(queued, partial(j.add_call, "c1", "s", "a", "Read", {}, "amended"))
            assert w.amend(started, None)  # nothing to write: only its announcement stays, in its place
            await w.commit("c1", None, then=partial(announced.append, "finished"))
            assert not w.amend(queued, partial(j.add_call, "c1", "s", "a", "Read", {}, "too late"))
            assert announced == ["queued", "started", "finished"]

    run(scenario())
    assert _rows(tmp_path / "j.sqlite3", "SELECT c.summary, r.status, r.started_at FROM calls c JOIN runs r"
                 " ON r.call_id=c.id") == [("amended", "queued", None)]
