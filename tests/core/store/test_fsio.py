"""core.store.fsio: reads and atomic writes that refuse symlinks swapped in after the path check."""

from __future__ import annotations

import asyncio
import errno
import os
import shutil
import stat
from collections.abc import Awaitable
from pathlib import Path

import pytest

from core import Console, RunStatus
from core.errors import ErrorKind, ToolError
from core.paths import Workspace
from core.run.calls import CallOutcome
from core.store import fsio
from tests.conftest import RUNAWAY_S, run


@pytest.fixture
def root(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "app.py").write_text("print('hi')\n")
    return ws


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    out = tmp_path / "outside"
    out.mkdir()
    (out / "app.py").write_text("SECRET\n")
    return out


def fails(kind: ErrorKind, fn, *args) -> ToolError:  # type: ignore[no-untyped-def]
    with pytest.raises(ToolError) as info:
        fn(*args)
    assert info.value.kind is kind, info.value
    return info.value


def test_read_file_returns_the_bytes_and_matching_stat(root: Path) -> None:
    ws = Workspace(root)
    data, st = fsio.read_with_stat(ws, root / "src" / "app.py")
    assert data == b"print('hi')\n" and st.st_size == len(data)


def test_a_missing_file_suggests_a_close_name(root: Path) -> None:
    error = fails(ErrorKind.NOT_FOUND, fsio.read_file, Workspace(root), root / "src" / "apps.py")
    assert "src/apps.py" in error.info.message and "app.py" in error.info.suggestion
    assert fsio.read_if_exists(Workspace(root), root / "nope" / "x.py") is None


def test_directories_and_oversized_files_are_refused(root: Path) -> None:
    ws = Workspace(root)
    assert "src" in fails(ErrorKind.IS_DIRECTORY, fsio.read_file, ws, root / "src").info.message
    fails(ErrorKind.IS_DIRECTORY, fsio.read_file, ws, root)
    error = fails(ErrorKind.TOO_LARGE, fsio.read_file, ws, root / "src" / "app.py", 4)
    assert "src/app.py" in error.info.message


@pytest.mark.timeout(RUNAWAY_S)  # opening a FIFO to read it waits for a writer: forever, here
def test_a_fifo_is_refused_without_blocking(root: Path) -> None:
    os.mkfifo(root / "pipe")
    error = fails(ErrorKind.NOT_REGULAR_FILE, fsio.read_file, Workspace(root), root / "pipe")
    assert "FIFO" in error.info.message


def test_dev_zero_behind_a_link_is_refused_as_a_device_and_never_opened(root: Path) -> None:
    (root / "zero").symlink_to("/dev/zero")
    ws = Workspace(root)
    with pytest.raises(ToolError) as info:
        ws.resolve(f"{root}/zero")
    assert info.value.kind is ErrorKind.NOT_REGULAR_FILE
    assert "/dev/zero" in info.value.info.message and "character device" in info.value.info.message
    # Even handed the unresolved link, fsio refuses to follow it.
    fails(ErrorKind.OUTSIDE_WORKSPACE, fsio.read_file, ws, root / "zero")


def test_a_directory_swapped_for_a_symlink_after_resolve_is_not_followed(root: Path, outside: Path) -> None:
    ws = Workspace(root)
    resolved = ws.resolve(f"{root}/src/app.py")
    shutil.rmtree(root / "src")
    (root / "src").symlink_to(outside)
    error = fails(ErrorKind.OUTSIDE_WORKSPACE, fsio.read_file, ws, resolved)
    assert "changed while it was being opened" in error.info.message
    fails(ErrorKind.OUTSIDE_WORKSPACE, fsio.atomic_write, ws, resolved, b"pwned")
    fails(ErrorKind.OUTSIDE_WORKSPACE, fsio.remove_file, ws, resolved)
    assert (outside / "app.py").read_text() == "SECRET\n"


def test_paths_that_were_not_resolved_inside_are_refused(root: Path, outside: Path) -> None:
    fails(ErrorKind.OUTSIDE_WORKSPACE, fsio.read_file, Workspace(root), outside / "app.py")
    fails(ErrorKind.OUTSIDE_WORKSPACE, fsio.read_file, Workspace(root), Path(f"{root}/../outside/app.py"))


