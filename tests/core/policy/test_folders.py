"""Commands that read whole folders, and whether a Read deny rule covers something below one."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.policy import folders
from core.policy.folders import denied_below, reads_folders, searches_here
from core.policy.rules import parse_rule


@pytest.mark.parametrize(("line", "whole"), [
    ("grep -r KEY .", True), ("grep -Rn KEY src", True), ("grep --recursive x", True), ("grep -d recurse x .", True),
    ("rg KEY", True), ("/usr/bin/rg KEY src", True), ("tar cf x.tar src", True), ("cp -a src dst", True),
    ("grep KEY notes.txt", False), ("cat .env", False), ("ls src", False), ("cp a b", False), ("grep --regexp=r x", False),
])
def test_which_commands_read_every_file_below_a_folder(line: str, whole: bool) -> None:
    assert reads_folders(line.split()) is whole


def test_only_searchers_search_their_working_directory_when_given_no_path() -> None:
    assert searches_here(["rg", "KEY"]) and not searches_here(["grep", "-r", "KEY"])


def test_a_deny_rule_on_a_file_or_folder_below_is_found_and_named(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "secrets").mkdir()
    (ws / "secrets" / "key.pem").write_text("k\n")
    (ws / "src" / ".env").write_text("TOKEN=1\n")
    env, secrets = parse_rule("Read(.env)"), parse_rule("Read(./secrets/**)")
    found = denied_below(str(ws), [("Read(.env)", env)], str(ws), str(tmp_path))
    assert found is not None and str(ws / "src" / ".env") in found and "Read(.env)" in found
    assert "key.pem" in (denied_below(str(ws), [("Read(./secrets/**)", secrets)], str(ws), str(tmp_path)) or "")
    assert denied_below(str(ws / "src"), [("Read(./secrets/**)", secrets)], str(ws), str(tmp_path)) is None


def test_a_folder_too_large_to_look_through_is_reported_rather_than_passed(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(folders, "MAX_ENTRIES", 10)
    for i in range(20):
        (tmp_path / f"f{i}").write_text("x")
    found = denied_below(str(tmp_path), [("Read(.env)", parse_rule("Read(.env)"))], str(tmp_path), "/nonexistent")
    assert found is not None and "too many" in found
