"""Variables whose value decides what later commands run, and array subscripts that evaluate code."""

from __future__ import annotations

import pytest

from core.policy.bash.variables import dangerous_variable, named_at_run_time, risky_subscript
from core.policy.bash.words import WordValue

from .harness import Bash


@pytest.mark.parametrize("name", [
    "PATH", "BASH_ENV", "ENV", "PROMPT_COMMAND", "PS4", "IFS", "HOME", "CDPATH", "PAGER", "EDITOR", "PYTHONPATH",
    "NODE_OPTIONS", "LD_PRELOAD", "LD_LIBRARY_PATH", "DYLD_INSERT_LIBRARIES", "GIT_SSH_COMMAND", "GIT_DIR",
    "git_dir", "BASH_FUNC_ls%%", "SSH_ASKPASS", "PATH[0]", "npm_config_prefix", "PIP_INDEX_URL",
])
def test_variables_that_change_what_runs_are_dangerous(name: str) -> None:
    assert dangerous_variable(name)


@pytest.mark.parametrize("name", ["X", "path", "LANG", "LC_ALL", "TZ", "count", "Pathname", "MY_PATH", "a[1]"])
def test_ordinary_variables_are_not(name: str) -> None:
    assert not dangerous_variable(name)


@pytest.mark.parametrize(("name", "risky"), [
    ("x", False),
    ("a[1]", False),
    ("a[ 12 ]", False),
    ("a[@]", False),
    ("a[*]", False),
    ("m['key']", False),
    ('m["key"]', False),
    ("a[i]", True),              # i's value is evaluated again: `i='b[$(cmd)]'` runs cmd
    ("a[$i]", True),
    ("a[1+1]", True),
    ("a[$(id)]", True),
    ("a[ n ]", True),
])
def test_only_a_literal_subscript_is_safe_to_assign(name: str, risky: bool) -> None:
    assert risky_subscript(name) is risky


@pytest.mark.parametrize(("command", "hint"), [
    ("PATH=/tmp/evil:$PATH ls", "ask"),
    ("LD_PRELOAD=./x.so cat notes.txt", "ask"),
    ("GIT_SSH_COMMAND=id git fetch", "ask"),
    ("export PYTHONPATH=.", "ask"),
    ("read -r IFS", "ask"),
    ("printf -v PS4 x", "ask"),
    ("LANG=C ls", "allow"),
    ("X=1 ls", "allow"),
])
def test_setting_one_asks_whether_as_a_prefix_alone_or_by_a_builtin(bash: Bash, command: str, hint: str) -> None:
    analysis = bash.analysis(command)
    assert analysis.verdict_hint == hint, analysis.reason
    if hint == "ask":
        assert "which changes what later commands run" in analysis.reason


@pytest.mark.parametrize(("words", "splits", "risky"), [
    (["-v", "x[$(id)]"], False, "x[$(id)]"), (["-v", "x[i]"], False, "x[i]"), (["-v", "x[1]"], False, None),
    (["-R", "$x"], False, "$x"), (["$x", "=", "y"], False, None), (["$x"], True, "$x"), (['"$x"'], True, None),
    (['"$x"', "a[i]"], True, "a[i]"), (["-np", "$v"], True, "$v"),
])
def test_a_name_looked_up_at_run_time_is_found(words: list[str], splits: bool, risky: str | None) -> None:
    values = [WordValue(w, w, 0, 0, frozenset({"variable"}) if "$x" in w or "$v" in w else frozenset())
              for w in words]
    found = named_at_run_time(values, splits, frozenset({"-v", "-R", "-p"}))
    assert (found.source if found is not None else None) == risky
