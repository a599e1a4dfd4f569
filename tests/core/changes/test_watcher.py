"""DirtyTracker: every path a real command touched is in the set taken right after it exits."""

from __future__ import annotations

import errno
import os
import random
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from watchdog.observers.api import BaseObserver

from core.changes.watcher import Dirty, DirtyTracker
from tests.inotify_limits import inotify_instances, limit_instances_to, limit_watches_to


def sh(cwd: Path, script: str) -> None:
    subprocess.run(["sh", "-c", script], cwd=cwd, check=True)


def tree(root: Path, *files: str) -> None:
    for rel in files:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(rel)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    tree(root, "keep.txt", "mod.txt", "gone.txt", "mode.txt", "src/a.py", "src/pkg/b.py", "lib/c.py")
    return root


@pytest.fixture
def tracker(ws: Path) -> Iterator[DirtyTracker]:
    tracker = DirtyTracker(ws)
    assert tracker.start(), tracker.problem
    assert tracker.take() == Dirty(frozenset(), everything=True)  # what happened before watching is unknown
    yield tracker
    tracker.stop()


def taken(tracker: DirtyTracker) -> set[str]:
    dirty = tracker.take()
    assert not dirty.everything, tracker.problem
    return set(dirty.paths)


def test_a_take_with_no_changes_in_between_reports_nothing(tracker: DirtyTracker, ws: Path) -> None:
    sh(ws, "cat keep.txt > /dev/null; ls -R > /dev/null")  # reading is not changing
    assert taken(tracker) == set()
    assert taken(tracker) == set()


def test_creates_modifications_deletions_mode_changes_and_links(tracker: DirtyTracker, ws: Path) -> None:
    sh(ws, "echo new > new.txt; echo more >> mod.txt; rm gone.txt; chmod 600 mode.txt; ln -s keep.txt link")
    assert taken(tracker) == {"new.txt", "mod.txt", "gone.txt", "mode.txt", "link"}


def test_renames_report_both_ends_within_and_across_directories(tracker: DirtyTracker, ws: Path) -> None:
    sh(ws, "mv keep.txt kept.txt; mv src/a.py lib/a.py; mv src/pkg lib/pkg")
    assert taken(tracker) == {"keep.txt", "kept.txt", "src/a.py", "lib/a.py", "src/pkg", "lib/pkg",
                              "src/pkg/b.py", "lib/pkg/b.py"}
    sh(ws, "echo x >> lib/pkg/b.py")  # the moved directory is watched under its new name
    assert taken(tracker) == {"lib/pkg/b.py"}


def test_files_made_inside_a_directory_just_created(tracker: DirtyTracker, ws: Path) -> None:
    sh(ws, "mkdir -p a/b/c && echo 1 > a/b/c/f && echo 2 > a/b/g && mkdir a/b/c/d && echo 3 > a/b/c/d/h")
    assert taken(tracker) == {"a", "a/b", "a/b/c", "a/b/c/f", "a/b/g", "a/b/c/d", "a/b/c/d/h"}


def test_rm_rf_of_a_subtree_reports_all_of_it(tracker: DirtyTracker, ws: Path) -> None:
    sh(ws, "rm -rf src")
    assert taken(tracker) == {"src", "src/a.py", "src/pkg", "src/pkg/b.py"}


