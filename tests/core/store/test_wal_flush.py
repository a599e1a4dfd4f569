"""WalFlusher: the journal's log is synced soon after a light commit, on a thread of its own, and never in the way."""

from __future__ import annotations

import logging
import os
import threading
import time
from pathlib import Path

import pytest

from core.store import wal_flush
from core.store.journal import Journal
from core.store.wal_flush import SYNC_EVERY, WalFlusher


def _light_commits(journal: Journal, n: int, first: int = 0) -> None:
    for i in range(first, first + n):
        journal.add_agent(f"agt_{i}", "ses_1", "a", "scripted", None, None, None)


def _wait_for(condition, timeout_s: float = 5.0) -> None:  # noqa: ANN001 - a test helper
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.005)


@pytest.fixture
def synced(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The files the flusher synced, in order (the real sync still runs)."""
    paths: list[str] = []
    real = wal_flush._sync

    def recording(fd: int) -> None:
        real(fd)
        paths.append(os.readlink(f"/proc/self/fd/{fd}"))
    monkeypatch.setattr(wal_flush, "_sync", recording)
    return paths


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="names a descriptor's file through /proc")
def test_light_commits_have_the_journals_log_synced_every_few(tmp_path: Path, synced: list[str]) -> None:
    journal = Journal(tmp_path / "journal.db")
    try:
        journal.start_session("ses_1", str(tmp_path))
        _light_commits(journal, SYNC_EVERY - 2)
        assert synced == [] and not journal._flusher.running  # noqa: SLF001 - one commit short of a sync
        groups = [lambda: journal.add_agent("agt_x", "ses_1", "a", "scripted", None, None, None)]
        assert journal.run_group(groups, durable=False) == [None]  # a group's commit counts as one
        _wait_for(lambda: len(synced) == 1)
        assert synced == [str(tmp_path / "journal.db-wal")]
        _light_commits(journal, SYNC_EVERY, first=100)
        _wait_for(lambda: len(synced) == 2)
        assert set(synced) == {str(tmp_path / "journal.db-wal")}
    finally:
        journal.close()
    assert not journal._flusher.running  # noqa: SLF001


def test_a_durable_commit_is_synced_by_sqlite_and_asks_for_nothing(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "journal.db")
    try:
        journal.run_group([lambda: journal.start_session("ses_1", str(tmp_path))], durable=True)
        assert journal._flusher.syncs == 0 and not journal._flusher.running  # noqa: SLF001
    finally:
        journal.close()


def test_commits_made_while_a_sync_runs_share_the_next_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    wal = tmp_path / "log"
    wal.write_bytes(b"x")
    started, release = threading.Event(), threading.Event()
    calls: list[int] = []

    def slow(fd: int) -> None:
        calls.append(fd)
        started.set()
        release.wait(5)
    monkeypatch.setattr(wal_flush, "_sync", slow)
    flusher = WalFlusher(wal, every=1)
    flusher.committed()
    assert started.wait(5)
    for _ in range(5):
        flusher.committed()
    release.set()
    _wait_for(lambda: flusher.syncs == 2)
    flusher.close()
    assert len(calls) == 2
    flusher.committed()  # after close: nothing starts again
    assert not flusher.running and flusher.syncs == 2


def test_an_idle_flusher_keeps_no_thread_and_starts_one_for_the_next_commit(tmp_path: Path) -> None:
    wal = tmp_path / "log"
    wal.write_bytes(b"x")
    flusher = WalFlusher(wal, idle_s=0.05, every=1)
    flusher.committed()
    _wait_for(lambda: flusher.syncs == 1 and not flusher.running)
    flusher.committed()
    assert flusher.running
    _wait_for(lambda: flusher.syncs == 2 and not flusher.running)
    flusher.close()


@pytest.mark.allow_warning_logs  # the one warning this test provokes, naming a temporary path
def test_a_log_that_cannot_be_synced_is_left_to_the_checkpoints(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                caplog: pytest.LogCaptureFixture) -> None:
    def failing(fd: int) -> None:
        raise OSError(5, "Input/output error")
    monkeypatch.setattr(wal_flush, "_sync", failing)
    journal = Journal(tmp_path / "journal.db")
    try:
        with caplog.at_level(logging.WARNING, logger=wal_flush.__name__):
            journal.start_session("ses_1", str(tmp_path))
            _light_commits(journal, SYNC_EVERY - 1)
            _wait_for(lambda: "Input/output error" in caplog.text)
        _light_commits(journal, 1, first=100)  # writing goes on
        assert len(journal.agents()) == SYNC_EVERY
        assert not journal._flusher.running  # noqa: SLF001 - one failure is enough: no thread is started again
        _light_commits(journal, SYNC_EVERY, first=200)
        assert not journal._flusher.running  # noqa: SLF001
    finally:
        journal.close()
    assert caplog.text.count("checkpoints will sync it") == 1
