"""write_text_atomically: Belay's own small files are replaced whole, keep their permissions, and leave no debris."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from core.store.atomic_file import left_by_a_gone_writer, staging_name, write_text_atomically


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_new_file_is_made_with_its_missing_folders_and_nothing_else_is_left_beside_it(tmp_path: Path) -> None:
    target = tmp_path / "config" / "belay" / "settings.toml"
    write_text_atomically(target, "mode = 'default'\nnote = 'é'\n")
    assert target.read_text(encoding="utf-8") == "mode = 'default'\nnote = 'é'\n"
    assert os.listdir(target.parent) == ["settings.toml"]


def test_a_new_file_without_a_mode_gets_the_usual_permissions(tmp_path: Path) -> None:
    umask = os.umask(0o022)
    try:
        write_text_atomically(tmp_path / "plain.txt", "x")
    finally:
        os.umask(umask)
    assert _mode(tmp_path / "plain.txt") == 0o644


def test_replacing_keeps_the_old_permissions_and_a_given_mode_wins(tmp_path: Path) -> None:
    private = tmp_path / "token"
    private.write_text("old")
    private.chmod(0o600)
    write_text_atomically(private, "new")
    assert private.read_text() == "new" and _mode(private) == 0o600
    shared = tmp_path / "endpoint"
    write_text_atomically(shared, "127.0.0.1:1", mode=0o640)
    assert _mode(shared) == 0o640
    write_text_atomically(shared, "127.0.0.1:2", mode=0o600, fsync=False)
    assert shared.read_text() == "127.0.0.1:2" and _mode(shared) == 0o600


def test_a_write_that_fails_leaves_the_old_text_and_no_temporary_file(tmp_path: Path) -> None:
    target = tmp_path / "settings.toml"
    target.write_text("kept = true\n")
    with pytest.raises(UnicodeEncodeError):
        write_text_atomically(target, "half \ud800 written")  # a lone surrogate cannot be UTF-8
    assert target.read_text() == "kept = true\n"
    assert os.listdir(tmp_path) == ["settings.toml"]


def test_a_staging_file_names_its_writer_and_counts_as_left_behind_only_once_that_writer_is_gone() -> None:
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True,
                          check=True).stdout.strip()
    mine = staging_name("a.py")
    assert mine.startswith(f".a.py.belay-{os.getpid()}-") and mine.endswith(".tmp")
    assert not left_by_a_gone_writer(mine)  # this process may still rename it
    assert left_by_a_gone_writer(mine.replace(f"-{os.getpid()}-", f"-{dead}-"))
    for not_ours in (f".a.py.belay-{dead}.tmp", f"a.py.belay-{dead}-0123abcd.tmp", f".a.py.belay-{dead}-0123abcd",
                     ".a.py.belay-0123abcd.tmp", f".a.py.belay-{dead}-0123ABCD.tmp"):
        assert not left_by_a_gone_writer(not_ours), not_ours
