"""Excerpts: the timeline keeps a bounded part of each call's arguments and output, and says what it cut."""

from __future__ import annotations

import json

from core.timeline.excerpts import (
    ARGS_CHARS,
    ITEMS,
    OUTPUT_HEAD_CHARS,
    OUTPUT_TAIL_CHARS,
    STRING_CHARS,
    excerpt_args,
    excerpt_text,
)

BOUND = ARGS_CHARS + 2 * STRING_CHARS + 200
"""What a whole excerpt may reach: the budget, plus the string that crosses it and its marker."""


def test_small_arguments_are_kept_as_they_are() -> None:
    args = {"file_path": "/w/a.txt", "content": "hello", "n": 3, "flags": [True, None, 1.5], "o": {"k": "v"}}
    kept = excerpt_args(args)
    assert kept.args == args and not kept.cut


def test_a_long_string_keeps_its_beginning_and_says_how_much_was_cut() -> None:
    kept = excerpt_args({"file_path": "/w/a.txt", "content": "x" * 1_000_000})
    assert kept.cut and kept.args["file_path"] == "/w/a.txt"
    assert kept.args["content"].startswith("x" * STRING_CHARS)
    assert f"{1_000_000 - STRING_CHARS:,} more characters in the journal" in kept.args["content"]
    assert len(kept.args["content"]) < STRING_CHARS + 60


def test_many_arguments_stay_within_the_budget() -> None:
    kept = excerpt_args({f"key{i}": "y" * 250 for i in range(1_000)})
    assert kept.cut and len(json.dumps(kept.args)) < BOUND
    assert kept.args["…"].endswith("more entries in the journal")


def test_long_lists_are_shortened_with_a_count_of_what_is_left() -> None:
    kept = excerpt_args({"edits": list(range(10_000))})
    assert kept.cut and len(kept.args["edits"]) == ITEMS + 1
    assert kept.args["edits"][-1] == f"… {10_000 - ITEMS:,} more items in the journal"


def test_arguments_nested_thousands_deep_are_folded_without_recursing_that_far() -> None:
    deep: dict[str, object] = {"leaf": 1}
    for _ in range(5_000):
        deep = {"d": deep}
    kept = excerpt_args({"a": deep, "l": [[[[[[[[[[[["x"]]]]]]]]]]]]})
    assert kept.cut and len(json.dumps(kept.args)) < 1_000
    assert "nested deeper, in the journal" in json.dumps(kept.args)


def test_a_long_output_keeps_its_beginning_and_its_end() -> None:
    text = "".join(f"line {i}\n" for i in range(100_000))
    kept, cut = excerpt_text(text)
    assert cut and kept.startswith("line 0\n") and kept.endswith("line 99999\n")
    assert len(kept) < OUTPUT_HEAD_CHARS + OUTPUT_TAIL_CHARS + 100
    assert f"{len(text) - OUTPUT_HEAD_CHARS - OUTPUT_TAIL_CHARS:,} more characters in the journal" in kept
    assert excerpt_text("short") == ("short", False)


def test_arguments_of_short_strings_near_every_limit_are_kept_as_the_budget_would_keep_them() -> None:
    # the common case skips the budget: at each limit and just past it, the result must be the budget's own
    from core.timeline.excerpts import _Budget, _mapping

    def budgeted(args: dict[str, object]) -> tuple[dict[str, object], bool]:
        budget = _Budget(ARGS_CHARS)
        return _mapping(args, budget, 0), budget.cut

    cases = [
        {"command": "x" * STRING_CHARS}, {"command": "x" * (STRING_CHARS + 1)},
        {"k" * STRING_CHARS: "v"}, {"k" * (STRING_CHARS + 1): "v"},
        {f"k{n}": "v" for n in range(ITEMS)}, {f"k{n}": "v" for n in range(ITEMS + 1)},
    ]
    for total in (ARGS_CHARS - 6, ARGS_CHARS, ARGS_CHARS + 6):  # 40 pairs whose charges add up to `total`
        value = (total // 40) - 6 - 3
        cases.append({f"k{n:02d}": "v" * (value + (total % 40 if n == 0 else 0)) for n in range(40)})
    for args in cases:
        kept = excerpt_args(args)  # type: ignore[arg-type]
        assert (kept.args, kept.cut) == budgeted(args), list(args)[:2]
