"""Tests for core.store.restore: every file of an undo written, or none, with links and modes as recorded."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from core.errors import BelayError
from core.paths import Workspace
from core.store.restore import ONE_SYNC_FROM, Chmod, Put, Remove, apply_all


def _mode(path: Path) -> int:
    return os.lstat(path).st_mode & 0o7777


def _leftovers(root: Path) -> list[str]:
    """Staged files (hidden, named `.<target>.belay-<hex>.tmp`) that were left lying around."""
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if ".belay-" in p.name)


def test_files_links_and_modes_come_out_as_recorded(tmp_path: Path) -> None:
    (tmp_path / "edited.txt").write_text("the call's version\n")
    (tmp_path / "run.sh").write_text("echo hi\n")
    os.chmod(tmp_path / "run.sh", 0o600)
    (tmp_path / "created.txt").write_text("made by the call\n")
    os.symlink("elsewhere", tmp_path / "link")

    apply_all(Workspace(tmp_path), [
        Put("edited.txt", b"the earlier version\n", 0o640),
        Put("tool", b"#!/bin/sh\n", 0o750),
        Put("link", b"target.txt", link=True),
        Put("deep/new/dirs/f.txt", b"restored under directories that were gone\n"),
        Chmod("run.sh", 0o755),
        Remove("created.txt"),
    ], [None] * 6)

    assert (tmp_path / "edited.txt").read_text() == "the earlier version\n" and _mode(tmp_path / "edited.txt") == 0o640
    assert (tmp_path / "tool").read_text() == "#!/bin/sh\n" and _mode(tmp_path / "tool") == 0o750
    assert os.readlink(tmp_path / "link") == "target.txt"  # a link again, pointing where it did
    assert (tmp_path / "deep" / "new" / "dirs" / "f.txt").read_text() == "restored under directories that were gone\n"
    assert (tmp_path / "run.sh").read_text() == "echo hi\n" and _mode(tmp_path / "run.sh") == 0o755
    assert not (tmp_path / "created.txt").exists()
    assert _leftovers(tmp_path) == []


def test_a_file_restored_over_a_symlink_replaces_the_link_and_leaves_its_target_alone(tmp_path: Path) -> None:
    (tmp_path / "target.txt").write_text("someone else's file\n")
    os.symlink("target.txt", tmp_path / "config")

    apply_all(Workspace(tmp_path), [Put("config", b"the config as it was\n", 0o644)], [None])

    assert not (tmp_path / "config").is_symlink()
    assert (tmp_path / "config").read_text() == "the config as it was\n"
    assert (tmp_path / "target.txt").read_text() == "someone else's file\n"


def test_a_file_that_cannot_be_staged_leaves_every_file_as_it_was(tmp_path: Path) -> None:
    names = [f"f{i:02}.txt" for i in range(ONE_SYNC_FROM + 2)]  # enough to stage with one sync for all
    for name in names:
        (tmp_path / name).write_text("the later version\n")
    (tmp_path / "plain").write_text("a file, where the last write needs a directory\n")
    ops = [Put(name, b"the earlier version\n") for name in names]
    ops += [Put("made/for/it.txt", b"x\n"), Remove(names[0]), Put("plain/inside.txt", b"cannot exist\n")]

    with pytest.raises(BelayError) as raised:
        apply_all(Workspace(tmp_path), ops, [None] * len(ops))

    assert "plain" in raised.value.info.message
    assert all((tmp_path / name).read_text() == "the later version\n" for name in names)
    assert not (tmp_path / "made").exists()  # directories made for staging are removed again
    assert (tmp_path / "plain").read_text() == "a file, where the last write needs a directory\n"
    assert _leftovers(tmp_path) == []


def test_a_failure_half_way_through_the_renames_puts_back_the_files_already_replaced(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("now\n")
    (tmp_path / "run.sh").write_text("echo hi\n")
    os.chmod(tmp_path / "run.sh", 0o600)
    (tmp_path / "gone.txt").write_text("made by the call\n")
    os.chmod(tmp_path / "gone.txt", 0o640)
    (tmp_path / "report").mkdir()  # a directory appeared where the last file goes: its rename fails
    (tmp_path / "report" / "page.html").write_text("<p>kept</p>\n")
    ops = [Put("a.txt", b"before\n"), Chmod("run.sh", 0o755), Remove("gone.txt"), Put("report", b"report\n")]
    inverse = [Put("a.txt", b"now\n"), Chmod("run.sh", 0o600), Put("gone.txt", b"made by the call\n", 0o640), None]

    with pytest.raises(BelayError) as raised:
        apply_all(Workspace(tmp_path), ops, inverse)

    assert "report" in raised.value.info.message and "put back" in raised.value.info.message
    assert (tmp_path / "a.txt").read_text() == "now\n"
    assert _mode(tmp_path / "run.sh") == 0o600
    assert (tmp_path / "gone.txt").read_text() == "made by the call\n" and _mode(tmp_path / "gone.txt") == 0o640
    assert (tmp_path / "report" / "page.html").read_text() == "<p>kept</p>\n"
    assert _leftovers(tmp_path) == []
