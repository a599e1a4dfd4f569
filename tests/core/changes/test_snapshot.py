"""The workspace index: a command's file changes found by comparing before and after."""

from __future__ import annotations

import os
from pathlib import Path

from core.changes.snapshot import WorkspaceIndex
from core.models.records import ChangeKind
from core.paths import Workspace
from core.store.blobs import BlobStore


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
        ("src/run.sh", ChangeKind.MODE, 0o644, 0o755)]
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
    [link] = index.changes_since()
    assert (link.path, link.kind, link.after_link) == ("out", ChangeKind.CREATE, True)
    assert index.blobs.get(link.after_hash or "") == os.fsencode(str(outside))  # the link itself, not its target
    assert "out/secret" not in index.entries


def test_a_moved_file_is_one_rename_not_a_delete_and_a_create(tmp_path: Path) -> None:
    ws, index = _index(tmp_path)
    index.changes_since()
    os.rename(ws / "src" / "a.py", ws / "moved.py")
    [change] = index.changes_since()
    assert (change.kind, change.old_path, change.path) == (ChangeKind.RENAME, "src/a.py", "moved.py")
    assert index.blobs.get(change.before_hash or "") == b"a = 1\n"


def test_ignored_paths_are_reported_but_not_stored(tmp_path: Path) -> None:
    ws, index = _index(tmp_path)
    (ws / ".gitignore").write_text("node_modules/\n*.log\n")
    index = WorkspaceIndex(Workspace(ws), index.blobs)
    index.changes_since()
    (ws / "node_modules" / "pkg").mkdir(parents=True)
    (ws / "node_modules" / "pkg" / "index.js").write_text("module.exports = 1\n")
    (ws / "run.log").write_text("log\n")
    changes = {c.path: c for c in index.changes_since()}
    assert set(changes) == {"node_modules/pkg/index.js", "run.log"}
    assert all(not c.stored and c.after_hash is None and not c.restorable for c in changes.values())
    (ws / "run.log").write_text("more log\n")
    [modified] = index.changes_since()
    assert (modified.path, modified.kind, modified.stored) == ("run.log", ChangeKind.MODIFY, False)


def test_a_dirty_scope_looks_only_there_yet_sees_deleted_directories(tmp_path: Path) -> None:
    ws, index = _index(tmp_path)
    index.changes_since()
    (ws / "keep.txt").write_text("changed\n")  # not in the scope below: not looked at
    (ws / "src" / "a.py").unlink()
    (ws / "src").rmdir()
    assert [(c.path, c.kind) for c in index.changes_since(["src"])] == [("src/a.py", ChangeKind.DELETE)]
    assert [c.path for c in index.changes_since(["keep.txt"])] == ["keep.txt"]


def test_a_dirty_file_is_read_again_even_when_its_stat_looks_unchanged(tmp_path: Path) -> None:
    ws, index = _index(tmp_path)
    index.changes_since()
    target = ws / "keep.txt"
    st = target.stat()
    target.write_text("KEEP\n")  # same size
    os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert index.changes_since(["keep.txt"])[0].kind == ChangeKind.MODIFY


def test_belays_own_writes_are_taken_in_and_anything_else_is_a_surprise(tmp_path: Path) -> None:
    ws, index = _index(tmp_path)
    index.changes_since()
    (ws / "keep.txt").write_text("written by Belay\n")
    digest = index.blobs.put(b"written by Belay\n")
    assert index.expect({"keep.txt": digest}) == []
    (ws / "keep.txt").write_text("the editor got there too\n")
    [surprise] = index.expect({"keep.txt": digest})
    assert surprise.before_hash == digest and surprise.path == "keep.txt"
