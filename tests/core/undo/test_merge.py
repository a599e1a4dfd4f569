"""Tests for core.undo.merge: undoing a call after later edits, with real git and without it."""

from __future__ import annotations

import logging
import subprocess
from pathlib import Path

import pytest

from core.undo import merge
from core.undo.merge import MergeResult, merge3
from tests.conftest import RUNAWAY_S


def _text(*lines: str) -> bytes:
    return "".join(f"{line}\n" for line in lines).encode()


def _numbered(count: int) -> list[str]:
    return [f"line {n}" for n in range(1, count + 1)]


def _with(lines: list[str], **changes: str) -> bytes:
    """The numbered lines with some replaced, e.g. `_with(lines, l2="two")`."""
    out = list(lines)
    for key, text in changes.items():
        out[int(key[1:]) - 1] = text
    return _text(*out)


@pytest.fixture
def no_git(monkeypatch: pytest.MonkeyPatch) -> None:
    """As on a machine without git: only the built-in diff3 can merge."""
    monkeypatch.setattr(merge, "_git_executable", lambda: None)


LINES = _numbered(10)

# (base = after the call, ours = now, theirs = before the call)
CASES = {
    "clean": (_with(LINES, l2="call"), _with(LINES, l2="call", l8="user"), _text(*LINES)),
    "one conflict": (_with(LINES, l5="call"), _with(LINES, l5="user"), _text(*LINES)),
    "two conflicts": (_with(LINES, l2="call", l8="call"), _with(LINES, l2="user", l8="user"), _text(*LINES)),
    "adjacent lines": (_with(LINES, l4="call"), _with(LINES, l4="call", l5="user"), _text(*LINES)),
    "crlf conflict": (b"a\r\ncall\r\nc\r\n", b"a\r\nuser\r\nc\r\n", b"a\r\nb\r\nc\r\n"),
    "unended conflict": (b"a\nb\ncall", b"a\nb\nuser", b"a\nb\nc"),
    "insertions at one place": (b"a\nb\n", b"a\nuser\nb\n", b"a\nold\nb\n"),
    "same change on both sides": (b"a\ncall\nc\nd\ne\n", b"a\nb\nc\nd\nuser\n", b"a\nb\nc\nd\ne\n"),
}


def test_undo_of_an_early_change_keeps_a_later_change_elsewhere() -> None:
    base, ours, theirs = CASES["clean"]

    result = merge3(base, ours, theirs)

    assert result == MergeResult(clean=True, content=_with(LINES, l8="user"), conflicts=0)


def test_overlapping_edits_conflict_showing_all_three_versions() -> None:
    base, ours, theirs = CASES["one conflict"]

    result = merge3(base, ours, theirs)

    assert result is not None
    assert (result.clean, result.conflicts) == (False, 1)
    assert result.content == _text(
        *LINES[:4],
        "<<<<<<< now", "user", "||||||| after the call", "call", "=======", "line 5", ">>>>>>> before the call",
        *LINES[5:],
    )


def test_each_conflicting_region_is_counted() -> None:
    result = merge3(*CASES["two conflicts"])

    assert result is not None
    assert (result.clean, result.conflicts) == (False, 2)
    assert result.content.count(b"<<<<<<< now\nuser\n||||||| after the call\ncall\n=======\n") == 2


def test_edits_to_adjacent_lines_conflict_as_in_git() -> None:
    result = merge3(*CASES["adjacent lines"])

    assert result is not None
    assert (result.clean, result.conflicts) == (False, 1)
    assert b"<<<<<<< now\ncall\nuser\n||||||| after the call\ncall\nline 5\n=======\nline 4\nline 5\n" in result.content


def test_more_than_127_conflicts_are_all_counted() -> None:
    """git's exit code stops at 127; the count must not."""
    lines = _numbered(1000)
    every_fifth = range(1, 1001, 5)
    base = _with(lines, **{f"l{n}": f"call {n}" for n in every_fifth})
    ours = _with(lines, **{f"l{n}": f"user {n}" for n in every_fifth})

    result = merge3(base, ours, _text(*lines))

    assert result is not None
    assert (result.clean, result.conflicts) == (False, 200)


def test_custom_labels_name_the_versions() -> None:
    result = merge3(*CASES["one conflict"], labels=("editor", "edit #3", "before edit #3"))

    assert result is not None
    assert b"<<<<<<< editor\n" in result.content
    assert b"||||||| edit #3\n" in result.content
    assert b">>>>>>> before edit #3\n" in result.content


