"""Git state read from files, and moves described as a person would say them, on real repositories."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from core.changes import gitstate
from core.changes.gitstate import UNREADABLE, GitState, describe_changes, read_git_state
from core.models.records import GitChange

Git = Callable[..., str]


@pytest.fixture
def git(tmp_path: Path) -> Git:
    """Run the real git in the repository under test (or `cwd=`), isolated from the user's config."""
    home = tmp_path / "home"
    home.mkdir()
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "LC_ALL": "C",
           "GIT_CONFIG_NOSYSTEM": "1", "GIT_AUTHOR_NAME": "Test", "GIT_AUTHOR_EMAIL": "test@example.com",
           "GIT_COMMITTER_NAME": "Test", "GIT_COMMITTER_EMAIL": "test@example.com"}

    def run(*args: str, cwd: Path = tmp_path / "ws", stdin: str | None = None) -> str:
        proc = subprocess.run(["git", "-c", "init.defaultBranch=main", *args], cwd=cwd, env=env,
                              input=stdin, capture_output=True, text=True, check=True)
        return proc.stdout.strip()

    return run


@pytest.fixture
def repo(tmp_path: Path, git: Git) -> Path:
    """A repository on main with one commit."""
    ws = tmp_path / "ws"
    ws.mkdir()
    git("init", "-q")
    git("commit", "-q", "--allow-empty", "-m", "Initial")
    return ws


def changes_from(repo: Path, action: Callable[[], object]) -> list[GitChange]:
    before = read_git_state(repo)
    action()
    return describe_changes(before, read_git_state(repo), repo)


def commit(git: Git, message: str, **kwargs: Path) -> str:
    git("commit", "-q", "--allow-empty", "-m", message, **kwargs)
    return git("rev-parse", "HEAD", **kwargs)


def test_a_repository_state_is_head_and_every_ref(repo: Path, git: Git) -> None:
    git("tag", "v1")
    git("update-ref", "refs/remotes/origin/main", "HEAD")
    (repo / "notes.txt").write_text("work in progress")
    git("stash", "-q", "--include-untracked")
    state = read_git_state(repo)
    main = git("rev-parse", "main")
    assert state is not None and state.head == "ref: refs/heads/main"
    assert set(state.refs) == {"refs/heads/main", "refs/tags/v1", "refs/remotes/origin/main", "refs/stash"}
    assert state.refs["refs/heads/main"] == state.refs["refs/tags/v1"] == main
    assert state == read_git_state(repo)


def test_one_commit_on_a_branch(repo: Path, git: Git) -> None:
    old = git("rev-parse", "HEAD")
    ids: list[str] = []
    [change] = changes_from(repo, lambda: ids.append(commit(git, "Fix rounding\n\nLonger body.")))
    assert change == GitChange(ref="refs/heads/main", kind="commit", before=old, after=ids[0],
                               what=f"commit {ids[0][:7]} on main: Fix rounding")


def test_several_commits_name_the_newest(repo: Path, git: Git) -> None:
    changes = changes_from(repo, lambda: [commit(git, m) for m in ("One", "Two", "Three\nwrapped")])
    assert [(c.ref, c.kind, c.what) for c in changes] == [
        ("refs/heads/main", "commit", "3 commits on main: Three wrapped")]


def test_reset_hard_back(repo: Path, git: Git) -> None:
    for message in ("One", "Two"):
        commit(git, message)
    target = git("rev-parse", "HEAD~2")
    [change] = changes_from(repo, lambda: git("reset", "-q", "--hard", "HEAD~2"))
    assert (change.kind, change.after) == ("reset", target)
    assert change.what == f"reset main back 2 commits (to {target[:7]})"


def test_checkout_of_another_branch_is_one_head_change(repo: Path, git: Git) -> None:
    git("branch", "feature")
    [change] = changes_from(repo, lambda: git("checkout", "-q", "feature"))
    assert change == GitChange(ref="HEAD", kind="checkout", before="ref: refs/heads/main",
                               after="ref: refs/heads/feature", what="checkout feature (was main)")


def test_checkout_new_branch_lists_head_first_then_refs_by_name(repo: Path, git: Git) -> None:
    def action() -> None:
        git("tag", "a-tag")
        git("checkout", "-q", "-b", "zeta")
        commit(git, "On zeta")

    changes = changes_from(repo, action)
    assert [(c.ref, c.kind) for c in changes] == [
        ("HEAD", "checkout"), ("refs/heads/zeta", "created"), ("refs/tags/a-tag", "created")]
    assert changes[1].what == f"created branch zeta at {changes[1].after[:7]}"  # type: ignore[index]


