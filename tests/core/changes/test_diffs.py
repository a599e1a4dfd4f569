"""Tests for core.changes.diffs: hunks, line numbers, binary, big inputs, and unified text."""

from __future__ import annotations

import random
import subprocess
from pathlib import Path

import pytest

from core.changes import diffs
from core.changes.diffs import compute_diff, unified_text
from core.changes.xdiff import XdiffError, XPatch, diff_buffers
from core.models.diffs import DiffLine, FileDiff
from tests.conftest import RUNAWAY_S


def _numbered(count: int) -> list[str]:
    return [f"line {n}\n" for n in range(1, count + 1)]


def _bytes(lines: list[str]) -> bytes:
    return "".join(lines).encode()


def _git_apply(tmp_path: Path, before: bytes | None, diff: FileDiff) -> bytes | None:
    """Apply `unified_text(diff)` with `git apply` and return the file it produces."""
    target = tmp_path / diff.path
    if target.exists():
        target.unlink()
    if before is not None:
        target.write_bytes(before)
    subprocess.run(["git", "apply", "--unidiff-zero", "-"], cwd=tmp_path, check=True,
                   input=unified_text(diff).encode(), capture_output=True)
    return target.read_bytes() if target.exists() else None


def test_create_numbers_every_line_as_added() -> None:
    diff = compute_diff("new.py", None, b"a\nb\n")

    assert (diff.status, diff.added, diff.removed, diff.old_size, diff.new_size) == ("create", 2, 0, None, 4)
    (hunk,) = diff.hunks
    assert (hunk.old_start, hunk.old_len, hunk.new_start, hunk.new_len) == (0, 0, 1, 2)
    assert hunk.lines == (DiffLine(kind="+", old_no=None, new_no=1, text="a"),
                          DiffLine(kind="+", old_no=None, new_no=2, text="b"))
    assert unified_text(diff) == "--- /dev/null\n+++ b/new.py\n@@ -0,0 +1,2 @@\n+a\n+b\n"


def test_delete_numbers_every_line_as_removed() -> None:
    diff = compute_diff("old.py", b"a\nb\nc\n", None)

    assert (diff.status, diff.added, diff.removed, diff.old_size, diff.new_size) == ("delete", 0, 3, 6, None)
    (hunk,) = diff.hunks
    assert (hunk.old_start, hunk.old_len, hunk.new_start, hunk.new_len) == (1, 3, 0, 0)
    assert [(l.kind, l.old_no, l.new_no) for l in hunk.lines] == [("-", 1, None), ("-", 2, None), ("-", 3, None)]
    assert unified_text(diff).startswith("--- a/old.py\n+++ /dev/null\n@@ -1,3 +0,0 @@\n-a\n")


def test_unchanged_file_has_no_hunks() -> None:
    diff = compute_diff("same.txt", b"x\n", b"x\n")
    assert (diff.status, diff.hunks, diff.added, diff.removed) == ("unchanged", (), 0, 0)
    assert unified_text(diff) == ""


def test_an_empty_file_created_or_deleted_is_shown_as_such_with_no_lines(caplog: pytest.LogCaptureFixture) -> None:
    """Nothing to diff, and nothing to warn about (the fuzz found xdiff asked to diff two empty buffers)."""
    created, deleted = compute_diff("e.txt", None, b""), compute_diff("e.txt", b"", None)
    assert (created.status, created.hunks, created.added) == ("create", (), 0)
    assert (deleted.status, deleted.hunks, deleted.removed) == ("delete", (), 0)
    assert not caplog.records


def test_modify_gives_hunks_with_context_and_shifted_numbers() -> None:
    old = _numbered(30)
    new = list(old)
    new[9] = "line ten\n"                     # line 10 changed
    new[20:20] = ["inserted A\n", "inserted B\n"]  # two lines before old line 21
    diff = compute_diff("f.txt", _bytes(old), _bytes(new))

    assert (diff.status, diff.added, diff.removed) == ("modify", 3, 1)
    first, second = diff.hunks
    assert (first.old_start, first.old_len, first.new_start, first.new_len) == (7, 7, 7, 7)
    assert [(l.kind, l.old_no, l.new_no, l.text) for l in first.lines[2:6]] == [
        (" ", 9, 9, "line 9"), ("-", 10, None, "line 10"), ("+", None, 10, "line ten"), (" ", 11, 11, "line 11"),
    ]
    assert (second.old_start, second.old_len, second.new_start, second.new_len) == (18, 6, 18, 8)
    assert [(l.kind, l.old_no, l.new_no) for l in second.lines] == [
        (" ", 18, 18), (" ", 19, 19), (" ", 20, 20), ("+", None, 21), ("+", None, 22),
        (" ", 21, 23), (" ", 22, 24), (" ", 23, 25),
    ]
    assert "@@ -7,7 +7,7 @@\n" in unified_text(diff)
    assert "@@ -18,6 +18,8 @@\n" in unified_text(diff)