@pytest.mark.parametrize(("base", "ours", "theirs", "expected"), [
    pytest.param(b"after\n", b"after\n", b"before\n", b"before\n", id="unchanged since: restore"),
    pytest.param(b"after\n", b"later\n", b"after\n", b"later\n", id="call changed nothing: keep"),
    pytest.param(b"after\n", b"before\n", b"before\n", b"before\n", id="already undone: keep"),
    pytest.param(b"\0after", b"\0after", b"\0before", b"\0before", id="binary unchanged since"),
])
def test_shortcuts_need_no_process(
    monkeypatch: pytest.MonkeyPatch, base: bytes, ours: bytes, theirs: bytes, expected: bytes
) -> None:
    def no_process(*args: object, **kwargs: object) -> None:
        raise AssertionError("a shortcut must not spawn git")

    monkeypatch.setattr(subprocess, "run", no_process)

    assert merge3(base, ours, theirs) == MergeResult(clean=True, content=expected, conflicts=0)


def test_crlf_line_endings_survive_a_clean_merge() -> None:
    base = b"one\r\ncall\r\nthree\r\nfour\r\nfive\r\n"
    ours = b"one\r\ncall\r\nthree\r\nfour\r\nuser\r\n"

    result = merge3(base, ours, b"one\r\ntwo\r\nthree\r\nfour\r\nfive\r\n")

    assert result == MergeResult(clean=True, content=b"one\r\ntwo\r\nthree\r\nfour\r\nuser\r\n", conflicts=0)


@pytest.mark.parametrize(("ours", "expected"), [
    pytest.param(b"a\ncall\nc\nd\ne", b"a\nb\nc\nd\ne", id="last line untouched"),
    pytest.param(b"a\ncall\nc\nd\nuser", b"a\nb\nc\nd\nuser", id="last line edited later"),
])
def test_a_missing_final_newline_survives_a_clean_merge(ours: bytes, expected: bytes) -> None:
    result = merge3(b"a\ncall\nc\nd\ne", ours, b"a\nb\nc\nd\ne")

    assert result == MergeResult(clean=True, content=expected, conflicts=0)


@pytest.mark.parametrize(("base", "ours", "theirs"), [
    pytest.param(b"a\0\ncall\n", b"a\0\ncall\nuser\n", b"a\0\nb\n", id="NUL byte"),
    pytest.param(b"caf\xe9\ncall\n", b"caf\xe9\ncall\nuser\n", b"caf\xe9\nb\n", id="latin-1"),
    pytest.param(b"call\n" * 2_000_000, b"call\n" * 2_000_000 + b"user\n", b"b\n", id="over 8 MB"),
])
def test_files_that_are_not_mergeable_text_give_none(base: bytes, ours: bytes, theirs: bytes) -> None:
    assert merge3(base, ours, theirs) is None


@pytest.mark.parametrize("case", list(CASES))
def test_without_git_the_fallback_merges_as_git_does(case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    with_git = merge3(*CASES[case])
    monkeypatch.setattr(merge, "_git_executable", lambda: None)

    assert merge3(*CASES[case]) == with_git


@pytest.mark.allow_warning_logs
@pytest.mark.parametrize("script", ["exec sleep 30", "echo 'fatal: broken' >&2; exit 255"],
                         ids=["hangs", "fails"])
def test_a_hanging_or_failing_git_falls_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, script: str
) -> None:
    fake_git = tmp_path / "git"
    fake_git.write_text(f"#!/bin/sh\n{script}\n")
    fake_git.chmod(0o755)
    monkeypatch.setattr(merge, "_git_executable", lambda: str(fake_git))
    monkeypatch.setattr(merge, "GIT_TIMEOUT", 0.5)

    result = merge3(*CASES["clean"])

    assert result == MergeResult(clean=True, content=_with(LINES, l8="user"), conflicts=0)
    assert [r.levelno for r in caplog.records if r.name == "core.undo.merge"] == [logging.WARNING]
    if script.startswith("exec sleep"):  # not its 30 s: stopped at its own limit, and the built-in merge answered
        assert "timed out after 0.5 seconds" in caplog.text


@pytest.mark.timeout(RUNAWAY_S)
@pytest.mark.parametrize("engine", ["git", "fallback"])
def test_a_large_repetitive_file_merges_quickly(engine: str, monkeypatch: pytest.MonkeyPatch) -> None:
    if engine == "fallback":
        monkeypatch.setattr(merge, "_git_executable", lambda: None)
    lines = ["}"] * 50_000
    base = _with(lines, l49900="call")

    result = merge3(base, _with(lines, l100="user", l49900="call"), _text(*lines))

    assert result == MergeResult(clean=True, content=_with(lines, l100="user"), conflicts=0)


@pytest.mark.timeout(RUNAWAY_S)
def test_without_git_a_large_changed_region_gives_none_quickly(no_git: None) -> None:
    lines = ["}"] * 50_000
    base = _with(lines, l25000="call")
    ours = _with(lines, l10="user", l25000="call", l40000="user")

    result = merge3(base, ours, _text(*lines))

    assert result is None