def test_checkout_detach_then_commit_on_the_detached_head(repo: Path, git: Git) -> None:
    main = git("rev-parse", "HEAD")
    [detach] = changes_from(repo, lambda: git("checkout", "-q", "--detach"))
    assert (detach.ref, detach.kind, detach.after) == ("HEAD", "checkout", main)
    assert detach.what == f"detach HEAD at {main[:7]} (was main)"
    ids: list[str] = []
    [moved] = changes_from(repo, lambda: ids.append(commit(git, "Experiment")))
    assert (moved.ref, moved.kind) == ("HEAD", "commit")
    assert moved.what == f"commit {ids[0][:7]} on detached HEAD: Experiment"
    [back] = changes_from(repo, lambda: git("checkout", "-q", "main"))
    assert back.what == f"checkout main (was detached {ids[0][:7]})"


def test_branch_create_and_delete(repo: Path, git: Git) -> None:
    main = git("rev-parse", "HEAD")
    [created] = changes_from(repo, lambda: git("branch", "feature"))
    assert (created.kind, created.before, created.after) == ("created", None, main)
    assert created.what == f"created branch feature at {main[:7]}"
    [deleted] = changes_from(repo, lambda: git("branch", "-q", "-D", "feature"))
    assert (deleted.kind, deleted.before, deleted.after) == ("deleted", main, None)
    assert deleted.what == f"deleted branch feature (was {main[:7]})"


def test_tags_created_light_and_annotated(repo: Path, git: Git) -> None:
    changes = changes_from(repo, lambda: (git("tag", "v1"), git("tag", "-a", "v2", "-m", "Release")))
    assert [(c.ref, c.kind, c.after) for c in changes] == [
        ("refs/tags/v1", "created", git("rev-parse", "v1")), ("refs/tags/v2", "created", git("rev-parse", "v2"))]
    assert changes[0].what.startswith("created tag v1 at ")


def test_packed_refs_with_a_loose_override(repo: Path, git: Git) -> None:
    git("tag", "-a", "v1", "-m", "Release")  # packed with a peeled "^" line
    git("branch", "feature")
    unpacked = read_git_state(repo)
    git("pack-refs", "--all")
    assert not (repo / ".git" / "refs" / "heads" / "main").exists()
    assert "^" in (repo / ".git" / "packed-refs").read_text()
    assert read_git_state(repo) == unpacked
    ids: list[str] = []
    [change] = changes_from(repo, lambda: ids.append(commit(git, "After packing")))
    assert (change.ref, change.kind, change.after) == ("refs/heads/main", "commit", ids[0])
    assert read_git_state(repo).refs["refs/tags/v1"] == git("rev-parse", "v1")  # type: ignore[union-attr]


def test_a_packed_refs_file_larger_than_one_read(repo: Path, git: Git) -> None:
    head = git("rev-parse", "HEAD")
    git("update-ref", "--stdin", stdin="".join(f"create refs/tags/t{i:04} {head}\n" for i in range(1500)))
    git("pack-refs", "--all")
    assert (repo / ".git" / "packed-refs").stat().st_size > 65536
    assert len(read_git_state(repo).refs) == 1501  # type: ignore[union-attr]


def test_a_linked_worktree_reads_its_own_head_and_the_shared_refs(repo: Path, git: Git, tmp_path: Path) -> None:
    wt = tmp_path / "wt"
    git("worktree", "add", "-q", "-b", "side", str(wt))
    state = read_git_state(wt)
    assert state is not None and state.head == "ref: refs/heads/side"
    assert state.refs["refs/heads/main"] == git("rev-parse", "main")
    ids: list[str] = []
    [change] = changes_from(wt, lambda: ids.append(commit(git, "From the worktree", cwd=wt)))
    assert change.what == f"commit {ids[0][:7]} on side: From the worktree"
    assert read_git_state(repo).head == "ref: refs/heads/main"  # type: ignore[union-attr]


