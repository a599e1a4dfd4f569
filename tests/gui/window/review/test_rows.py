"""Tests for gui.window.review.rows: hunk headers, changed words and folds as the reviewer reads them."""

from __future__ import annotations

import pytest

from core.changes.diffs import compute_diff
from gui.window.review.rows import MAX_WORD_DIFF_CHARS, build_layout, enclosing, open_fold, word_changes


@pytest.mark.parametrize(("above", "expected"), [
    (["    return x", "    def total(self, items):", "class Cart:"], "def total(self, items):"),
    (["  const y = 2;", "export async function load(url) {"], "export async function load(url) {"),
    (["    let y = 2;", "pub(crate) fn parse(input: &str) -> Result<Ast> {"], "pub(crate) fn parse(input: &str) -> Result<Ast> {"),
    (["\treturn 0;", "static int count_lines(const char *text)", "#include <stdio.h>"],
     "static int count_lines(const char *text)"),
    (["\tx := 1", "func (s *Server) Serve(ctx context.Context) error {"], "func (s *Server) Serve(ctx context.Context) error {"),
    (["    printf(\"%d\", n);", "    total = add(n, 1);", "x = 1"], ""),
])
def test_a_hunk_header_names_the_nearest_definition_above(above: list[str], expected: str) -> None:
    assert enclosing(above) == expected


def test_a_long_definition_is_cut_for_the_header() -> None:
    title = enclosing(["def " + "very_long_name_" * 10 + "(x):"])
    assert len(title) == 60 and title.endswith("…")


def test_changed_words_are_marked_and_dissimilar_or_long_lines_are_left_whole() -> None:
    old, new = word_changes("total = price * qty", "total = price * quantity + tax")
    assert ["total = price * qty"[a:b] for a, b in old] == ["qty"]
    assert ["total = price * quantity + tax"[a:b] for a, b in new] == ["quantity + tax"]
    assert word_changes("import os", "class Cart(Base): pass") == ((), ())
    long = "x" * (MAX_WORD_DIFF_CHARS + 1)
    assert word_changes(long, long + "y") == ((), ())


def test_removed_lines_stand_beside_the_added_ones_and_extra_lines_face_a_blank() -> None:
    old = "a = 1\nb = 2\nc = 3\n"
    new = "a = 10\nb = 20\nextra = 0\nc = 3\n"
    layout = build_layout([compute_diff("m.py", old.encode(), new.encode())])
    lines = [r for r in layout.split if r.kind == "line"]
    pairs = [(r.left.text if r.left else None, r.right.text if r.right else None) for r in lines]
    assert pairs == [("a = 1", "a = 10"), ("b = 2", "b = 20"), (None, "extra = 0"), ("c = 3", "c = 3")]
    unified = [(r.left.kind, r.left.text) for r in layout.unified if r.kind == "line"]
    assert unified == [("-", "a = 1"), ("-", "b = 2"), ("+", "a = 10"), ("+", "b = 20"), ("+", "extra = 0"),
                       (" ", "c = 3")]
    assert unified and lines[0].left is not None and lines[0].left.words  # "1" -> "10" is marked


def test_folds_count_the_unchanged_lines_between_hunks_and_after_the_last() -> None:
    old = "".join(f"line {n}\n" for n in range(100))
    new = old.replace("line 20\n", "line twenty\n").replace("line 70\n", "line seventy\n")
    layout = build_layout([compute_diff("f.txt", old.encode(), new.encode())], contents={"f.txt": new})
    folds = [r.text for r in layout.split if r.kind == "fold"]
    assert folds == [f"⋯ {n} unchanged lines  (click to show)" for n in (17, 43, 26)]  # 17 + 7 + 43 + 7 + 26 = 100
    without_text = build_layout([compute_diff("f.txt", old.encode(), new.encode())])
    assert [r.text for r in without_text.split if r.kind == "fold"] == ["⋯ 17 unchanged lines", "⋯ 43 unchanged lines"]


def test_an_opened_fold_shows_its_lines_numbered_on_both_sides() -> None:
    old = "".join(f"line {n}\n" for n in range(1, 101))
    new = old.replace("line 10\n", "").replace("line 70\n", "line seventy\n")
    layout = build_layout([compute_diff("f.txt", old.encode(), new.encode())], contents={"f.txt": new})
    middle = [r for r in layout.split if r.kind == "fold"][1]
    assert middle.span == (14, 13, 53)
    assert open_fold(layout, middle, new)
    opened = [r for r in layout.split if r.kind == "line" and r.hunk == -1]
    assert [(r.left.old_no, r.right.new_no, r.right.text) for r in (opened[0], opened[-1])] == [
        (14, 13, "line 14"), (66, 65, "line 66")]
    assert layout.split[layout.split_at[1]].kind == layout.unified[layout.unified_at[1]].kind == "hunk"
    assert not open_fold(layout, middle, new)  # already open


def test_past_the_word_budget_changed_lines_are_shown_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    from gui.window.review import rows as review_rows

    monkeypatch.setattr(review_rows, "MAX_WORD_PAIRS", 1)
    old = "".join(f"value_{n} = {n}\n" for n in range(40))
    new = old.replace("value_5 = 5\n", "value_5 = 50\n").replace("value_30 = 30\n", "value_30 = 300\n")
    layout = build_layout([compute_diff("m.py", old.encode(), new.encode())])
    changed = [r for r in layout.split if r.kind == "line" and r.left is not None and r.left.kind == "-"]
    assert [bool(r.right.words) for r in changed if r.right is not None] == [True, False]