def test_atomic_write_creates_parents_and_replaces_content(root: Path) -> None:
    ws = Workspace(root)
    fsio.atomic_write(ws, root / "a" / "b" / "new.txt", b"one\n")
    fsio.atomic_write(ws, root / "src" / "app.py", b"two\n")
    assert (root / "a" / "b" / "new.txt").read_bytes() == b"one\n"
    assert (root / "src" / "app.py").read_bytes() == b"two\n"
    assert not [p for p in root.rglob("*") if ".belay-" in p.name]


def test_atomic_write_keeps_or_sets_the_mode(root: Path) -> None:
    ws = Workspace(root)
    target = root / "src" / "app.py"
    target.chmod(0o751)
    fsio.atomic_write(ws, target, b"x")
    assert stat.S_IMODE(target.stat().st_mode) == 0o751
    fsio.atomic_write(ws, target, b"y", 0o600)
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    umask = os.umask(0o022)
    try:
        fsio.atomic_write(ws, root / "fresh.txt", b"z")
    finally:
        os.umask(umask)
    assert stat.S_IMODE((root / "fresh.txt").stat().st_mode) == 0o644


def test_a_failed_write_leaves_the_old_file_and_no_temp_file(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def full_disk(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full_disk)
    error = fails(ErrorKind.SYSTEM, fsio.atomic_write, Workspace(root), root / "src" / "app.py", b"new")
    assert "no space left" in error.info.message and "src/app.py" in error.info.message
    assert (root / "src" / "app.py").read_text() == "print('hi')\n"
    assert sorted(p.name for p in (root / "src").iterdir()) == ["app.py"]


def test_permission_errors_map_to_permission(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def read_only(*args: object, **kwargs: object) -> None:
        raise OSError(errno.EROFS, "Read-only file system")

    monkeypatch.setattr(os, "replace", read_only)
    error = fails(ErrorKind.PERMISSION, fsio.atomic_write, Workspace(root), root / "src" / "app.py", b"new")
    assert "read-only" in error.info.message
    assert sorted(p.name for p in (root / "src").iterdir()) == ["app.py"]


def test_writing_onto_a_directory_or_a_symlink_is_refused(root: Path, outside: Path) -> None:
    ws = Workspace(root)
    fails(ErrorKind.IS_DIRECTORY, fsio.atomic_write, ws, root / "src", b"x")
    (root / "link.py").symlink_to(outside / "app.py")
    fails(ErrorKind.OUTSIDE_WORKSPACE, fsio.atomic_write, ws, root / "link.py", b"x")
    assert (outside / "app.py").read_text() == "SECRET\n"


def test_a_file_in_the_middle_of_a_path_is_named(root: Path) -> None:
    error = fails(ErrorKind.INVALID_ARGS, fsio.atomic_write, Workspace(root), root / "src" / "app.py" / "x", b"")
    assert "src/app.py is a file, not a directory" in error.info.message


def test_remove_file(root: Path) -> None:
    ws = Workspace(root)
    fsio.remove_file(ws, root / "src" / "app.py")
    assert not (root / "src" / "app.py").exists()
    fails(ErrorKind.NOT_FOUND, fsio.remove_file, ws, root / "src" / "app.py")
    fails(ErrorKind.IS_DIRECTORY, fsio.remove_file, ws, root / "src")


def test_stat_path_does_not_follow_the_last_link(root: Path, outside: Path) -> None:
    ws = Workspace(root)
    (root / "link").symlink_to(outside)
    st = fsio.stat_path(ws, root / "link")
    assert st is not None and stat.S_ISLNK(st.st_mode)
    assert fsio.stat_path(ws, root / "missing") is None
    assert fsio.stat_path(ws, root / "missing" / "deeper") is None
    root_st = fsio.stat_path(ws, root)
    assert root_st is not None and stat.S_ISDIR(root_st.st_mode)


def test_list_dir(root: Path, outside: Path) -> None:
    ws = Workspace(root)
    (root / "link").symlink_to(outside)
    (root / "README.md").write_text("")
    assert sorted(fsio.list_dir(ws, root)) == [("README.md", False), ("link", False), ("src", True)]
    fails(ErrorKind.INVALID_ARGS, fsio.list_dir, ws, root / "README.md")
    fails(ErrorKind.NOT_FOUND, fsio.list_dir, ws, root / "nope")


@pytest.fixture
def linked(root: Path, outside: Path) -> Path:
    """src/shared.py: a hard link, in the workspace, to a file outside it."""
    (outside / "shared.py").write_text("OUTSIDE\n")
    (outside / "shared.py").chmod(0o640)
    os.link(outside / "shared.py", root / "src" / "shared.py")
    return root / "src" / "shared.py"


def test_writing_a_hard_linked_file_replaces_the_workspace_name_only(linked: Path, outside: Path) -> None:
    fsio.atomic_write(Workspace(linked.parent.parent), linked, b"NEW\n")
    assert linked.read_bytes() == b"NEW\n" and stat.S_IMODE(linked.stat().st_mode) == 0o640  # its mode kept
    assert (outside / "shared.py").read_text() == "OUTSIDE\n"
    assert os.stat(outside / "shared.py").st_nlink == 1 and linked.stat().st_nlink == 1


def test_removing_a_hard_linked_file_keeps_its_other_name(linked: Path, outside: Path) -> None:
    fsio.remove_file(Workspace(linked.parent.parent), linked)
    assert not linked.exists() and (outside / "shared.py").read_text() == "OUTSIDE\n"


def test_a_mode_change_on_a_hard_linked_file_leaves_its_other_name_alone(linked: Path, outside: Path) -> None:
    with fsio.parent_dir(Workspace(linked.parent.parent), linked) as (dfd, name):
        fsio.change_mode(dfd, name, 0o755)
    assert stat.S_IMODE(linked.stat().st_mode) == 0o755 and linked.read_text() == "OUTSIDE\n"
    assert stat.S_IMODE((outside / "shared.py").stat().st_mode) == 0o640
    single = linked.parent / "app.py"
    inode = single.stat().st_ino
    with fsio.parent_dir(Workspace(linked.parent.parent), single) as (dfd, name):
        fsio.change_mode(dfd, name, 0o700)
    assert stat.S_IMODE(single.stat().st_mode) == 0o700 and single.stat().st_ino == inode  # one name: in place


def test_write_and_edit_through_the_console_never_touch_a_hard_links_outside_name(
        linked: Path, outside: Path) -> None:
    ws = linked.parent.parent

    async def approving(console: Console, call: Awaitable[CallOutcome]) -> CallOutcome:
        task = asyncio.ensure_future(call)
        while not task.done():
            for request in console.pending_approvals():
                console.approve(request.call_id)
            await asyncio.sleep(0.01)
        return await task

    async def scenario() -> list[CallOutcome]:
        async with Console(ws) as console:
            console.register_approver("test")
            agent = await console.start_agent("agent", "scripted")
            wrote = await approving(console, console.call(agent, "Write", {"file_path": str(linked),
                                                                           "content": "WRITTEN\n"}))
            os.link(outside / "shared.py", ws / "src" / "again.py")
            read = await approving(console, console.call(agent, "Read", {"file_path": str(ws / "src" / "again.py")}))
            edited = await approving(console, console.call(agent, "Edit", {
                "file_path": str(ws / "src" / "again.py"), "old_string": "OUTSIDE", "new_string": "EDITED"}))
            return [wrote, read, edited]

    outcomes = run(scenario())
    assert [o.status for o in outcomes] == [RunStatus.DONE] * 3, [o.text for o in outcomes]
    assert linked.read_text() == "WRITTEN\n" and (ws / "src" / "again.py").read_text() == "EDITED\n"
    assert (outside / "shared.py").read_text() == "OUTSIDE\n"
    assert stat.S_IMODE((outside / "shared.py").stat().st_mode) == 0o640