def test_close_changes_share_one_hunk_and_context_is_configurable() -> None:
    old = _numbered(20)
    new = list(old)
    new[4], new[9] = "five\n", "ten\n"
    assert len(compute_diff("f", _bytes(old), _bytes(new)).hunks) == 1
    zero = compute_diff("f", _bytes(old), _bytes(new), context=0)
    assert [(h.old_start, h.old_len, h.new_start, h.new_len) for h in zero.hunks] == [(5, 1, 5, 1), (10, 1, 10, 1)]


@pytest.mark.parametrize(
    ("before", "after"),
    [(b"\x00\x01\x02", b"\x00\x01\x03\x04"), (b"caf\xe9\n", b"cafe\n"), (b"text\n", b"te\x00xt\n")],
    ids=["nul-bytes", "latin-1", "nul-in-new-side"],
)
def test_binary_content_gets_a_note_with_sizes_and_no_hunks(before: bytes, after: bytes) -> None:
    diff = compute_diff("blob.bin", before, after)
    assert diff.binary and diff.hunks == () and diff.status == "modify"
    assert diff.note == f"binary file, {len(before)} -> {len(after)} bytes"
    assert unified_text(diff).startswith("Binary files a/blob.bin and b/blob.bin differ")


def test_binary_note_uses_thousands_separators() -> None:
    diff = compute_diff("img.png", b"\x89PNG\x00" + bytes(1199), b"\x89PNG\x00" + bytes(1305))
    assert diff.note == "binary file, 1,204 -> 1,310 bytes"
    assert compute_diff("img.png", None, bytes(1310)).note == "binary file, 1,310 bytes"


def test_missing_final_newline_is_a_visible_change() -> None:
    diff = compute_diff("f.txt", b"a\nb", b"a\nb\n")

    (hunk,) = diff.hunks
    assert [(l.kind, l.text, l.ending) for l in hunk.lines] == [
        (" ", "a", "\n"), ("-", "b", ""), ("+", "b", "\n"),
    ]
    assert unified_text(diff).endswith("-b\n\\ No newline at end of file\n+b\n")


def test_crlf_lines_diff_as_lines_and_show_without_cr(tmp_path: Path) -> None:
    before, after = b"one\r\ntwo\r\nthree\r\n", b"one\r\nTWO\r\nthree\r\n"
    diff = compute_diff("win.txt", before, after)

    assert (diff.added, diff.removed, diff.note) == (1, 1, "")
    assert [(l.kind, l.text, l.ending) for l in diff.hunks[0].lines] == [
        (" ", "one", "\r\n"), ("-", "two", "\r\n"), ("+", "TWO", "\r\n"), (" ", "three", "\r\n"),
    ]
    assert _git_apply(tmp_path, before, diff) == after


def test_changed_line_endings_are_counted_and_noted(tmp_path: Path) -> None:
    before, after = b"one\r\ntwo\r\n", b"one\ntwo\n"
    diff = compute_diff("win.txt", before, after)
    assert (diff.added, diff.removed) == (2, 2)
    assert diff.note == "line endings changed (CRLF -> LF)"
    assert unified_text(diff).startswith("# line endings changed (CRLF -> LF)\n--- a/win.txt\n")
    assert _git_apply(tmp_path, before, diff) == after


@pytest.mark.timeout(RUNAWAY_S)  # how fast: bench/diff.py (diff_repetitive); a quadratic diff here takes minutes
def test_huge_repetitive_file_is_fast_and_exact() -> None:
    old = ["}\n"] * 50_000
    new = list(old)
    edits = sorted(random.Random(7).sample(range(50_000), 20))
    for k in edits:
        new[k] = f"edited {k}\n"

    diff = compute_diff("braces.c", _bytes(old), _bytes(new))

    assert (diff.added, diff.removed, diff.truncated, diff.note) == (20, 20, False, "")
    removed = [l.old_no for h in diff.hunks for l in h.lines if l.kind == "-"]
    added = [(l.new_no, l.text) for h in diff.hunks for l in h.lines if l.kind == "+"]
    assert removed == [k + 1 for k in edits]
    assert added == [(k + 1, f"edited {k}") for k in edits]


