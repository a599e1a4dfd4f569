"""Tests for core.undo.git: the references a call moved, moved back on real repositories, never over later moves."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from core.changes.gitstate import describe_changes, read_git_state
from core.errors import BelayError, ErrorKind
from core.models.records import GitChange
from core.undo.git import RefStep, apply_refs, inverse, plan_refs

Git = Callable[..., str]


@pytest.fixture
def git(tmp_path: Path) -> Git:
    """The real git in the repository under test, isolated from the user's config."""
    home = tmp_path / "home"
    home.mkdir()
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "LC_ALL": "C",
           "GIT_CONFIG_NOSYSTEM": "1", "GIT_AUTHOR_NAME": "Test", "GIT_AUTHOR_EMAIL": "test@example.com",
           "GIT_COMMITTER_NAME": "Test", "GIT_COMMITTER_EMAIL": "test@example.com"}

    def run(*args: str) -> str:
        return subprocess.run(["git", "-c", "init.defaultBranch=main", *args], cwd=tmp_path / "ws", env=env,
                              capture_output=True, text=True, check=True).stdout.strip()

    return run


@pytest.fixture
def repo(tmp_path: Path, git: Git) -> Path:
    """A repository on main with one commit of a.txt."""
    ws = tmp_path / "ws"
    ws.mkdir()
    git("init", "-q")
    (ws / "a.txt").write_text("first\n")
    git("add", "a.txt")
    git("commit", "-qm", "First")
    return ws


def by_the_call(repo: Path, *commands: Callable[[], object]) -> list[tuple[int, GitChange]]:
    """What a call running `commands` moved, as the tracker records it (positions -1, -2... as the journal's)."""
    before = read_git_state(repo)
    for command in commands:
        command()
    return [(-1 - i, change) for i, change in enumerate(describe_changes(before, read_git_state(repo), repo))]


def undo(repo: Path, moved: list[tuple[int, GitChange]]) -> list[RefStep]:
    """Plan the undo and move back what can be: what the undo service does with a call's references."""
    steps = plan_refs(repo, moved)
    apply_refs(repo, [s for s in steps if s.action == "restore"])
    return steps


def test_an_undone_commit_moves_the_branch_back_and_leaves_its_work_staged(repo: Path, git: Git) -> None:
    first = git("rev-parse", "main")
    (repo / "a.txt").write_text("second\n")
    moved = by_the_call(repo, lambda: git("commit", "-qam", "Second"))
    assert [(c.ref, c.kind) for _, c in moved] == [("refs/heads/main", "commit")]

    assert [s.action for s in undo(repo, moved)] == ["restore"]

    assert git("rev-parse", "main") == first
    assert git("symbolic-ref", "HEAD") == "refs/heads/main"  # still on the branch, not detached
    assert (repo / "a.txt").read_text() == "second\n"  # like reset --soft: the work is still there...
    assert git("diff", "--cached", "--name-only") == "a.txt"  # ...and staged, ready to commit again


def test_an_undone_reset_puts_the_branch_forward_again(repo: Path, git: Git) -> None:
    (repo / "a.txt").write_text("second\n")
    git("commit", "-qam", "Second")
    second = git("rev-parse", "main")
    moved = by_the_call(repo, lambda: git("reset", "-q", "--hard", "HEAD~1"))
    assert [c.kind for _, c in moved] == ["reset"]

    undo(repo, moved)

    assert git("rev-parse", "main") == second
    assert git("log", "--format=%s", "main") == "Second\nFirst"


def test_a_branch_the_call_made_is_removed_and_one_it_removed_is_made_again(repo: Path, git: Git) -> None:
    git("branch", "old-work")
    old_work = git("rev-parse", "old-work")
    moved = by_the_call(repo, lambda: git("branch", "feature"), lambda: git("branch", "-qD", "old-work"))
    assert sorted((c.ref, c.kind) for _, c in moved) == [("refs/heads/feature", "created"),
                                                         ("refs/heads/old-work", "deleted")]

    undo(repo, moved)

    assert git("branch", "--list", "feature") == ""
    assert git("rev-parse", "refs/heads/old-work") == old_work


def test_a_reference_moved_again_since_the_call_is_a_conflict_and_left_where_it_is(repo: Path, git: Git) -> None:
    moved = by_the_call(repo, lambda: git("commit", "-q", "--allow-empty", "-m", "By the call"))
    git("commit", "-q", "--allow-empty", "-m", "By the person, after it")
    latest = git("rev-parse", "main")

    [step] = undo(repo, moved)

    assert step.action == "conflict" and latest[:12] in step.reason
    assert git("rev-parse", "main") == latest


def test_a_move_planned_before_the_reference_moved_again_is_refused_by_git(repo: Path, git: Git) -> None:
    moved = by_the_call(repo, lambda: git("commit", "-q", "--allow-empty", "-m", "By the call"))
    steps = plan_refs(repo, moved)
    assert [s.action for s in steps] == ["restore"]
    git("commit", "-q", "--allow-empty", "-m", "By the person, while the undo was being decided")
    latest = git("rev-parse", "main")

    with pytest.raises(BelayError) as refused:
        apply_refs(repo, steps)

    assert refused.value.info.kind is ErrorKind.CONFLICT and "refs/heads/main" in refused.value.info.message
    assert git("rev-parse", "main") == latest


