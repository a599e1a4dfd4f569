"""OwnerLock: one console at a time owns a workspace's state, and a dead owner never keeps it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from core.store.lock import LOCK, OwnerLock, WorkspaceBusy, own_workspace
from tests.conftest import ROOT

_HOLDER = """
import importlib.util, sys, time
from pathlib import Path
spec = importlib.util.spec_from_file_location("lock", sys.argv[1])  # the module alone: no package start-up
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
lock = module.OwnerLock.try_acquire(Path(sys.argv[2]))
print("held" if lock else "refused", flush=True)
time.sleep(60)
"""


def test_a_second_owner_is_refused_until_the_first_releases(tmp_path: Path) -> None:
    path = tmp_path / "owner.lock"
    first = OwnerLock.try_acquire(path)
    assert first is not None
    assert OwnerLock.try_acquire(path) is None
    first.release()
    first.release()  # releasing twice is harmless
    second = OwnerLock.try_acquire(path)
    assert second is not None
    second.release()


def test_a_lock_held_by_a_process_that_dies_is_free_again(tmp_path: Path) -> None:
    path = tmp_path / "owner.lock"
    module = ROOT / "core" / "store" / "lock.py"
    child = subprocess.Popen([sys.executable, "-c", _HOLDER, str(module), str(path)], stdout=subprocess.PIPE)
    try:
        assert child.stdout is not None and child.stdout.readline() == b"held\n"
        assert OwnerLock.try_acquire(path) is None
    finally:
        child.kill()
        child.wait(timeout=30)
        if child.stdout is not None:
            child.stdout.close()
    mine = OwnerLock.try_acquire(path)
    assert mine is not None
    mine.release()


def test_whoever_is_refused_can_name_the_holder_and_what_it_is(tmp_path: Path) -> None:
    path = tmp_path / "owner.lock"
    first = OwnerLock.try_acquire(path, "belay run")
    assert first is not None
    try:
        assert OwnerLock.try_acquire(path, "window") is None
        assert OwnerLock.holder(path) == f"belay run (pid {os.getpid()})"
    finally:
        first.release()
    second = OwnerLock.try_acquire(path, "window")
    assert second is not None and OwnerLock.holder(path) == f"window (pid {os.getpid()})"
    second.release()


def test_a_workspace_is_owned_once_even_by_consoles_with_different_state_folders(tmp_path: Path) -> None:
    """`--state-dir` elsewhere does not make a second owner: the workspace itself is locked, by its real path,
    and the refusal names the holder and where its state is."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (tmp_path / "link").symlink_to(workspace)
    first = own_workspace(tmp_path / "state-a", workspace, "window")
    try:
        with pytest.raises(WorkspaceBusy) as refused:
            own_workspace(tmp_path / "state-b", tmp_path / "link", "belay run")
        said = refused.value.info.message
        assert f"window (pid {os.getpid()}, its state in {tmp_path / 'state-a'})" in said, said
        own = OwnerLock.try_acquire(tmp_path / "state-b" / LOCK)  # the refused one let go of its own
        assert own is not None
        own.release()
    finally:
        first.release()
    again = own_workspace(tmp_path / "state-b", workspace, "belay run")
    again.release()
