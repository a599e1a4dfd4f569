"""The workspace index: a command's file changes found by comparing before and after."""

from __future__ import annotations

import os
from pathlib import Path

from core.blobs import BlobStore
from core.models import ChangeKind
from core.paths import Workspace
from core.snapshot import WorkspaceIndex


def _index(tmp_path: Path) -> tuple[Path, WorkspaceIndex]:
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "a.py").write_text("a = 1\n")
    (ws / "keep.txt").write_text("keep\n")
    (ws / ".git" / "objects").mkdir(parents=True)
    (ws / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    return ws, WorkspaceIndex(Workspace(ws), BlobStore(tmp_path / "blobs"))


def test_the_first_look_takes_the_workspace_as_it_is(tmp_path: Path) -> None:
    ws, index = _index(tmp_path)
    assert index.changes_since() == []
    assert sorted(index.entries) == ["keep.txt", "src/a.py"]  # .git is git's, not ours to restore


def test_creates_modifies_deletes_and_mode_changes_carry_what_undo_needs(tmp_path: Path) -> None:
    ws, index = _index(tmp_path)
    index.changes_since()
    before = index.entries["src/a.py"].digest
    (ws / "src" / "a.py").write_text("a = 2\n")
    (ws / "new.bin").write_bytes(b"\0\1\2")
    (ws / "keep.txt").unlink()
    (ws / "src" / "run.sh").write_text("echo\n")
    assert [(c.path, c.kind) for c in index.changes_since()] == [
        ("keep.txt", ChangeKind.DELETE), ("new.bin", ChangeKind.CREATE), ("src/a.py", ChangeKind.MODIFY),
        ("src/run.sh", ChangeKind.CREATE)]
    os.chmod(ws / "src" / "run.sh", 0o755)
    (ws / ".git" / "HEAD").write_text("ref: refs/heads/other\n")
    mode_change = index.changes_since()
    assert [(c.path, c.kind, c.before_mode, c.after_mode) for c in mode_change] == [
        ("src/run.sh", ChangeKind.MODIFY, 0o644, 0o755)]
    (ws / "src" / "a.py").write_text("a = 3\n")
    [change] = index.changes_since()
    assert change.kind == ChangeKind.MODIFY and change.before_hash != before
    assert index.blobs.get(change.before_hash) == b"a = 2\n" and index.blobs.get(change.after_hash) == b"a = 3\n"


def test_a_second_look_with_nothing_changed_finds_nothing(tmp_path: Path) -> None:
    ws, index = _index(tmp_path)
    index.changes_since()
    os.utime(ws / "keep.txt")  # touched but not changed: no change to undo
    assert index.changes_since() == []


def test_links_are_not_followed_out_of_the_workspace(tmp_path: Path) -> None:
    ws, index = _index(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret").write_text("s")
    index.changes_since()
    (ws / "out").symlink_to(outside)
    assert index.changes_since() == []
    assert "out/secret" not in index.entries