def test_a_checkout_that_changed_files_is_not_undone_and_a_reference_already_back_needs_nothing(
        repo: Path, git: Git) -> None:
    first = git("rev-parse", "main")
    git("switch", "-qc", "other")
    git("commit", "-q", "--allow-empty", "-m", "On other")  # switching back to main would change the checkout
    git("switch", "-q", "main")
    moved = by_the_call(repo, lambda: git("commit", "-q", "--allow-empty", "-m", "By the call"),
                        lambda: git("checkout", "-q", "other"))
    git("branch", "-qf", "main", first)  # the person took the commit back already

    steps = {s.change.ref: s.action for s in undo(repo, moved)}

    assert steps == {"HEAD": "unrestorable", "refs/heads/main": "already"}
    assert git("symbolic-ref", "HEAD") == "refs/heads/other"  # which branch is checked out is the person's call
    assert git("rev-parse", "main") == first


def test_the_undo_of_an_undone_commit_puts_the_commit_back(repo: Path, git: Git) -> None:
    moved = by_the_call(repo, lambda: git("commit", "-q", "--allow-empty", "-m", "By the call"))
    by_call = git("rev-parse", "main")
    undo(repo, moved)
    own = [(seq, inverse(change)) for seq, change in moved]  # what the undo records as its own moves
    assert [c.kind for _, c in own] == ["reset"]

    undo(repo, own)

    assert git("rev-parse", "main") == by_call


def test_undoing_runs_none_of_the_repository_s_own_programs(repo: Path, git: Git, tmp_path: Path) -> None:
    # The repository is agent-written: a hook it carries would run in the console's own, unsandboxed process.
    marker = tmp_path / "hook-ran"
    for hook in ("reference-transaction", "post-checkout", "post-commit", "pre-commit"):
        path = repo / ".git" / "hooks" / hook
        path.write_text(f"#!/bin/sh\necho {hook} >> '{marker}'\n")
        path.chmod(0o755)
    (repo / "fsmonitor").write_text(f"#!/bin/sh\necho fsmonitor >> '{marker}'\n")
    (repo / "fsmonitor").chmod(0o755)
    git("config", "core.fsmonitor", str(repo / "fsmonitor"))
    moved = by_the_call(repo, lambda: git("-c", "core.hooksPath=/dev/null", "commit", "-q", "--allow-empty",
                                          "-m", "By the call"))
    marker.unlink(missing_ok=True)  # whatever the call's own git ran is the call's

    assert [s.action for s in undo(repo, moved)] == ["restore"]

    assert git("log", "--format=%s", "main") == "First"
    assert not marker.exists(), marker.read_text()


def test_undoing_a_switch_to_a_new_branch_puts_head_back_before_removing_the_branch(repo: Path, git: Git) -> None:
    first = git("rev-parse", "main")
    moved = by_the_call(repo, lambda: git("switch", "-qc", "topic"))
    assert sorted((c.ref, c.kind) for _, c in moved) == [("HEAD", "checkout"), ("refs/heads/topic", "created")]

    steps = undo(repo, moved)

    assert git("symbolic-ref", "HEAD") == "refs/heads/main"  # never on a branch that is gone
    assert git("rev-parse", "HEAD") == first
    assert git("branch", "--list", "topic") == ""
    assert {s.change.ref: s.action for s in steps} == {"HEAD": "restore", "refs/heads/topic": "restore"}


def test_a_new_branch_head_is_on_is_kept_when_head_cannot_go_back(repo: Path, git: Git) -> None:
    moved = by_the_call(repo, lambda: git("switch", "-qc", "topic"))
    git("commit", "-q", "--allow-empty", "-m", "By the person, on topic")
    git("branch", "-qf", "topic-tip", "topic")
    git("reset", "-q", "--soft", "HEAD~1")  # topic is back where the call left it, but main...
    git("branch", "-qf", "main", "topic-tip")  # ...moved on: switching back would change the checkout

    steps = {s.change.ref: s for s in undo(repo, moved)}

    assert git("symbolic-ref", "HEAD") == "refs/heads/topic"  # HEAD stays, and so does its branch
    assert git("rev-parse", "topic") == git("rev-parse", "main~1")
    assert steps["HEAD"].action == "unrestorable" and "change the checked-out files" in steps["HEAD"].reason
    assert steps["refs/heads/topic"].action == "unrestorable" and "HEAD is on it" in steps["refs/heads/topic"].reason


def test_the_undo_of_an_undone_switch_to_a_new_branch_makes_it_and_switches_to_it_again(repo: Path, git: Git) -> None:
    moved = by_the_call(repo, lambda: git("switch", "-qc", "topic"))
    undo(repo, moved)
    own = [(seq, inverse(change)) for seq, change in moved]

    assert {s.change.ref: s.action for s in undo(repo, own)} == {"HEAD": "restore", "refs/heads/topic": "restore"}

    assert git("symbolic-ref", "HEAD") == "refs/heads/topic"
    assert git("rev-parse", "topic") == git("rev-parse", "main")