def test_a_gitdir_file_points_at_the_repository(tmp_path: Path, git: Git) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    git("init", "-q", "--separate-git-dir", str(tmp_path / "elsewhere.git"))
    assert (ws / ".git").is_file()
    ids: list[str] = []
    [first] = changes_from(ws, lambda: ids.append(commit(git, "Initial")))
    assert (first.ref, first.after) == ("refs/heads/main", ids[0])


def test_git_init_then_first_commit_then_removing_the_repository(tmp_path: Path, git: Git) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    assert read_git_state(ws) is None
    [created] = changes_from(ws, lambda: git("init", "-q"))
    assert created == GitChange(ref="HEAD", kind="created", before=None, after="ref: refs/heads/main",
                                what="created git repository on main")
    ids: list[str] = []
    [first] = changes_from(ws, lambda: ids.append(commit(git, "Initial")))
    assert (first.ref, first.kind, first.what) == ("refs/heads/main", "commit", f"commit {ids[0][:7]} on main: Initial")
    [deleted] = changes_from(ws, lambda: shutil.rmtree(ws / ".git"))
    assert (deleted.ref, deleted.kind, deleted.after) == ("HEAD", "deleted", None)
    assert deleted.what == "deleted git repository (was on main)"


def test_not_a_repository(tmp_path: Path) -> None:
    assert read_git_state(tmp_path / "missing") is None
    assert read_git_state(tmp_path) is None
    (tmp_path / ".git").write_text("gitdir: nowhere\n")
    assert read_git_state(tmp_path) is None
    assert describe_changes(None, None, tmp_path) == []


def test_broken_files_are_skipped_not_raised(repo: Path) -> None:
    dot_git = repo / ".git"
    (dot_git / "refs" / "heads" / "half").write_text("3f2a")
    (dot_git / "refs" / "heads" / "main.lock").write_text("0" * 40)
    (dot_git / "packed-refs").write_bytes(b"\xff\xfe garbage\n" + b"0" * 40 + b"\n")
    before = read_git_state(repo)
    assert before is not None and set(before.refs) == {"refs/heads/main"}
    (dot_git / "HEAD").write_bytes(b"\x00\xffnot a ref")
    after = read_git_state(repo)
    assert after == GitState(head=UNREADABLE, refs=before.refs)
    [change] = describe_changes(before, after, repo)
    assert (change.ref, change.kind, change.what) == ("HEAD", "moved", "HEAD is now an unreadable HEAD (was main)")


@pytest.mark.parametrize(("setting", "value"), [("GIT", "/no/such/git"), ("GIT_TIMEOUT", 0.0)])
def test_without_git_moves_are_described_with_short_ids(
        repo: Path, git: Git, monkeypatch: pytest.MonkeyPatch, setting: str, value: object) -> None:
    old = git("rev-parse", "HEAD")
    before = read_git_state(repo)
    new = commit(git, "Unseen")
    monkeypatch.setattr(gitstate, setting, value)
    [change] = describe_changes(before, read_git_state(repo), repo)
    assert (change.kind, change.what) == ("moved", f"moved main to {new[:7]} (was {old[:7]})")


def test_a_ref_to_a_missing_commit_falls_back_quietly(repo: Path) -> None:
    before = read_git_state(repo)
    (repo / ".git" / "refs" / "heads" / "main").write_text("ab" * 20 + "\n")
    [change] = describe_changes(before, read_git_state(repo), repo)
    assert (change.kind, change.after) == ("moved", "ab" * 20)


def test_the_callers_git_environment_is_ignored(repo: Path, git: Git, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GIT_DIR", str(repo / "elsewhere"))
    monkeypatch.setenv("GIT_OBJECT_DIRECTORY", str(repo / "elsewhere"))
    [change] = changes_from(repo, lambda: commit(git, "Still described"))
    assert change.what.endswith("on main: Still described")


def test_reading_fifty_loose_refs_is_fast(repo: Path, git: Git, monkeypatch: pytest.MonkeyPatch) -> None:
    head = git("rev-parse", "HEAD")
    git("update-ref", "--stdin", stdin="".join(f"create refs/heads/b{i:02} {head}\n" for i in range(49)))

    def no_process(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"reading the git state started {args[0]}")

    # Fast because it reads files and starts no process (it runs around every command: under 1 ms here, where
    # starting git takes a few); bench/capture.py times it within a command's capture.
    monkeypatch.setattr(subprocess, "Popen", no_process)
    assert len(read_git_state(repo).refs) == 50  # type: ignore[union-attr]
