"""Tests for core.changes.partial: the exact bytes a partial approval writes, and what the agent is told."""

from __future__ import annotations

import pytest

from core.changes.diffs import compute_diff
from core.changes.partial import PartialError, apply_hunks, not_applied, partial_note, revert_hunks

REJECTED = {2, 8, 11, 15, 20, 26, 29}


def thirty_hunk_files(ending: str = "\n") -> tuple[list[str], list[str]]:
    """A 2,000-line module and the agent's version of it with 30 separate changes."""
    old = [f"def function_{n}(x):{ending}" if n % 10 == 0 else f"    value_{n} = x + {n}{ending}"
           for n in range(2000)]
    new = list(old)
    for k in range(30):
        n = 15 + k * 66
        new[n] = f"    value_{n} = x * {n}  # changed by the agent{ending}"
    return old, new


def expected(old: list[str], new: list[str], rejected: set[int]) -> bytes:
    """By hand: every changed line takes the agent's text unless its change was rejected."""
    changed = [n for n in range(len(old)) if old[n] != new[n]]
    out = list(new)
    for k in rejected:
        out[changed[k]] = old[changed[k]]
    return "".join(out).encode()


@pytest.mark.parametrize("ending", ["\n", "\r\n"])
def test_a_30_hunk_edit_with_7_rejected_writes_exactly_the_23_accepted_changes(ending: str) -> None:
    old, new = thirty_hunk_files(ending)
    before, after = "".join(old).encode(), "".join(new).encode()
    diff = compute_diff("src/app.py", before, after)
    assert len(diff.hunks) == 30
    accepted = set(range(30)) - REJECTED

    written = apply_hunks(before, diff, accepted)

    assert written == expected(old, new, REJECTED)
    assert apply_hunks(before, diff, range(30)) == after
    assert apply_hunks(before, diff, ()) == before


def test_changes_at_both_ends_and_a_missing_final_newline_are_applied_as_chosen() -> None:
    before = b"first\n" + b"".join(b"line %d\n" % n for n in range(40)) + b"last"
    after = b"inserted\nfirst\n" + b"".join(b"line %d\n" % n for n in range(40) if n != 20) + b"last\n"
    diff = compute_diff("notes.txt", before, after)
    assert len(diff.hunks) == 3
    assert apply_hunks(before, diff, {0, 2}) == b"inserted\nfirst\n" + b"".join(
        b"line %d\n" % n for n in range(40)) + b"last\n"
    assert apply_hunks(before, diff, {1}) == b"first\n" + b"".join(
        b"line %d\n" % n for n in range(40) if n != 20) + b"last"


def test_a_diff_that_does_not_describe_the_file_is_refused_not_half_applied() -> None:
    old, new = thirty_hunk_files()
    diff = compute_diff("src/app.py", "".join(old).encode(), "".join(new).encode())
    moved = "".join(old).replace("    value_1003 = x + 1003\n", "    value_1003 = something else\n")
    with pytest.raises(PartialError, match="hunk 16 of src/app.py does not match the file as it is"):
        apply_hunks(moved.encode(), diff, {0})
    with pytest.raises(PartialError, match="there is no hunk 31"):
        apply_hunks("".join(old).encode(), diff, {30})


def test_whole_file_creates_and_truncated_diffs_cannot_be_split() -> None:
    with pytest.raises(PartialError, match="created whole"):
        apply_hunks(b"", compute_diff("new.txt", None, b"a\n"), ())
    old, new = thirty_hunk_files()
    cut = compute_diff("src/app.py", "".join(old).encode(), "".join(new).encode(), max_lines=20)
    with pytest.raises(PartialError, match="truncated"):
        apply_hunks("".join(old).encode(), cut, {0})


def test_the_agent_is_told_which_hunks_were_not_applied_and_why() -> None:
    assert not_applied("src/app.py", {2, 8, 11}, 30, " keep the old API ") == \
        "hunks 3, 9 and 12 of 30 in src/app.py were not applied: keep the old API"
    assert not_applied("src/app.py", {4}, 5) == "hunk 5 of 5 in src/app.py was not applied"
    assert not_applied("src/app.py", set(), 5) == ""
    note = partial_note([not_applied("a.py", {0, 1}, 3), "", not_applied("b.py", {2}, 3, "no")])
    assert note == ("The user approved this change only in part; hunks 1 and 2 of 3 in a.py were not applied; "
                    "hunk 3 of 3 in b.py was not applied: no. The rest was written; read the file to see what it "
                    "holds now.")


def test_taking_hunks_back_from_the_new_content_mirrors_applying_them_to_the_old() -> None:
    old, new = thirty_hunk_files("\r\n")
    before, after = "".join(old).encode(), "".join(new).encode()
    diff = compute_diff("src/app.py", before, after)
    assert revert_hunks(after, diff, range(30)) == before
    assert revert_hunks(after, diff, REJECTED) == apply_hunks(before, diff, set(range(30)) - REJECTED)
    with pytest.raises(PartialError, match="does not match the new content"):
        revert_hunks(before, diff, {0})
