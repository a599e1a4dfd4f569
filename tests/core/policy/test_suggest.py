"""What "Always allow" would add: the narrowest rule that allows this call and its like, never a protected place."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from core.paths import resolved_paths
from core.policy.bash import analyse
from core.policy.decide import RuleSet, decide_bash, decide_tool
from core.policy.rules import parse_rule
from core.policy.settings import entry_from
from core.policy.suggest import suggest_for_bash, suggest_for_tool
from core.policy.verdicts import PolicyRequest


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / ".git" / "hooks").mkdir(parents=True)
    (ws / "src" / "pkg").mkdir(parents=True)
    (ws / "notes.txt").write_text("notes\n")
    return ws


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("PRIVATE KEY\n")
    return home


def allowing(rule: str, home: Path) -> RuleSet:
    return RuleSet((entry_from(rule, "allow", "session", None),), "default", str(home))


def write(ws: Path, rel: str, tool: str = "Write") -> PolicyRequest:
    args = {"file_path": str(ws / rel)}
    return PolicyRequest(tool, args, ws, paths=resolved_paths(args))


@pytest.mark.parametrize(("command", "rule", "alike", "other"), [
    ("npm run build -- --prod", "Bash(npm run build:*)", "npm run build", "npm run deploy"),
    ("git commit -m 'Fix rounding'", "Bash(git commit:*)", "git commit --amend", "git push --force"),
    ("python3 -m pytest -q tests", "Bash(python3 -m pytest:*)", "python3 -m pytest -x", "python3 -m pip install x"),
    ("docker compose up -d", "Bash(docker compose:*)", "docker compose down", "docker run --privileged x"),
    ("./my\\ tool.sh --fast", "Bash('./my tool.sh':*)", "'./my tool.sh'", "./my"),
])
def test_the_suggestion_allows_the_call_and_its_like_and_no_other_subcommand(ws: Path, home: Path, command: str,
                                                                             rule: str, alike: str,
                                                                             other: str) -> None:
    analysis = analyse(command, ws, str(home))
    assert suggest_for_bash(analysis) == rule
    rules = allowing(rule, home)
    assert parse_rule(rule).text == rule  # stored as suggested
    assert decide_bash(analysis, rules, None).action == "allow"
    assert decide_bash(analyse(alike, ws, str(home)), rules, None).action == "allow"
    assert decide_bash(analyse(other, ws, str(home)), rules, None).action == "ask"


@pytest.mark.parametrize("command", [
    "make\u200b build",                      # a hidden character: denied outright
    "make (",                                # cannot be parsed
    "cp ~/.ssh/id_rsa key.txt",              # reads a secret
    "cp notes.txt ../elsewhere.txt",         # writes outside the workspace
    "cp notes.txt .git/hooks/pre-commit",    # writes a protected path
    "git status",                            # reads only: nothing to allow
])
def test_no_suggestion_where_no_rule_may_or_need_allow_the_call(ws: Path, home: Path, command: str) -> None:
    assert suggest_for_bash(analyse(command, ws, str(home))) is None


def test_an_accepted_suggestion_still_lets_no_protected_path_or_secret_through(ws: Path, home: Path) -> None:
    rule = suggest_for_bash(analyse("cp notes.txt backup.txt", ws, str(home)))
    assert rule == "Bash(cp:*)"
    rules = allowing(rule, home)
    assert decide_bash(analyse("cp notes.txt copy.txt", ws, str(home)), rules, None).action == "allow"
    assert decide_bash(analyse("cp notes.txt .git/hooks/pre-commit", ws, str(home)), rules, None).action == "ask"
    assert decide_bash(analyse("cp ~/.ssh/id_rsa key.txt", ws, str(home)), rules, None).action == "deny"
    edit = suggest_for_tool(write(ws, "src/pkg/a.py"))
    assert edit == "Edit(./src/**)"
    assert decide_tool(write(ws, "src/b.py", "MultiEdit"), allowing(edit, home)).action == "allow"
    assert decide_tool(write(ws, "notes.txt"), allowing(edit, home)).action == "ask"
    assert decide_tool(write(ws, "src/.git/config"), allowing(edit, home)).action == "ask"  # a nested repository


def test_a_write_that_no_rule_may_allow_gets_no_suggestion(ws: Path, home: Path) -> None:
    os.symlink(ws / ".git" / "hooks" / "pre-commit", ws / "innocent.sh")
    assert suggest_for_tool(write(ws, "innocent.sh")) is None  # it leads into .git
    assert suggest_for_tool(write(ws, "src/.claude/settings.json")) is None  # protected at any depth
    assert suggest_for_tool(write(ws, "../outside.txt")) is None
    assert suggest_for_tool(PolicyRequest("Write", {"file_path": str(ws)}, ws)) is None  # the workspace itself
    assert suggest_for_tool(PolicyRequest("Write", {"file_path": "src/a.py"}, ws)) is None  # relative: unknown
    both = PolicyRequest("MultiEdit", {}, ws, paths=(ws / "src" / "a.py", ws / "docs" / "b.md"))
    assert suggest_for_tool(both) is None  # two top directories: no one narrow rule covers both
    assert suggest_for_tool(write(ws, "README.md")) == "Edit(./README.md)"
