"""Which parts of a script may change the shell's directory: a `cd` in the current shell, not in a child one."""

from __future__ import annotations

import pytest
import tree_sitter_bash
from tree_sitter import Language, Parser

from core.policy.bash.moves import kids, moves

_PARSER = Parser(Language(tree_sitter_bash.language()))


@pytest.mark.parametrize(("script", "moved"), [
    ("cd src", True), ("\\cd src", True), ("'cd' src", True), ("builtin cd src", True), ("X=1 command cd src", True),
    ("pushd src", True), ("popd", True), ("if x; then cd src; fi", True), ("f() { cd src; }", True),
    ("(cd src)", False), ("echo $(cd src)", False), ("cd src &", False), ("ls src", False), ("echo cd", False),
])
def test_a_cd_in_the_current_shell_moves_one_in_a_child_shell_does_not(script: str, moved: bool) -> None:
    data = script.encode()
    assert moves(_PARSER.parse(data).root_node, data) is moved


def test_a_child_followed_by_an_ampersand_is_known_as_a_background_job() -> None:
    root = _PARSER.parse(b"cd a & ls; cd b").root_node
    assert [(c.type, background) for c, background in kids(root)] == [("command", True), ("command", False),
                                                                        ("command", False)]
