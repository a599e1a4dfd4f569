"""Journal records: which statuses are final, which changes an undo can restore, and a call's JSON round trip."""

from __future__ import annotations

from datetime import datetime, timezone

from core.errors import ErrorInfo, ErrorKind
from core.models.records import CallRecord, ChangeKind, FileChange, GitChange, RunStatus


def test_only_queued_waiting_and_running_calls_are_unfinished() -> None:
    unfinished = {s for s in RunStatus if not s.final}
    assert unfinished == {RunStatus.QUEUED, RunStatus.BLOCKED_ON_USER, RunStatus.RUNNING}
    assert RunStatus("skipped").final and RunStatus("interrupted").final


def test_a_created_file_can_be_undone_by_deleting_it_but_a_modification_needs_its_old_content() -> None:
    created = FileChange(path="new.txt", kind=ChangeKind.CREATE, before_hash=None, after_hash="h1")
    modified = FileChange(path="a.txt", kind=ChangeKind.MODIFY, before_hash="h0", after_hash="h1")
    unknown_before = FileChange(path="a.txt", kind=ChangeKind.MODIFY, before_hash=None, after_hash="h1")
    deleted = FileChange(path="gone.txt", kind=ChangeKind.DELETE, before_hash="h0", after_hash=None)
    assert created.restorable and modified.restorable and deleted.restorable
    assert not unknown_before.restorable


def test_a_change_to_an_ignored_path_is_never_restorable() -> None:
    for kind, before in ((ChangeKind.CREATE, None), (ChangeKind.MODIFY, "h0"), (ChangeKind.DELETE, "h0")):
        change = FileChange(path="build/out.o", kind=kind, before_hash=before, after_hash=None, stored=False)
        assert not change.restorable, kind


def test_a_call_record_round_trips_through_json_with_its_changes_and_error() -> None:
    at = datetime(2026, 11, 22, 12, 0, tzinfo=timezone.utc)
    record = CallRecord(
        call_id="call_1", session_id="ses_1", agent_id="agt_1", agent_name="main", tool="Bash",
        summary="git commit", args={"command": "git commit -m x"}, status=RunStatus.FAILED, created_at=at,
        duration_s=0.25, error=ErrorInfo(kind=ErrorKind.TIMEOUT, message="took too long"),
        changes=(FileChange(path="b.txt", kind=ChangeKind.RENAME, before_hash="h", after_hash="h",
                            old_path="a.txt", before_mode=0o644, after_mode=0o755),),
        git_changes=(GitChange(ref="refs/heads/main", kind="commit", before="1a2b", after="3c4d",
                               what="commit 3c4d on main: x"),),
        started_at=at)
    again = CallRecord.model_validate_json(record.model_dump_json())
    assert again == record
    assert again.status is RunStatus.FAILED and again.created_at == at
    assert again.error is not None and again.error.recoverable
