"""git: reading forms are allowed, history and network are weighed, and anything that can run a program asks."""

from __future__ import annotations

import shlex
from collections.abc import Callable
from pathlib import Path

import pytest

from core.policy.bash.findings import Judgement
from core.policy.bash.git import judge_git

from .harness import Bash, env_at, fill, word

Git = Callable[[str], Judgement]


@pytest.fixture
def git(ws: Path, home: Path, outside: Path) -> Git:
    """Judges `git ARGS`, with `{OUT}` and `{HOME}` filled in, started in the workspace root."""
    env = env_at(ws, home)

    def judged(line: str) -> Judgement:
        text = fill(line, outside, home)
        words = [word(t)
                 for t in shlex.split(text)]
        j = Judgement()
        judge_git(words, env, j, f"git {text}")
        return j
    return judged


@pytest.mark.parametrize("args", [
    "status", "log --oneline -5", "diff HEAD~1", "show HEAD:src/app.py", "--no-pager log", "-C src status",
    "branch", "branch -a", "branch -l 'x*'", "tag", "stash list", "remote", "worktree list", "reflog",
    "config core.pager", "config --get user.name", "config --get core.editor", "clean -n", "grep TODO", "",
])
def test_reading_forms_only_read(git: Git, args: str) -> None:
    j = git(args)
    assert j.effect == "read", j.why
    assert not j.impact


@pytest.mark.parametrize(("args", "why"), [
    ("-c core.fsmonitor=id status", "-c changes git's configuration"),
    ("-c alias.st='!id' st", "-c changes git's configuration"),
    ("--git-dir={OUT}/.git log", "--git-dir changes git's configuration"),
    ("--work-tree={OUT} status", "--work-tree changes git's configuration"),
    ("--exec-path=. status", "--exec-path changes git's configuration"),
    ("-C {OUT} status", "outside the workspace"),
    ("--bogus status", "unknown git option"),
    ("$SUB", "only known at run time"),
    ("log $(ls)", "only known at run time"),
    ("rebase --exec id main", "makes git run a command"),
    ("rebase -xid main", "makes git run a command"),
    ("submodule foreach id", "makes git run a command"),
    ("bisect run ./t.sh", "makes git run a command"),
    ("clone --upload-pack=id x", "makes git run a command"),
    ("push --receive-pack=x origin", "makes git run a command"),
    ("grep -O x", "makes git run a command"),
    ("difftool -x id", "makes git run a command"),
    ("filter-branch --tree-filter true", "makes git run a command"),
    ("diff --ext-diff", "external diff"),
    ("log --output={OUT}/x", "writes a file"),
    ("format-patch -o out HEAD~1", "writes a file"),
])
def test_anything_that_can_make_git_run_a_program_asks(git: Git, args: str, why: str) -> None:
    j = git(args)
    assert j.effect == "ask" and why in j.why, j.why


@pytest.mark.parametrize(("args", "level", "reason"), [
    ("push --force origin main", "high", "rewrites history"),
    ("push origin +main", "high", "rewrites history"),
    ("reset --hard HEAD~3", "high", "rewrites history"),
    ("commit --amend -m x", "high", "rewrites history"),
    ("clean -f -d", "high", "rewrites history or discards work"),
    ("stash drop", "high", "rewrites history"),
    ("push origin main", "medium", "network"),
    ("fetch", "medium", "network"),
    ("commit -m x", "medium", "changes the repository"),
    ("frobnicate", "medium", "changes the repository"),
])
def test_changing_forms_need_a_rule_and_say_how_much_they_could_hurt(git: Git, args: str, level: str,
                                                                     reason: str) -> None:
    j = git(args)
    assert j.effect == "run", j.why
    assert any(lv == level and reason in r for lv, r in j.impact), j.impact


@pytest.mark.parametrize(("args", "effect", "why"), [
    ("config --global core.pager less", "deny", "outside the workspace"),
    ("config --system a.b c", "deny", "outside the workspace"),
    ("config --file={OUT}/c a.b c", "deny", "writes outside the workspace"),
    ("config -f x.cfg a.b c", "run", "changes git configuration"),
    ("config core.editor vim", "run", "changes git configuration"),
    ("config --unset core.editor", "run", "changes git configuration"),
    ("config -f {HOME}/.ssh/id_rsa --list", "deny", "reads a secret"),
])
def test_git_config_is_judged_by_where_it_writes(git: Git, args: str, effect: str, why: str) -> None:
    j = git(args)
    assert j.effect == effect and why in j.why, j.why


def test_the_repository_config_is_protected_and_files_read_from_anywhere_are_checked(git: Git) -> None:
    local = git("config core.editor vim")
    assert local.protected is not None and ".git/config" in local.protected
    for args in ("diff --no-index {HOME}/.ssh/id_rsa notes.txt", "grep --no-index x {HOME}/.ssh/id_rsa",
                 "blame --contents {HOME}/.ssh/id_rsa src/app.py", "blame --contents={HOME}/.ssh/id_rsa x"):
        j = git(args)
        assert j.effect == "deny" and "reads a secret" in j.why, args
    assert git("diff --no-index /etc/hostname notes.txt").effect == "run"


@pytest.mark.parametrize("command", [
    "git config --global --list", "git config --list", "git config -l", "git config --show-origin -l",
    "git config --get-regexp url", "git config user.password", "git config --get user.password",
    "git config --global http.extraHeader", "git config remote.origin.url", "git config get --all user.email",
    "git config --lis", "git config list", "git var -l", "git config credential.helper", "git remote -v",
    "git remote get-url origin",
])
def test_a_config_read_that_may_show_a_token_needs_a_rule(bash: Bash, command: str) -> None:
    """~/.gitconfig can hold tokens (url.<token>.insteadOf, inline credential helpers, extra headers)."""
    analysis = bash.analysis(command)
    assert analysis.verdict_hint == "ask", analysis.reason
    assert bash(command).action == "ask"
    assert bash.rules(allow=("Bash(git config:*)", "Bash(git var:*)", "Bash(git remote:*)"))(command).action == "allow"


@pytest.mark.parametrize("command", ["git config user.name", "git config --global user.email", "git config core.pager",
                                     "git config --type=bool core.bare", "git config -f x.cfg a.b"])
def test_a_config_read_of_a_setting_stays_read_only(bash: Bash, command: str) -> None:
    assert bash.analysis(command).verdict_hint == "allow", bash.analysis(command).reason


@pytest.mark.parametrize("command", [
    "git grep -O'sh -c id' x", "git grep -Oid x", "git grep -nO'id' x", "git grep -nOid x",
    "git grep --open-files-in-pager=id x", "git grep --open-files-in-p=id x", "git grep --open=id x",
    "git grep --ope=id x", "git diff --ext-d", "git log --outp=x", "git rebase -ix id main", "git clone -qu id x y",
    "git push --rec=id origin", "git fetch --upload=id", "git blame --cont=/etc/hostname src/app.py",
    "git branch --del main", "git tag --del v1", "git diff --no-i /etc/hostname notes.txt",
    "git grep -f/etc/hostname x", "git grep -nf /etc/hostname x", "git blame -S /etc/hostname src/app.py",
    "git blame --ignore-revs-f=/etc/hostname src/app.py",
])
def test_a_bundled_or_abbreviated_option_is_read_as_git_reads_it(bash: Bash, command: str) -> None:
    """git reads `-nOcmd` as -n and -O cmd, and takes any unambiguous start of a long option."""
    analysis = bash.analysis(command)
    assert analysis.verdict_hint == "ask", analysis.reason
    assert bash(command).action == "ask"