@pytest.mark.timeout(RUNAWAY_S)
def test_every_other_line_changed_in_a_huge_file_is_fast() -> None:
    # git 2.39's --histogram takes 44 s on this shape; the engine used must not.
    old = [f"def f{n}(x):\n" if k == 0 else f"    return x * {n}\n" for n in range(20_000) for k in (0, 1)]
    new = ["# header\n"] + [line.replace("return x", "return -x") for line in old]

    diff = compute_diff("alt.py", _bytes(old), _bytes(new))

    assert (diff.added, diff.removed, diff.truncated) == (20_001, 20_000, True)
    assert diff.hunks[0].lines[:3] == (
        DiffLine(kind="+", old_no=None, new_no=1, text="# header"),
        DiffLine(kind=" ", old_no=1, new_no=2, text="def f0(x):"),
        DiffLine(kind="-", old_no=2, new_no=None, text="    return x * 0"),
    )


@pytest.mark.timeout(RUNAWAY_S)
@pytest.mark.allow_warning_logs  # the fallback is logged
def test_beyond_xdiffs_size_limit_a_huge_change_is_summarised_not_diffed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(diffs, "XDIFF_MAX_BYTES", 1_000)
    old = ["}\n"] * 50_000
    new = list(old)
    for k in range(100, 50_000, 2_500):
        new.insert(k, f"inserted {k}\n")

    diff = compute_diff("braces.c", _bytes(old), _bytes(new))

    assert (diff.added, diff.removed, diff.hunks, diff.truncated) == (20, 0, (), True)
    assert diff.note == "diff too large to show"


@pytest.mark.allow_warning_logs  # the fallback is logged
def test_beyond_xdiffs_size_limit_in_place_edits_of_a_huge_file_are_still_diffed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(diffs, "XDIFF_MAX_BYTES", 1_000)
    old = ["}\n"] * 50_000
    new = list(old)
    for k in range(100, 50_000, 2_500):
        new[k] = f"edited {k}\n"
    diff = compute_diff("braces.c", _bytes(old), _bytes(new))
    assert (diff.added, diff.removed, len(diff.hunks), diff.note) == (20, 20, 20, "")
    assert diff.hunks[1].lines[3] == DiffLine(kind="-", old_no=2_601, new_no=None, text="}")


