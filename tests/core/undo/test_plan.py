"""Tests for core.undo.plan: what undoing each file needs, given what it holds now, and writing them all or none."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from core.errors import BelayError, ErrorKind, UndoConflict
from core.models.records import ChangeKind, FileChange
from core.paths import Workspace
from core.store.blobs import BlobStore, content_hash
from core.undo.plan import ABSENT, Applied, apply_undo, look, plan_undo
from core.undo.report import Resolution

LINES = "".join(f"line {i}\n" for i in range(1, 21))


def _with(**lines: str) -> str:
    """LINES with some lines replaced, e.g. `_with(l2="two")`."""
    out = LINES.splitlines(keepends=True)
    for key, text in lines.items():
        out[int(key[1:]) - 1] = text + "\n"
    return "".join(out)


class Scene:
    """A workspace, its blob store, and the changes one call made to it, as the journal would hold them."""

    def __init__(self, tmp_path: Path) -> None:
        (tmp_path / "ws").mkdir()
        self.root = tmp_path / "ws"
        self.ws = Workspace(self.root)
        self.blobs = BlobStore(tmp_path / "blobs")
        self.changes: list[tuple[int, FileChange]] = []
        self.journaled: list[list[tuple[int, FileChange]]] = []
        """What each applied undo handed over to be journaled (as pending) before it wrote anything."""

    def changed(self, path: str, before: str | bytes | None, after: str | bytes | None, now: str | bytes | None,
                **extra: object) -> None:
        """The call took `path` from `before` to `after`; since then it came to hold `now` (None: absent)."""
        kind = ChangeKind.CREATE if before is None else ChangeKind.DELETE if after is None else ChangeKind.MODIFY
        fields: dict[str, object] = {"path": path, "kind": kind, "before_hash": self._put(before),
                                     "after_hash": self._put(after), **extra}
        self.changes.append((len(self.changes), FileChange.model_validate(fields)))
        if now is not None:
            self.write(path, now)

    def write(self, path: str, content: str | bytes) -> None:
        target = self.root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content.encode() if isinstance(content, str) else content)

    def read(self, path: str) -> str:
        return (self.root / path).read_text()

    def undo(self, resolutions: dict[str, Resolution] | None = None, *, force: bool = False,
             changes: list[tuple[int, FileChange]] | None = None) -> Applied:
        """Plan and apply the undo of the call (or of `changes`)."""
        plan = plan_undo(self.ws, self.blobs, "call-1", self.changes if changes is None else changes)
        return apply_undo(self.ws, self.blobs, plan, resolutions or {}, force, self.journaled.append)

    def _put(self, content: str | bytes | None) -> str | None:
        if content is None:
            return None
        return self.blobs.put(content.encode() if isinstance(content, str) else content)


def test_each_file_is_planned_by_what_it_holds_now(tmp_path: Path) -> None:
    scene = Scene(tmp_path)
    scene.changed("restore.txt", "before\n", "after\n", now="after\n")
    scene.changed("already.txt", "before\n", "after\n", now="before\n")
    scene.changed("merged.txt", LINES, _with(l2="the call"), now=_with(l2="the call", l19="the person"))
    scene.changed("overlap.txt", LINES, _with(l5="the call"), now=_with(l5="the person"))
    scene.changed("binary.bin", b"\x00\x01", b"\x00\x02", now=b"\x00\x03")
    scene.changed("deleted.txt", "before\n", "after\n", now=None)
    scene.changed("recreated.txt", "before\n", None, now="made again\n")
    scene.changed("folder", "before\n", "after\n", now=None)
    (scene.root / "folder").mkdir()
    scene.changed("build.log", None, None, now="log\n", kind=ChangeKind.MODIFY, stored=False)
    scene.changed("lost.txt", None, "after\n", now="after\n", kind=ChangeKind.MODIFY,
                  before_hash=content_hash(b"never stored\n"))

    plan = plan_undo(scene.ws, scene.blobs, "call-1", scene.changes)

    assert [f.seq for f in plan.files] == list(range(len(scene.changes) - 1, -1, -1))  # newest change first
    seen = {f.change.path: (f.action, f.reason) for f in plan.files}
    assert {path: action for path, (action, _) in seen.items()} == {
        "restore.txt": "restore", "already.txt": "already", "merged.txt": "merged", "overlap.txt": "conflict",
        "binary.bin": "conflict", "deleted.txt": "conflict", "recreated.txt": "conflict", "folder": "conflict",
        "build.log": "unrestorable", "lost.txt": "unrestorable"}
    assert "later edits are kept" in seen["merged.txt"][1]
    assert "overlap" in seen["overlap.txt"][1]
    assert "not text" in seen["binary.bin"][1]
    assert "deleted after this call" in seen["deleted.txt"][1]
    assert "created again" in seen["recreated.txt"][1]
    assert "a directory" in seen["folder"][1]
    assert "not kept" in seen["build.log"][1] and "missing from the blob store" in seen["lost.txt"][1]
    [merged] = [f for f in plan.files if f.action == "merged"]
    assert merged.merged == _with(l19="the person").encode()  # the call's edit gone, the person's kept
    assert [f.change.path for f in plan.conflicts] == ["folder", "recreated.txt", "deleted.txt", "binary.bin",
                                                       "overlap.txt"]


def test_a_conflict_nobody_resolved_refuses_the_undo_and_writes_nothing_until_forced(tmp_path: Path) -> None:
    scene = Scene(tmp_path)
    scene.changed("restore.txt", "before\n", "after\n", now="after\n")
    scene.changed("merged.txt", LINES, _with(l2="the call"), now=_with(l2="the call", l19="the person"))
    scene.changed("overlap.txt", LINES, _with(l5="the call"), now=_with(l5="the person"))

    with pytest.raises(UndoConflict) as refused:
        scene.undo()

    assert refused.value.paths == ["overlap.txt"] and scene.journaled == []
    assert scene.read("restore.txt") == "after\n"
    assert scene.read("merged.txt") == _with(l2="the call", l19="the person")
    assert scene.read("overlap.txt") == _with(l5="the person")

    scene.undo(force=True)  # forcing overwrites the conflict; a clean merge still keeps the later edit
    assert (scene.read("restore.txt"), scene.read("overlap.txt")) == ("before\n", LINES)
    assert scene.read("merged.txt") == _with(l19="the person")


def test_resolved_conflicts_are_written_as_chosen_and_the_undo_can_itself_be_undone(tmp_path: Path) -> None:
    scene = Scene(tmp_path)
    scene.changed("restore.txt", "before\n", "after\n", now="after\n")
    scene.changed("merged.txt", LINES, _with(l2="the call"), now=_with(l2="the call", l19="the person"))
    scene.changed("mine.txt", LINES, _with(l5="the call"), now=_with(l5="the person"))
    scene.changed("skipped.txt", "before\n", "after\n", now="the person's\n")
    scene.changed("overwritten.txt", "before\n", "after\n", now="the person's\n")
    scene.changed("created.txt", None, "made by the call\n", now="made by the call\n")
    scene.changed("already.txt", "before\n", "after\n", now="before\n")
    scene.changed("build.log", None, None, now="log\n", kind=ChangeKind.MODIFY, stored=False)
    on_disk_before_the_undo = {p.name: p.read_text() for p in scene.root.iterdir()}

    applied = scene.undo({
        "mine.txt": Resolution(action="merge", content="settled by the person\n"),
        "skipped.txt": Resolution(action="skip"),
        "overwritten.txt": Resolution(action="overwrite")})

    assert (scene.read("restore.txt"), scene.read("overwritten.txt"), scene.read("already.txt")) == ("before\n",) * 3
    assert scene.read("merged.txt") == _with(l19="the person")
    assert scene.read("mine.txt") == "settled by the person\n"
    assert scene.read("skipped.txt") == "the person's\n" and scene.read("build.log") == "log\n"
    assert not (scene.root / "created.txt").exists()
    assert set(applied.written) == {"restore.txt", "merged.txt", "mine.txt", "overwritten.txt", "created.txt"}
    assert (set(applied.merged), applied.skipped) == ({"merged.txt", "mine.txt"}, ("skipped.txt",))
    assert (applied.unrestorable, applied.already) == (("build.log",), ("already.txt",))

    [own] = scene.journaled  # journaled once, before the writes: what the undo did, file by file
    assert sorted(seq for seq, _ in own) == [0, 1, 2, 4, 5, 6]  # skipped and unrestorable are not undone
    scene.undo(changes=[(i, change) for i, (_, change) in enumerate(own)])  # what a redo does
    assert {p.name: p.read_text() for p in scene.root.iterdir()} == on_disk_before_the_undo


def test_a_write_that_fails_after_the_undo_was_journaled_leaves_every_file_as_it_was(tmp_path: Path) -> None:
    scene = Scene(tmp_path)
    scene.changed("restore.txt", "before\n", "after\n", now="after\n")
    scene.changed("sub/x.txt", "deleted by the call\n", None, now=None)
    scene.write("sub", "a file now stands where its directory was\n")

    with pytest.raises(BelayError) as failed:
        scene.undo()

    assert "sub" in failed.value.info.message
    assert len(scene.journaled) == 1  # recorded as pending first: the caller marks it failed
    assert scene.read("restore.txt") == "after\n"
    assert scene.read("sub") == "a file now stands where its directory was\n"


def test_a_rename_is_moved_back_and_modes_and_links_are_restored(tmp_path: Path) -> None:
    scene = Scene(tmp_path)
    scene.changed("new.txt", "moving\n", "moving\n", now="moving\n", kind=ChangeKind.RENAME, old_path="old.txt")
    scene.changed("run.sh", "echo hi\n", "echo hi\n", now="echo hi\n", kind=ChangeKind.MODE,
                  before_mode=0o755, after_mode=0o600)
    os.chmod(scene.root / "run.sh", 0o600)
    scene.changed("link", "data.bin", "run.sh", now=None, before_link=True, after_link=True)
    os.symlink("run.sh", scene.root / "link")

    plan = plan_undo(scene.ws, scene.blobs, "call-1", scene.changes)
    assert [f.action for f in plan.files] == ["restore"] * 3
    scene.undo()

    assert scene.read("old.txt") == "moving\n" and not (scene.root / "new.txt").exists()
    assert scene.read("run.sh") == "echo hi\n" and os.stat(scene.root / "run.sh").st_mode & 0o777 == 0o755
    assert os.readlink(scene.root / "link") == "data.bin"


def test_a_rename_whose_first_name_is_taken_again_can_be_moved_back_or_skipped_but_not_merged(tmp_path: Path) -> None:
    scene = Scene(tmp_path)
    scene.changed("new.txt", "moving\n", "moving\n", now="moving\n", kind=ChangeKind.RENAME, old_path="old.txt")
    scene.write("old.txt", "a new file under the old name\n")

    [step] = plan_undo(scene.ws, scene.blobs, "call-1", scene.changes).files
    assert step.action == "conflict" and "old.txt exists again" in step.reason
    with pytest.raises(BelayError) as refused:
        scene.undo({"new.txt": Resolution(action="merge", content="merged\n")})
    assert refused.value.info.kind is ErrorKind.INVALID_ARGS and "not merged" in refused.value.info.message
    assert scene.read("old.txt") == "a new file under the old name\n" and scene.read("new.txt") == "moving\n"

    scene.undo({"new.txt": Resolution(action="overwrite")})
    assert scene.read("old.txt") == "moving\n" and not (scene.root / "new.txt").exists()


def test_look_sees_a_link_without_following_it_and_a_directory_as_neither_file_nor_link(tmp_path: Path) -> None:
    scene = Scene(tmp_path)
    scene.write("data.txt", "data.txt")
    os.chmod(scene.root / "data.txt", 0o640)
    os.symlink("data.txt", scene.root / "link")
    (scene.root / "dir").mkdir()

    file, link, folder = look(scene.ws, "data.txt"), look(scene.ws, "link"), look(scene.ws, "dir")

    digest = content_hash(b"data.txt")  # the file's content is the link's target text: same hash, not the same
    assert (file.data, file.digest, file.mode, file.link) == (b"data.txt", digest, 0o640, False)
    assert (link.data, link.digest, link.link) == (b"data.txt", digest, True)
    assert file.holds(digest, link=False) and not file.holds(digest, link=True)
    assert link.holds(digest, link=True) and not link.holds(digest, link=False)
    assert not file.holds(digest, link=False, mode=0o644)
    assert folder.exists and folder.other == "a directory" and not folder.holds(digest, link=False)
    assert look(scene.ws, "missing.txt") == ABSENT and look(scene.ws, "data.txt/below") == ABSENT
    assert ABSENT.holds(None, link=False) and not file.holds(None, link=False)