def test_moves_out_of_and_into_the_tree(tracker: DirtyTracker, ws: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    tree(outside, "in.txt", "dir/x", "dir/sub/y")
    sh(ws, f"mv keep.txt {outside}/; mv {outside}/in.txt in.txt; mv {outside}/dir brought; mv lib {outside}/lib")
    assert taken(tracker) == {"keep.txt", "in.txt", "brought", "brought/x", "brought/sub", "brought/sub/y", "lib"}
    sh(ws, "echo z > brought/sub/z")
    assert taken(tracker) == {"brought/sub/z"}


def test_a_thousand_files_from_one_command(tracker: DirtyTracker, ws: Path) -> None:
    sh(ws, "mkdir many; i=0; while [ $i -lt 1000 ]; do echo $i > many/f$i; echo $i > src/f$i; i=$((i+1)); done")
    expected = {"many"} | {f"many/f{i}" for i in range(1000)} | {f"src/f{i}" for i in range(1000)}
    assert taken(tracker) == expected


def test_git_contents_are_never_reported(tracker: DirtyTracker, ws: Path) -> None:
    sh(ws, "git init -q && git add -A && git -c user.name=t -c user.email=t@t commit -qm one"
           " && mkdir -p src/vendor/.git/objects && echo x > src/vendor/.git/objects/o && echo y > real.txt")
    assert taken(tracker) == {"src/vendor", "real.txt"}


def test_a_take_right_after_a_command_never_misses(tracker: DirtyTracker, ws: Path) -> None:
    sh(ws, "mkdir -p deep/er/est")
    taken(tracker)
    rng = random.Random(7)
    names = [f"{d}/n{i}" for d in ("src", "src/pkg", "lib", "deep/er/est") for i in range(5)]
    present: set[str] = set()
    for _ in range(200):
        name = rng.choice(names)
        other = rng.choice([n for n in names if n != name])
        if name not in present:
            script, touched, present = f"echo 1 > {name}", {name}, present | {name}
        else:
            script, touched, present = rng.choice([
                (f"echo 2 >> {name}", {name}, present),
                (f"chmod 6{rng.randint(0, 4)}4 {name}", {name}, present),
                (f"rm {name}", {name}, present - {name}),
                (f"mv {name} {other}", {name, other}, present - {name} | {other}),
            ])
        sh(ws, script)
        assert taken(tracker) == touched, script


def test_changes_through_a_bubblewrap_bind_mount_are_seen(tracker: DirtyTracker, ws: Path) -> None:
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed")
    subprocess.run(["bwrap", "--ro-bind", "/", "/", "--bind", ws, ws, "--chdir", ws, "--",
                    "sh", "-c", "echo x > file && mkdir d && echo y > d/f && rm gone.txt"], check=True)
    assert taken(tracker) == {"file", "d", "d/f", "gone.txt"}


def test_on_dirty_fires_when_the_set_becomes_non_empty(ws: Path) -> None:
    calls: list[str] = []
    tracker = DirtyTracker(ws, on_dirty=lambda: calls.append(threading.current_thread().name))
    try:
        assert tracker.start()
        tracker.take()
        sh(ws, "echo 1 > a; echo 2 > b; rm gone.txt")
        assert taken(tracker) == {"a", "b", "gone.txt"}
        assert len(calls) == 1 and calls[0] != threading.current_thread().name
        sh(ws, "echo 3 > c")
        assert taken(tracker) == {"c"} and len(calls) == 2
    finally:
        tracker.stop()


def test_concurrent_takes_hand_out_every_path_once(tracker: DirtyTracker, ws: Path) -> None:
    results: list[Dirty] = []

    def work(n: int) -> None:
        for i in range(30):
            (ws / f"t{n}-{i}").write_text("x")
            results.append(tracker.take())

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not any(r.everything for r in results)
    handed = [p for r in results for p in r.paths]
    assert set(handed) == {f"t{n}-{i}" for n in range(4) for i in range(30)}  # a path being written may come twice


def test_stop_leaves_no_thread_or_descriptor_behind(ws: Path) -> None:
    threads, fds = set(threading.enumerate()), set(os.listdir("/proc/self/fd"))
    tracker = DirtyTracker(ws)
    assert tracker.start() and tracker.watching
    # inotify reader, emitter, dispatcher, and from watchdog 7.1.1 the reader's own event dispatcher
    assert len(set(threading.enumerate()) - threads) in (3, 4)
    tracker.stop()
    assert set(threading.enumerate()) == threads and set(os.listdir("/proc/self/fd")) == fds
    assert not tracker.watching and tracker.take() == Dirty(frozenset(), everything=True)


def test_start_fails_gracefully_when_watching_is_impossible(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def schedule(*args: object, **kwargs: object) -> None:
        raise OSError(errno.ENOSPC, "inotify watch limit reached")

    monkeypatch.setattr(BaseObserver, "schedule", schedule)
    threads = set(threading.enumerate())
    tracker = DirtyTracker(ws)
    assert not tracker.start()
    assert "inotify watch limit reached" in tracker.problem and not tracker.watching
    assert tracker.take().everything
    assert set(threading.enumerate()) == threads


def test_starts_that_fail_at_once_give_their_inotify_instances_back(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A tracker whose start fails (a watch limit reached: a large repository) is retried at each look; each
    attempt once kept an instance, and enough of them (a long session, many editors open) used up the user's
    inotify instances, for Belay and every other program of the user's."""
    def schedule(*args: object, **kwargs: object) -> None:
        raise OSError(errno.ENOSPC, "inotify watch limit reached")

    monkeypatch.setattr(BaseObserver, "schedule", schedule)
    before = inotify_instances()
    for _ in range(20):
        assert not DirtyTracker(ws).start()
    assert inotify_instances() == before


def test_a_subdirectory_that_cannot_be_watched_fails_start(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    limit_watches_to(monkeypatch, {os.fsencode(ws)})  # watchdog itself would carry on without the subdirectories
    tracker = DirtyTracker(ws)
    assert not tracker.start()
    assert "cannot watch" in tracker.problem and "src" in tracker.problem


def test_at_the_watch_limit_start_fails_and_says_which_limit(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    limit_watches_to(monkeypatch, {os.fsencode(ws)})  # a large repository: more directories than watches
    tracker = DirtyTracker(ws)
    assert not tracker.start() and not tracker.watching
    assert tracker.limit == "watches" and tracker.take().everything


def test_at_the_instance_limit_start_fails_and_says_which_limit(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    limit_instances_to(monkeypatch, 0)  # many editors open: every inotify instance of the user's taken
    before = inotify_instances()
    tracker = DirtyTracker(ws)
    assert not tracker.start() and not tracker.watching
    assert tracker.limit == "instances" and "inotify instance limit reached" in tracker.problem
    assert tracker.take().everything and inotify_instances() == before


@pytest.mark.allow_warning_logs
def test_a_new_directory_that_cannot_be_watched_means_everything(tracker: DirtyTracker, ws: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    limit_watches_to(monkeypatch, {os.fsencode(p) for p in (ws, ws / "src", ws / "src/pkg", ws / "lib")})
    sh(ws, "mkdir newdir")
    assert tracker.take().everything
    assert not tracker.watching and "cannot watch" in tracker.problem  # restarting hit the limit again


@pytest.mark.allow_warning_logs
def test_a_queue_overflow_means_everything_then_exact_again(tracker: DirtyTracker, ws: Path) -> None:
    flood = "import os\nfor i in range(60000): os.chmod('mode.txt' if i % 2 else 'keep.txt', 0o644)"
    subprocess.run([sys.executable, "-c", flood], cwd=ws, check=True)  # faster than watchdog reads
    assert tracker.take().everything
    assert tracker.watching
    sh(ws, "echo 1 > after")
    assert taken(tracker) == {"after"}


@pytest.mark.allow_warning_logs
def test_an_echo_that_does_not_come_back_in_time_means_everything(ws: Path) -> None:
    stall, stalled = threading.Event(), threading.Event()

    def on_dirty() -> None:  # blocks watchdog's dispatcher, as a huge backlog would
        stalled.set()
        stall.wait(10)

    tracker = DirtyTracker(ws, on_dirty=on_dirty)
    try:
        assert tracker.start()
        tracker.take()
        sh(ws, "echo 1 > a")
        assert stalled.wait(5)
        threading.Timer(0.5, stall.set).start()  # the restart joins the dispatcher
        assert tracker.take(timeout=0.2).everything
        assert tracker.watching
        sh(ws, "echo 2 > b")
        assert taken(tracker) == {"b"}
    finally:
        tracker.stop()


@pytest.mark.allow_warning_logs
def test_a_deleted_workspace_root_stops_watching(tracker: DirtyTracker, ws: Path) -> None:
    shutil.rmtree(ws)
    assert tracker.take().everything
    assert not tracker.watching and tracker.problem
    assert tracker.take().everything


class Heard:
    """A listener that remembers every batch it is told, and on which thread."""

    def __init__(self) -> None:
        self.batches: list[tuple[frozenset[str], bool, str]] = []

    def __call__(self, paths: frozenset[str], everything: bool) -> None:
        self.batches.append((paths, everything, threading.current_thread().name))

    def paths(self) -> set[str]:
        return {p for paths, _, _ in self.batches for p in paths}

    def everythings(self) -> int:
        return sum(everything for _, everything, _ in self.batches)


def test_listeners_hear_every_change_before_sync_returns(tracker: DirtyTracker, ws: Path) -> None:
    heard = Heard()
    tracker.add_listener(heard)
    for i in range(60):
        before = len(heard.batches)
        sh(ws, f"echo {i} >> mod.txt; mkdir d{i}; echo {i} > d{i}/f; rm -f d{i - 1}/f")
        assert tracker.sync()
        expected = {"mod.txt", f"d{i}", f"d{i}/f"} | ({f"d{i - 1}/f"} if i else set())
        assert {p for paths, _, _ in heard.batches[before:] for p in paths} == expected, i
    assert heard.everythings() == 0
    assert {thread for _, _, thread in heard.batches} == {"watcher-dispatch"}


def test_sync_leaves_the_paths_for_take(tracker: DirtyTracker, ws: Path) -> None:
    heard = Heard()
    tracker.add_listener(heard)
    sh(ws, "echo new > new.txt; rm gone.txt; mv keep.txt kept.txt")
    assert tracker.sync() and tracker.sync()
    assert taken(tracker) == heard.paths() == {"new.txt", "gone.txt", "keep.txt", "kept.txt"}
    assert taken(tracker) == set()


def test_listeners_hear_everything_whenever_watching_starts(ws: Path) -> None:
    heard = Heard()
    tracker = DirtyTracker(ws)
    tracker.add_listener(heard)
    assert not tracker.sync()  # not watching yet: nothing to vouch for
    try:
        assert tracker.start()
        assert heard.batches == [(frozenset(), True, threading.current_thread().name)]
        assert tracker.sync()
    finally:
        tracker.stop()
    assert not tracker.sync()


def test_a_removed_listener_hears_nothing_more(tracker: DirtyTracker, ws: Path) -> None:
    kept, removed = Heard(), Heard()
    tracker.add_listener(kept)
    remove = tracker.add_listener(removed)
    sh(ws, "echo 1 > a")
    assert tracker.sync()
    remove()
    remove()  # twice is harmless and removes nobody else
    sh(ws, "echo 2 > b")
    assert tracker.sync()
    assert removed.paths() == {"a"} and kept.paths() == {"a", "b"}


@pytest.mark.allow_warning_logs
def test_a_failing_listener_is_logged_and_the_others_still_hear(tracker: DirtyTracker, ws: Path,
                                                               caplog: pytest.LogCaptureFixture) -> None:
    def broken(paths: frozenset[str], everything: bool) -> None:
        raise ValueError("listener bug")

    heard = Heard()
    tracker.add_listener(broken)
    tracker.add_listener(heard)
    sh(ws, "echo 1 > a")
    assert tracker.sync()
    sh(ws, "echo 2 > b")  # the dispatcher survived the first failure
    assert tracker.sync() and tracker.watching
    assert heard.paths() == {"a", "b"}
    failures = [r.exc_info[1] for r in caplog.records if r.name == "core.changes.watcher" and r.exc_info]
    assert len(failures) >= 2 and all(isinstance(e, ValueError) for e in failures)  # one a file event


@pytest.mark.allow_warning_logs
def test_lost_events_mean_everything_for_listeners_and_sync(tracker: DirtyTracker, ws: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    heard = Heard()
    tracker.add_listener(heard)
    limit_watches_to(monkeypatch, {os.fsencode(p) for p in (ws, ws / "src", ws / "src/pkg", ws / "lib")})
    sh(ws, "mkdir newdir")
    assert not tracker.sync()  # restarting hit the limit again
    assert heard.everythings() >= 1 and heard.batches[-1][:2] == (frozenset(), True) and not tracker.watching
    assert not tracker.sync()


def test_syncs_and_takes_from_many_threads(tracker: DirtyTracker, ws: Path) -> None:
    heard, results, synced = Heard(), [], []
    tracker.add_listener(heard)

    def work(n: int) -> None:
        for i in range(30):
            (ws / f"t{n}-{i}").write_text("x")
            if n % 2:
                results.append(tracker.take())
            else:
                synced.append(tracker.sync() and f"t{n}-{i}" in heard.paths())

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert all(synced) and len(synced) == 60
    assert not any(r.everything for r in results)
    handed = {p for r in results for p in r.paths} | taken(tracker)
    assert handed == heard.paths() == {f"t{n}-{i}" for n in range(4) for i in range(30)}


def test_watchdogs_stop_race_message_is_not_an_error_log(caplog: pytest.LogCaptureFixture) -> None:
    """watchdog's emitter may read once more after its stop and log an error about it; nothing is lost then,
    so a console closing at that moment must not log an error (the test suite failed on it now and then)."""
    import logging

    logging.getLogger("watchdog.observers.inotify").error(
        "InotifyEmitter.queue_events() called when the thread is inactive")
    logging.getLogger("watchdog.observers.inotify").error("a real inotify problem")
    assert [r.getMessage() for r in caplog.records] == ["a real inotify problem"]
    caplog.clear()  # the second one is expected here
