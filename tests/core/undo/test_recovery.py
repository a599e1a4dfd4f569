"""Tests for core.undo.recovery: opening after a crash finishes a half-written undo and accounts for every edit."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from pathlib import Path

import pytest

from core.bus import EventBus
from core.changes.tracker import ChangeTracker
from core.ids import CallId, new_session_id
from core.models.records import CallRecord, ChangeKind, ExternalRecord, FileChange, RollbackRecord, RunStatus
from core.paths import Workspace
from core.recorder import Recorder
from core.store.blobs import BlobStore, content_hash
from core.store.journal import Journal
from core.store.journal_reads import JournalReads
from core.undo import recovery
from tests.conftest import run

SESSION = "session-before-the-crash"


class Crashed:
    """What a console killed with -9 left behind: a workspace, its blob store and its journal."""

    def __init__(self, tmp_path: Path) -> None:
        self.root = tmp_path / "ws"
        self.root.mkdir()
        self.state = tmp_path / "state"
        self.blobs = BlobStore(self.state / "blobs")
        self.journal = Journal(self.state / "journal.sqlite3")
        self.journal.start_session(SESSION, str(self.root))
        self.journal.add_agent("agent-1", SESSION, "agent", "scripted", None, None, None)

    def call(self, call_id: str, tool: str, *changes: FileChange, finished: bool = True) -> None:
        """A call the journal knows, with the changes it recorded; unfinished if the console died while it ran."""
        self.journal.add_call(call_id, SESSION, "agent-1", tool, {}, f"{tool} by the agent")
        self.journal.set_status(call_id, RunStatus.RUNNING)
        if changes:
            self.journal.add_changes(call_id, changes)
        if finished:
            self.journal.finish_run(call_id, RunStatus.DONE, "", None, 0.1)

    def change(self, path: str, before: str | None, after: str | None, **extra: object) -> FileChange:
        kind = ChangeKind.CREATE if before is None else ChangeKind.DELETE if after is None else ChangeKind.MODIFY
        fields: dict[str, object] = {"path": path, "kind": kind, "before_hash": self._put(before),
                                     "after_hash": self._put(after), **extra}
        return FileChange.model_validate(fields)

    def write(self, files: dict[str, str | None]) -> None:
        """The workspace as the crash left it (or as someone left it since): path -> content, None for absent."""
        for name, content in files.items():
            path = self.root / name
            if content is None:
                path.unlink(missing_ok=True)
            else:
                path.write_text(content)

    def read(self, name: str) -> str | None:
        path = self.root / name
        return path.read_text() if path.exists() else None

    def _put(self, content: str | None) -> str | None:
        return self.blobs.put(content.encode()) if content is not None else None


@dataclass(frozen=True)
class Reopened:
    notes: list[str]
    calls: dict[str, CallRecord]
    rollbacks: list[RollbackRecord]
    externals: list[ExternalRecord]


def reopen(crashed: Crashed) -> Reopened:
    """Open the workspace again as the console does (index taken, runs marked interrupted), then recover."""
    crashed.journal.close()

    async def opening() -> Reopened:
        recorder = await Recorder.open(crashed.journal.path, EventBus(), new_session_id(), crashed.root)
        try:
            workspace = Workspace(crashed.root)
            tracker = ChangeTracker(workspace, crashed.blobs, recorder.external_changes, watch=False)
            await asyncio.to_thread(tracker.index.changes_since)  # what start() does: take the disk as it is

            async def captures(call_id: CallId) -> bool:  # commands find their changes by comparing the disk
                return await recorder.read(JournalReads.call_tool, call_id) == "Bash"

            interrupted = await recorder.runs_interrupted()
            notes = await recovery.recover(recovery.Opening(workspace, recorder, crashed.blobs, tracker, captures),
                                           interrupted)
            return Reopened(notes, {c.call_id: c for c in await recorder.read(JournalReads.calls)},
                            await recorder.read(JournalReads.rollbacks, None),
                            await recorder.read(JournalReads.externals))
        finally:
            await recorder.close()

    return run(opening())


def crashed_mid_undo(crashed: Crashed) -> None:
    """call-1 edited a.txt and b.txt and created c.txt; its undo was journaled as pending, then the crash."""
    crashed.call("call-1", "Write", crashed.change("a.txt", "a before\n", "a by the call\n"),
                 crashed.change("b.txt", "b before\n", "b by the call\n"), crashed.change("c.txt", None, "c\n"))
    crashed.journal.add_rollback("undo-1", "call-1", "call-1", False, [
        (0, crashed.change("a.txt", "a by the call\n", "a before\n")),
        (1, crashed.change("b.txt", "b by the call\n", "b before\n")),
        (2, crashed.change("c.txt", "c\n", None))])


@pytest.mark.allow_warning_logs  # each repair is logged as a warning
def test_an_undo_cut_short_by_a_crash_is_finished_and_counts_as_done(tmp_path: Path) -> None:
    crashed = Crashed(tmp_path)
    crashed_mid_undo(crashed)
    crashed.write({"a.txt": "a before\n", "b.txt": "b by the call\n", "c.txt": "c\n"})  # only a.txt was written back

    reopened = reopen(crashed)

    assert (crashed.read("a.txt"), crashed.read("b.txt"), crashed.read("c.txt")) == ("a before\n", "b before\n", None)
    assert reopened.notes == ["An undo of call-1 was interrupted by a crash and has been finished."]
    [undo] = reopened.rollbacks
    assert undo.state == "done" and len(undo.changes) == 3
    assert reopened.calls["call-1"].undone_by == "undo-1"
    assert reopened.externals == []  # what the undo wrote is Belay's doing, not news


@pytest.mark.allow_warning_logs
def test_a_file_changed_since_the_crash_is_left_alone_and_no_longer_claimed_by_the_undo(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    crashed = Crashed(tmp_path)
    crashed_mid_undo(crashed)
    crashed.write({"a.txt": "a before\n", "b.txt": "b, edited by the person after the crash\n", "c.txt": "c\n"})

    reopened = reopen(crashed)

    assert crashed.read("b.txt") == "b, edited by the person after the crash\n"
    assert (crashed.read("a.txt"), crashed.read("c.txt")) == ("a before\n", None)
    assert "has been finished. Changed since, so left as they are: b.txt." in reopened.notes[0]
    assert [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING] == reopened.notes
    assert [c.path for c in reopened.rollbacks[0].changes] == ["a.txt", "c.txt"]
    record = reopened.calls["call-1"]
    assert sorted(record.undone_paths) == ["a.txt", "c.txt"] and record.undone_by is None  # b.txt can still be undone
    [outside] = reopened.externals  # and the person's edit is theirs
    assert [(c.path, c.after_hash) for c in outside.changes] == [
        ("b.txt", content_hash(b"b, edited by the person after the crash\n"))]


@pytest.mark.allow_warning_logs
def test_a_rename_an_undo_had_not_moved_back_yet_is_moved_back(tmp_path: Path) -> None:
    crashed = Crashed(tmp_path)
    crashed.call("call-1", "Bash", crashed.change("new.txt", "moving\n", "moving\n", kind=ChangeKind.RENAME,
                                                  old_path="old.txt"))
    crashed.journal.add_rollback("undo-1", "call-1", "call-1", False, [
        (0, crashed.change("old.txt", "moving\n", "moving\n", kind=ChangeKind.RENAME, old_path="new.txt"))])
    crashed.write({"new.txt": "moving\n"})

    reopened = reopen(crashed)

    assert (crashed.read("old.txt"), crashed.read("new.txt")) == ("moving\n", None)
    assert reopened.calls["call-1"].undone_by == "undo-1" and reopened.externals == []
    assert len(reopened.notes) == 1


@pytest.mark.allow_warning_logs
def test_what_an_interrupted_command_changed_is_given_to_it_to_be_undone(tmp_path: Path) -> None:
    crashed = Crashed(tmp_path)
    crashed.call("call-1", "Write", crashed.change("a.txt", None, "v1\n"), crashed.change("b.txt", None, "b\n"))
    crashed.call("call-2", "Bash", finished=False)  # the command ran when the console died...
    crashed.call("call-3", "Write", finished=False)  # ...and so did a write, which records its changes first
    crashed.write({"a.txt": "v2 by the command\n", "b.txt": None, "new.txt": "never journaled\n"})

    reopened = reopen(crashed)

    assert reopened.notes == ["Call call-2 was interrupted; the 2 file change(s) it made were recovered and can be "
                              "undone."]
    command = reopened.calls["call-2"]
    assert command.status is RunStatus.INTERRUPTED
    assert [(c.path, c.kind, c.before_hash, c.after_hash) for c in command.changes] == [
        ("a.txt", ChangeKind.MODIFY, content_hash(b"v1\n"), content_hash(b"v2 by the command\n")),
        ("b.txt", ChangeKind.DELETE, content_hash(b"b\n"), None)]  # new.txt: nothing says who made it
    assert reopened.calls["call-3"].changes == () and reopened.externals == []


@pytest.mark.allow_warning_logs
def test_edits_made_while_belay_was_not_running_are_recorded_as_outside_changes(tmp_path: Path) -> None:
    crashed = Crashed(tmp_path)
    crashed.call("call-1", "Write", crashed.change("a.txt", None, "by the agent\n"))
    crashed.call("call-2", "Write", finished=False)  # interrupted, but a write's changes are never found on disk
    crashed.write({"a.txt": "by the person, in their editor\n"})

    reopened = reopen(crashed)

    assert reopened.notes == ["1 file(s) changed while Belay was not running; they are recorded as changes made "
                              "outside Belay."]
    [outside] = reopened.externals
    assert outside.note == "while Belay was not running"
    assert [(c.path, c.before_hash, c.after_hash) for c in outside.changes] == [
        ("a.txt", content_hash(b"by the agent\n"), content_hash(b"by the person, in their editor\n"))]
    assert reopened.calls["call-2"].changes == ()


def test_opening_a_workspace_that_matches_its_journal_repairs_nothing(tmp_path: Path) -> None:
    crashed = Crashed(tmp_path)
    crashed.call("call-1", "Bash", crashed.change("a.txt", None, "by the agent\n"))
    crashed.write({"a.txt": "by the agent\n"})

    reopened = reopen(crashed)

    assert reopened.notes == [] and reopened.externals == [] and reopened.rollbacks == []
