"""Options read as GNU getopt reads them, so that an option's value is never mistaken for a path, nor a path for one."""

from __future__ import annotations

import pytest

from core.policy.bash.options import parse
from core.policy.bash.words import WordValue

from .harness import word


def _words(line: str) -> list[WordValue]:
    """Words split on spaces; one starting with `$` is only known at run time."""
    return [word(t) for t in line.split()]


def _operands(line: str, value_short: str = "", value_long: tuple[str, ...] = (), permute: bool = True) -> list[str]:
    words = _words(line)
    return [words[i].text for i in parse(words, value_short, value_long, permute).operands]


def test_bundled_short_options_are_each_an_option() -> None:
    p = parse(_words("-rf build"))
    assert p.has("-r") and p.has("-f") and not p.has("-rf")
    assert [name for name, _, _ in p.options] == ["-r", "-f"]
    assert p.operands == [1]


@pytest.mark.parametrize(("line", "option", "value", "operands"), [
    ("-n5 notes.txt", "-n", "5", ["notes.txt"]),
    ("-n 5 notes.txt", "-n", "5", ["notes.txt"]),
    ("-vn 5 notes.txt", "-n", "5", ["notes.txt"]),               # the value-taking letter ends the bundle
    ("-nv notes.txt", "-n", "v", ["notes.txt"]),                 # ...and takes the rest of it as its value
    ("--output=/etc/x notes.txt", "--output", "/etc/x", ["notes.txt"]),
    ("--output /etc/x notes.txt", "--output", "/etc/x", ["notes.txt"]),
    ("--verbose /etc/x", "--verbose", None, ["/etc/x"]),         # a flag takes no value: the next word is a file
])
def test_a_value_attached_or_separate_belongs_to_its_option_not_to_the_operands(
        line: str, option: str, value: str | None, operands: list[str]) -> None:
    p = parse(_words(line), "n", ("--output",))
    assert (p.values(option) or [None]) == [value]
    assert _operands(line, "n", ("--output",)) == operands


@pytest.mark.parametrize(("line", "operands"), [
    ("-- -rf /", ["-rf", "/"]),              # after --, nothing is an option
    ("- notes.txt", ["-", "notes.txt"]),     # a lone dash is standard input, an operand
    ("$FLAGS notes.txt", ["$FLAGS", "notes.txt"]),
])
def test_double_dash_a_lone_dash_and_computed_words_are_operands(line: str, operands: list[str]) -> None:
    assert _operands(line) == operands


def test_options_after_operands_still_count_unless_the_program_stops_at_the_first_operand() -> None:
    permuted = parse(_words("src -o out.txt -r"), "o")
    assert permuted.has("-r") and permuted.values("-o") == ["out.txt"]
    assert permuted.operands == [0]
    stopped = parse(_words("5 rm -rf /"), "n", permute=False)     # `timeout 5 rm -rf /`: rm's options are rm's
    assert stopped.options == [] and stopped.operands == [0, 1, 2, 3]


def test_index_points_at_the_word_holding_the_option() -> None:
    p = parse(_words("-v -t /tmp/x a b"), "t", ("--target-directory",))
    assert p.index("-t", "--target-directory") == 1
    assert p.index("-z") is None
    assert p.operands == [3, 4]
