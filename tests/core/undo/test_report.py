"""Tests for core.undo.report: the preview, resolutions and report of an undo, as the window and terminal read them."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from core.errors import BelayError
from core.models.records import ChangeKind, FileChange
from core.paths import Workspace
from core.store.blobs import BlobStore
from core.undo.plan import apply_undo, plan_undo, preview_of
from core.undo.report import Resolution, UndoPreview, UndoReport


class Call:
    """A workspace and the changes one call made to it (the journal's view), to preview and undo."""

    def __init__(self, tmp_path: Path) -> None:
        self.root = tmp_path / "ws"
        self.root.mkdir()
        self.ws = Workspace(self.root)
        self.blobs = BlobStore(tmp_path / "blobs")
        self.changes: list[tuple[int, FileChange]] = []

    def changed(self, path: str, before: bytes | None, after: bytes | None, now: bytes | None,
                kind: ChangeKind | None = None, old_path: str | None = None) -> None:
        kind = kind or (ChangeKind.CREATE if before is None else ChangeKind.DELETE if after is None else
                        ChangeKind.MODIFY)
        self.changes.append((len(self.changes), FileChange(
            path=path, kind=kind, old_path=old_path, before_hash=self.blobs.put(before) if before is not None else None,
            after_hash=self.blobs.put(after) if after is not None else None)))
        if now is not None:
            (self.root / path).write_bytes(now)

    def preview(self, redo: bool = False) -> UndoPreview:
        return preview_of(plan_undo(self.ws, self.blobs, "op-1", self.changes), self.blobs, "call-1", redo)

    def undo(self, resolutions: dict[str, Resolution]) -> None:
        plan = plan_undo(self.ws, self.blobs, "op-1", self.changes)
        apply_undo(self.ws, self.blobs, plan, resolutions, False, lambda own: None)


def test_a_preview_lists_every_file_newest_first_and_only_the_conflicts_as_conflicts(tmp_path: Path) -> None:
    call = Call(tmp_path)
    call.changed("first.txt", b"a\n", b"b\n", now=b"edited later\n")
    call.changed("second.txt", b"a\n", b"b\n", now=b"b\n")
    call.changed("third.txt", b"a\n", b"b\n", now=b"edited later too\n")
    call.changed("fourth.txt", b"a\n", b"b\n", now=b"a\n")

    preview = call.preview(redo=True)

    assert (preview.op_id, preview.call_id, preview.redo) == ("op-1", "call-1", True)
    assert [(f.path, f.action) for f in preview.files] == [
        ("fourth.txt", "already"), ("third.txt", "conflict"), ("second.txt", "restore"), ("first.txt", "conflict")]
    assert [f.path for f in preview.conflicts] == ["third.txt", "first.txt"]
    assert all(f.reason for f in preview.conflicts)


def test_a_binary_version_shows_no_text_and_marks_the_file_binary_but_an_absent_one_does_not(
        tmp_path: Path) -> None:
    call = Call(tmp_path)
    call.changed("image.png", b"\x89PNG\x00\x01", b"\x89PNG\x00\x02", now=b"\x89PNG\x00\x03")
    call.changed("latin1.txt", b"caf\xe9\n", b"cafe\n", now=b"cafe\n")
    call.changed("created.txt", None, b"made by the call\n", now=b"made by the call, then edited\n")

    files = {f.path: f for f in call.preview().files}

    png, latin1, created = files["image.png"], files["latin1.txt"], files["created.txt"]
    assert png.binary and (png.now, png.after_call, png.before_call) == (None, None, None)
    assert latin1.binary and latin1.before_call is None and latin1.now == "cafe\n"  # not UTF-8: no text to show
    assert not created.binary and created.before_call is None  # nothing before the call is not a binary version
    assert (created.now, created.after_call) == ("made by the call, then edited\n", "made by the call\n")


def test_a_renamed_file_is_previewed_with_the_path_it_goes_back_to(tmp_path: Path) -> None:
    call = Call(tmp_path)
    call.changed("new.txt", b"moving\n", b"moving\n", now=b"moving\n", kind=ChangeKind.RENAME, old_path="old.txt")
    call.changed("plain.txt", b"a\n", b"b\n", now=b"b\n")

    files = {f.path: f for f in call.preview().files}

    assert (files["new.txt"].old_path, files["new.txt"].action) == ("old.txt", "restore")
    assert files["plain.txt"].old_path is None


def test_the_digest_a_preview_shows_is_what_a_resolution_must_carry_back(tmp_path: Path) -> None:
    call = Call(tmp_path)
    call.changed("kept.txt", b"before\n", b"after\n", now=b"edited later\n")
    call.changed("deleted.txt", b"before\n", b"after\n", now=None)  # deleted by the person after the call
    seen = {f.path: f.now_digest or "" for f in call.preview().conflicts}
    assert seen["deleted.txt"] == "" and seen["kept.txt"] != ""

    (call.root / "kept.txt").write_bytes(b"edited again after the preview\n")
    with pytest.raises(BelayError, match="changed again"):
        call.undo({path: Resolution(action="overwrite", seen_digest=d) for path, d in seen.items()})
    assert not (call.root / "deleted.txt").exists()

    seen = {f.path: f.now_digest or "" for f in call.preview().conflicts}
    call.undo({path: Resolution(action="overwrite", seen_digest=d) for path, d in seen.items()})
    assert (call.root / "kept.txt").read_bytes() == (call.root / "deleted.txt").read_bytes() == b"before\n"


def test_a_resolution_is_one_of_three_choices_and_a_report_cannot_be_altered_once_made() -> None:
    with pytest.raises(ValidationError, match="overwrite"):
        Resolution(action="keep")  # type: ignore[arg-type]
    report = UndoReport(call_id="call-1", ok=False, message="notes.txt changed after this call",
                        conflicts=("notes.txt",))
    with pytest.raises(ValidationError):
        report.ok = True  # type: ignore[misc]
