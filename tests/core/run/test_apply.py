"""Applying a write plan: contents stored and journaled first, then written; a file changed meanwhile stops it all."""

from __future__ import annotations

import stat
from collections.abc import Sequence
from pathlib import Path

import pytest

from core.errors import ErrorKind, ToolError
from core.models.records import ChangeKind, FileChange
from core.paths import Workspace
from core.run.apply import apply_plan, current_hash, replace_contents
from core.store.blobs import BlobStore, content_hash
from core.tools.base import FileWrite, WritePlan


def _setup(tmp_path: Path) -> tuple[Workspace, BlobStore]:
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "src" / "a.py").write_bytes(b"a = 1\n")
    (root / "old.txt").write_bytes(b"obsolete\n")
    (root / "old.txt").chmod(0o600)
    return Workspace(root), BlobStore(tmp_path / "blobs")


def _plan(ws: Workspace) -> WritePlan:
    return WritePlan(writes=(
        FileWrite(ws.root / "src" / "a.py", b"a = 1\n", b"a = 2\n"),
        FileWrite(ws.root / "new" / "tool.sh", None, b"#!/bin/sh\n", mode=0o755),
        FileWrite(ws.root / "old.txt", b"obsolete\n", None),
    ), message="3 files")


def test_changes_are_stored_and_journaled_before_any_file_is_written(tmp_path: Path) -> None:
    ws, blobs = _setup(tmp_path)
    journaled: list[FileChange] = []

    def record(changes: Sequence[FileChange]) -> None:
        assert (ws.root / "src" / "a.py").read_bytes() == b"a = 1\n" and (ws.root / "old.txt").exists()
        assert not (ws.root / "new").exists()
        for change in changes:  # what undo needs is already durable
            for digest in (change.before_hash, change.after_hash):
                assert digest is None or blobs.has(digest)
        journaled.extend(changes)

    applied = apply_plan(ws, blobs, _plan(ws), record)
    assert list(applied.changes) == journaled
    modify, create, delete = journaled
    assert (modify.path, modify.kind, blobs.get(modify.before_hash or ""), blobs.get(modify.after_hash or "")) == (
        "src/a.py", ChangeKind.MODIFY, b"a = 1\n", b"a = 2\n")
    assert (create.path, create.kind, create.before_hash, create.after_mode) == (
        "new/tool.sh", ChangeKind.CREATE, None, 0o755)
    assert (delete.path, delete.kind, delete.after_hash, delete.before_mode) == (
        "old.txt", ChangeKind.DELETE, None, 0o600)
    assert (ws.root / "src" / "a.py").read_bytes() == b"a = 2\n" and not (ws.root / "old.txt").exists()
    assert stat.S_IMODE((ws.root / "new" / "tool.sh").stat().st_mode) == 0o755


@pytest.mark.parametrize("meddle", ["edit", "create", "delete"])
def test_a_file_changed_after_planning_stops_the_whole_plan_before_anything_is_recorded(
        tmp_path: Path, meddle: str) -> None:
    ws, blobs = _setup(tmp_path)
    plan = _plan(ws)
    if meddle == "edit":
        (ws.root / "old.txt").write_bytes(b"edited by the person\n")
    elif meddle == "create":
        (ws.root / "new").mkdir()
        (ws.root / "new" / "tool.sh").write_bytes(b"someone else's\n")
    else:
        (ws.root / "old.txt").unlink()
    recorded: list[Sequence[FileChange]] = []
    with pytest.raises(ToolError) as caught:
        apply_plan(ws, blobs, plan, recorded.append)
    assert caught.value.kind is ErrorKind.CONFLICT and "nothing was written" in caught.value.info.message
    assert recorded == [] and (ws.root / "src" / "a.py").read_bytes() == b"a = 1\n"


def test_when_journaling_fails_no_file_is_written(tmp_path: Path) -> None:
    ws, blobs = _setup(tmp_path)

    def record(changes: Sequence[FileChange]) -> None:
        raise OSError("database is locked")

    with pytest.raises(OSError, match="database is locked"):
        apply_plan(ws, blobs, _plan(ws), record)
    assert (ws.root / "src" / "a.py").read_bytes() == b"a = 1\n" and (ws.root / "old.txt").exists()
    assert not (ws.root / "new").exists()


def test_a_persons_edited_content_replaces_the_agents_for_the_files_they_edited(tmp_path: Path) -> None:
    ws, blobs = _setup(tmp_path)
    plan = replace_contents(_plan(ws), {"src/a.py": b"a = 3  # reviewed\n"}, ws)
    assert plan.message == "3 files" and plan.writes[1:] == _plan(ws).writes[1:]
    [modify, *_] = apply_plan(ws, blobs, plan, lambda changes: None).changes
    assert (ws.root / "src" / "a.py").read_bytes() == b"a = 3  # reviewed\n"
    assert blobs.get(modify.after_hash or "") == b"a = 3  # reviewed\n"


def test_current_hash_is_the_content_hash_now_or_none_for_a_missing_file(tmp_path: Path) -> None:
    ws, _ = _setup(tmp_path)
    assert current_hash(ws, "src/a.py") == content_hash(b"a = 1\n")
    (ws.root / "src" / "a.py").write_bytes(b"changed\n")
    assert current_hash(ws, "src/a.py") == content_hash(b"changed\n")
    assert current_hash(ws, "src/missing.py") is None
