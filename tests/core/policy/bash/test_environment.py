"""Which variables a word shows, which ones a script sets harmlessly, and what prints the environment."""

from __future__ import annotations

import pytest
import tree_sitter_bash
from tree_sitter import Language, Parser

from core.policy.bash.environment import SCANNED, harmless_names, leaked, referenced

from .harness import word

_PARSER = Parser(Language(tree_sitter_bash.language()))


@pytest.mark.parametrize(("text", "names"), [
    ("$A", {"A"}), ("${A:-$B}", {"A", "B"}), ("${#A}", {"A"}), ("$?$1", {"?", "1"}), ("${!P*}", {"!"}),
    ("plain", set()),
])
def test_the_variables_a_word_expands_are_found(text: str, names: set[str]) -> None:
    assert referenced(text) == names


def test_a_variable_is_leaked_unless_well_known_or_set_harmlessly() -> None:
    assert leaked([word("$TOKEN")], frozenset()) == "TOKEN"
    assert leaked([word("$HOME"), word("$x")], frozenset({"x"})) is None


def test_a_word_too_long_to_look_into_counts_as_leaking() -> None:
    """Fail closed, in linear time: a run-time word longer than SCANNED is asked about, whatever it holds."""
    long = "$HOME/" + "a" * SCANNED
    assert leaked([word(long)], frozenset()) is not None
    assert leaked([word(long[:SCANNED])], frozenset()) is None


@pytest.mark.parametrize(("script", "harmless"), [
    ("x=1; y=$x; echo $y", {"x", "y"}), ("x=$TOKEN; y=$x", set()), ("for f in a b; do :; done", {"f"}),
    ("for f in $TOKEN; do :; done", set()), ("read line", {"line"}), ("x=1; x=$TOKEN", set()),
])
def test_a_name_set_from_a_secret_is_not_harmless(script: str, harmless: set[str]) -> None:
    data = script.encode()
    assert harmless_names(_PARSER.parse(data).root_node, data) == harmless
