"""Tests for core.undo.conflicts: the regions of a real merge's output, and taking a side of one."""

from __future__ import annotations

import pytest

from core.undo import merge
from core.undo.conflicts import conflict_regions, resolve_all, split_lines, take_side
from core.undo.merge import merge3

# after the call (base), now (ours: edited again since), before the call (theirs: what the undo restores)
BASE = "".join(f"line {n}\n" for n in range(1, 31))
NOW = BASE.replace("line 3\n", "line 3 edited now\n").replace("line 24\n", "line 24 now\nline 24b now\n")
BEFORE = BASE.replace("line 3\n", "line 3 before\n").replace("line 24\n", "line 24 before\n")


def _merged(*, git: bool, monkeypatch: pytest.MonkeyPatch) -> str:
    if not git:
        monkeypatch.setattr(merge, "_git_executable", lambda: None)
    result = merge3(BASE.encode(), NOW.encode(), BEFORE.encode())
    assert result is not None and result.conflicts == 2
    return result.content.decode()


@pytest.mark.parametrize("git", [True, False], ids=["git", "built-in"])
def test_the_regions_of_a_real_merge_have_both_sides_and_their_lines(
        git: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    text = _merged(git=git, monkeypatch=monkeypatch)
    first, second = conflict_regions(text)
    lines = split_lines(text)
    assert lines[first.start].startswith("<<<<<<< now") and lines[first.end - 1].startswith(">>>>>>> before")
    assert (first.now, first.base, first.undo) == ("line 3 edited now\n", "line 3\n", "line 3 before\n")
    assert (second.now, second.undo) == ("line 24 now\nline 24b now\n", "line 24 before\n")
    assert second.start == 2 + 7 + 20  # line 24's place, after the first region's 7 lines replaced line 3
    assert second.lines == 8


@pytest.mark.parametrize(("take", "expected"), [
    ("now", NOW),
    ("undo", BEFORE),
    ("both", NOW.replace("line 3 edited now\n", "line 3 edited now\nline 3 before\n")
             .replace("line 24b now\n", "line 24b now\nline 24 before\n")),
])
def test_taking_a_side_of_every_region_gives_that_version(take: str, expected: str,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    text = _merged(git=True, monkeypatch=monkeypatch)
    assert resolve_all(text, take) == expected  # type: ignore[arg-type]
    assert conflict_regions(resolve_all(text, take)) == []  # type: ignore[arg-type]


def test_taking_one_region_leaves_the_other_in_place(monkeypatch: pytest.MonkeyPatch) -> None:
    text = _merged(git=True, monkeypatch=monkeypatch)
    first, _ = conflict_regions(text)
    after = take_side(text, first, "undo")
    [left] = conflict_regions(after)
    assert "line 3 before\n" in after and "line 3 edited now" not in after
    assert left.undo == "line 24 before\n" and left.start == 2 + 1 + 20


def test_crlf_lines_keep_their_endings_and_markers_without_base_are_read() -> None:
    text = "a\r\n<<<<<<< now\r\nmine\r\n=======\r\nyours\r\n>>>>>>> before\r\nz"
    [region] = conflict_regions(text)
    assert (region.start, region.end, region.now, region.base, region.undo) == (1, 6, "mine\r\n", "", "yours\r\n")
    assert take_side(text, region, "undo") == "a\r\nyours\r\nz"


def test_half_written_or_hand_broken_markers_are_not_regions() -> None:
    assert conflict_regions("<<<<<<< now\nmine\n=======\nyours\n") == []  # never closed
    assert conflict_regions("a <<<<<<< b\n=======\n>>>>>>> c\n") == []  # not at a line start
    nested = "<<<<<<< now\nx\n<<<<<<< now\nmine\n=======\nyours\n>>>>>>> before\n"
    [region] = conflict_regions(nested)  # the first opener is never closed: the inner region stands alone
    assert region.start == 2 and region.now == "mine\n"
    assert split_lines("") == [] and split_lines("a\rb\n") == ["a\rb\n"]  # a lone CR is not a line break