@pytest.mark.timeout(RUNAWAY_S)
@pytest.mark.allow_warning_logs  # the failure is logged on purpose
@pytest.mark.parametrize("failure", ["raises", "finds nothing"])
def test_a_failing_xdiff_falls_back_without_a_quadratic_diff(
    failure: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(old: bytes, new: bytes, context: int) -> XPatch:
        if failure == "raises":
            raise XdiffError("git_patch_from_buffers failed")
        return diff_buffers(old, old, context)

    monkeypatch.setattr(diffs, "diff_buffers", broken)
    old = _numbered(5_000)
    new = old[::2] + ["tail\n"]

    diff = compute_diff("big.txt", _bytes(old), _bytes(new))

    assert (diff.added, diff.removed, diff.note) == (1, 2_500, "diff too large to show")  # summarised, not diffed
    assert "xdiff" in caplog.text


def test_a_small_change_in_a_file_beyond_xdiffs_limit_is_still_diffed(monkeypatch: pytest.MonkeyPatch) -> None:
    # Only the region around the change (the context and xdiff's slide margin) is handed to xdiff.
    monkeypatch.setattr(diffs, "XDIFF_MAX_BYTES", 500_000)  # the file has 1.2 MB
    old = _numbered(100_000)
    new = list(old)
    new[70_000] = "changed\n"
    diff = compute_diff("big.txt", _bytes(old), _bytes(new))
    (hunk,) = diff.hunks
    assert (hunk.old_start, hunk.new_start, diff.added, diff.removed) == (69_998, 69_998, 1, 1)


def test_changes_far_apart_in_a_trimmed_file_keep_their_line_numbers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(diffs, "XDIFF_MAX_BYTES", 500_000)  # what lies between the changes is diffed, not more
    old = _numbered(100_000)
    new = list(old)
    new[70_000] = "changed\n"
    new.insert(80_000, "inserted\n")
    diff = compute_diff("big.txt", _bytes(old), _bytes(new))
    first, second = diff.hunks
    assert (first.old_start, first.new_start, diff.added, diff.removed) == (69_998, 69_998, 2, 1)
    assert (second.old_start, second.old_len, second.new_start, second.new_len) == (79_998, 6, 79_998, 7)
    assert second.lines[3] == DiffLine(kind="+", old_no=None, new_no=80_001, text="inserted")


def test_truncation_caps_lines_and_keeps_true_counts() -> None:
    diff = compute_diff("big.txt", None, _bytes(_numbered(10_000)), max_lines=100)

    assert diff.truncated and diff.added == 10_000
    (hunk,) = diff.hunks
    assert len(hunk.lines) == 100 and (hunk.new_start, hunk.new_len) == (1, 100)
    assert "truncated" in diff.note


def test_truncation_stops_between_hunks() -> None:
    old = _numbered(1_000)
    new = [f"changed {n}\n" if n % 100 == 0 else line for n, line in enumerate(old)]
    diff = compute_diff("f.txt", _bytes(old), _bytes(new), max_lines=30)
    assert diff.truncated and diff.removed == 10
    assert sum(len(h.lines) for h in diff.hunks) == 30


def _random_edit(rng: random.Random, lines: list[str]) -> list[str]:
    new = list(lines)
    for _ in range(rng.randint(1, 6)):
        at = rng.randint(0, len(new))
        action = rng.choice(["insert", "delete", "replace"])
        if action == "insert":
            new[at:at] = [f"new {rng.random():.6f}\n" for _ in range(rng.randint(1, 4))]
        elif action == "delete":
            del new[at:at + rng.randint(1, 4)]
        else:
            new[at:at + 1] = ["}\n"]
    if rng.random() < 0.3 and new:
        new[-1] = new[-1].rstrip("\n")
    return new


@pytest.mark.parametrize("margin", [diffs.SLIDE_LINES, 0], ids=["whole", "trimmed-to-the-context"])
def test_unified_text_applies_back_to_the_new_content(
    margin: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(diffs, "SLIDE_LINES", margin)
    rng = random.Random(margin)
    for _ in range(25):
        old = [rng.choice(["}\n", "{\n", "x = 1\n", "\n"]) for _ in range(rng.randint(0, 60))]
        new = _random_edit(rng, old)
        before, after = _bytes(old), _bytes(new)
        diff = compute_diff("f.txt", before, after, context=rng.randint(0, 3))
        if diff.status != "unchanged":
            assert _git_apply(tmp_path, before, diff) == after


def test_create_and_delete_apply_as_patches(tmp_path: Path) -> None:
    assert _git_apply(tmp_path, None, compute_diff("f.txt", None, b"a\nb")) == b"a\nb"
    assert _git_apply(tmp_path, b"a\n", compute_diff("f.txt", b"a\n", None)) is None


def test_the_in_place_check_without_splitting_agrees_with_splitting_both_versions() -> None:
    """The quick check that spares a big file's split (as many lines in, as many out, far apart) must say
    exactly what comparing the split versions line by line says, or a reader would get another diff."""
    rng = random.Random(5)
    words = [b"a\n", b"b\n", b"cc\n", b"\n", b"x", b"dd\n"]

    def split_and_compare(old: bytes, new: bytes, budget: int) -> bool:
        a, b = diffs._split(old.decode()), diffs._split(new.decode())
        return len(a) == len(b) and diffs._changed(diffs._in_place(a, b)) <= budget

    for _ in range(5000):
        old = b"".join(rng.choice(words) for _ in range(rng.randint(0, 8)))
        new = bytearray(old)
        for _ in range(rng.randint(0, 3)):
            if new and rng.random() < 0.7:
                at = rng.randrange(len(new))
                new[at:at + 1] = rng.choice(words)
            else:
                new += rng.choice(words)
        for budget in (0, 2, 4, 8):
            assert diffs._in_place_fits(old, bytes(new), budget) == split_and_compare(old, bytes(new), budget), \
                (old, bytes(new), budget)
