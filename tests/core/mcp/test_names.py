"""MCP tool names in Belay: `mcp__<server>__<tool>` within [A-Za-z0-9_-], at most 64, unique, stable."""

from __future__ import annotations

import re

import pytest

from core.mcp.names import MAX_NAME, server_name_problem, tool_names
from core.policy.rules import parse_rule

ALLOWED = re.compile(r"[A-Za-z0-9_-]{1,64}")


def test_plain_names_are_kept_and_others_are_made_safe() -> None:
    names = tool_names("gh", ["search_issues", "repo.list", "café menu", ""])
    assert names == {"search_issues": "mcp__gh__search_issues", "repo.list": "mcp__gh__repo_list",
                     "café menu": "mcp__gh__caf__menu", "": "mcp__gh___"}
    assert all(ALLOWED.fullmatch(n) for n in names.values())


def test_names_that_become_equal_get_a_stable_suffix_whatever_the_order() -> None:
    forward = tool_names("s", ["a.b", "a_b", "a-b", "a b"])
    backward = tool_names("s", ["a b", "a-b", "a_b", "a.b"])
    assert forward == backward
    assert forward["a_b"] == "mcp__s__a_b" and forward["a-b"] == "mcp__s__a-b"  # unchanged names keep theirs
    assert re.fullmatch(r"mcp__s__a_b-[0-9a-f]{8}", forward["a.b"])
    assert len(set(forward.values())) == 4


def test_long_names_are_cut_to_64_and_stay_distinct() -> None:
    long_a, long_b = "x" * 100 + "a", "x" * 100 + "b"
    names = tool_names("server", [long_a, long_b])
    assert all(len(n) <= MAX_NAME and ALLOWED.fullmatch(n) for n in names.values())
    assert names[long_a] != names[long_b]


def test_every_tool_name_makes_a_valid_policy_rule() -> None:
    for name in tool_names("my-server_1", ["get__thing", "ünïcode", "a/b/c"]).values():
        assert parse_rule(name).text == name


@pytest.mark.parametrize("name", ["github", "my-server", "a_b", "srv2"])
def test_good_server_names(name: str) -> None:
    assert server_name_problem(name) is None


@pytest.mark.parametrize("name", ["a__b", "_a", "b_", "with space", "dotted.name", "", "x" * 41])
def test_bad_server_names_are_refused_with_a_reason(name: str) -> None:
    problem = server_name_problem(name)
    assert problem is not None and repr(name) in problem
