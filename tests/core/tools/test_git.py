"""git_status, git_diff and git_commit on real repositories, with nothing from the repository's config run."""

from __future__ import annotations

import asyncio
import os
import stat
import subprocess
from pathlib import Path

import pytest

from core.changes.gitproc import GIT
from core.errors import ErrorKind, ToolError
from core.ids import AgentId, CallId
from core.paths import Workspace
from core.run import arguments
from core.tools import git as git_tools
from core.tools.base import ReadState, RunTool, ToolContext, ToolOutput
from core.tools.catalog import default_tools
from core.tools.git import GitCommit, GitDiff, GitStatus

TESTER = {"GIT_AUTHOR_NAME": "Tester", "GIT_AUTHOR_EMAIL": "tester@example.com",
          "GIT_COMMITTER_NAME": "Tester", "GIT_COMMITTER_EMAIL": "tester@example.com"}


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private HOME and no system config, so the developer's git config never leaks in."""
    home = tmp_path / "home"
    home.mkdir()
    for name in [n for n in os.environ if n.startswith("GIT_")]:
        monkeypatch.delenv(name)
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    return home


def git(cwd: Path, *args: str) -> str:
    """git as the test (not the tool) runs it, committing as Tester."""
    proc = subprocess.run([GIT, *args], cwd=cwd, env={**os.environ, **TESTER}, capture_output=True, text=True,
                          check=True)
    return proc.stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    git(ws, "init", "-q", "-b", "main")
    (ws / "app.py").write_text("total = round(price)\n")
    (ws / "README.md").write_text("# App\n")
    git(ws, "add", ".")
    git(ws, "commit", "-q", "-m", "Initial")
    return ws


def make_ctx(root: Path) -> ToolContext:
    return ToolContext(workspace=Workspace(root), agent_id=AgentId("a"), call_id=CallId("c"), read_state=ReadState())


def call(tool: RunTool, root: Path, **args: object) -> ToolOutput:
    return asyncio.run(tool.run(arguments.validate(tool, args), make_ctx(root)))


def call_error(tool: RunTool, root: Path, **args: object) -> ToolError:
    with pytest.raises(ToolError) as info:
        call(tool, root, **args)
    return info.value


def marker_hook(path: Path, marker: Path) -> None:
    """An executable script at `path` that creates `marker` and fails (a hook that would block a commit)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\ntouch '{marker}'\ncat\nexit 1\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


def last_commit(repo: Path) -> tuple[str, str, list[str]]:
    """Author, full message and the files changed of HEAD."""
    author = git(repo, "log", "-1", "--format=%an <%ae>").strip()
    message = git(repo, "cat-file", "commit", "HEAD").split("\n\n", 1)[1]
    files = git(repo, "show", "--name-status", "--format=", "HEAD").split("\n")
    return author, message, [f for f in files if f]


# git_status


def test_status_of_a_clean_repository(repo: Path) -> None:
    out = call(GitStatus(), repo)
    assert out.text == "On branch main\nNothing to commit, working tree clean."
    assert out.data == {"branch": "main", "upstream": None, "ahead": None, "behind": None, "staged": [],
                        "unstaged": [], "untracked": [], "conflicted": []}


def test_status_lists_staged_unstaged_and_untracked_files(repo: Path) -> None:
    git(repo, "mv", "README.md", "DOCS.md")
    (repo / "app.py").write_text("total = round(price, 2)\n")
    git(repo, "add", "app.py")
    (repo / "app.py").write_text("total = round(price, 2)  # cents\n")
    (repo / "notes.txt").write_text("todo\n")
    (repo / "build").mkdir()
    (repo / "build" / "out.o").write_bytes(b"\0")
    out = call(GitStatus(), repo)
    assert out.text == ("On branch main\n"
                        "Staged (2):\n  renamed: README.md -> DOCS.md\n  modified: app.py\n"
                        "Not staged (1):\n  modified: app.py\n"
                        "Untracked (2):\n  build/\n  notes.txt")
    assert out.data["staged"] == ["DOCS.md", "app.py"] and out.data["unstaged"] == ["app.py"]
    assert out.data["untracked"] == ["build/", "notes.txt"]


def test_status_says_how_far_the_branch_is_from_its_upstream(tmp_path: Path, repo: Path) -> None:
    git(tmp_path, "clone", "-q", str(repo), "clone")
    clone = tmp_path / "clone"
    (clone / "mine.txt").write_text("1\n")
    git(clone, "add", ".")
    git(clone, "commit", "-q", "-m", "Mine")
    (repo / "theirs.txt").write_text("2\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "Theirs")
    git(clone, "fetch", "-q")
    out = call(GitStatus(), clone)
    assert out.text.splitlines()[0] == "On branch main, ahead 1 and behind 1 of origin/main"
    assert (out.data["upstream"], out.data["ahead"], out.data["behind"]) == ("origin/main", 1, 1)
    git(clone, "reset", "-q", "--hard", "origin/main")
    assert call(GitStatus(), clone).text.splitlines()[0] == "On branch main, up to date with origin/main"


def test_status_of_a_new_repository_and_of_a_detached_head(tmp_path: Path, repo: Path) -> None:
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    git(fresh, "init", "-q", "-b", "trunk")
    assert call(GitStatus(), fresh).text == "On branch trunk, no commits yet\nNothing to commit, working tree clean."
    git(repo, "checkout", "-q", "--detach")
    out = call(GitStatus(), repo)
    assert out.text.startswith("HEAD detached\n") and out.data["branch"] is None


def test_a_workspace_that_is_not_a_repository_is_not_found(tmp_path: Path, repo: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    inside = repo / "sub"  # inside a repository, but not one: git must not reach the enclosing one
    inside.mkdir()
    for root in (plain, inside):
        for tool, args in ((GitStatus(), {}), (GitDiff(), {}), (GitCommit(), {"message": "x", "all": True})):
            error = call_error(tool, root, **args)
            assert error.kind is ErrorKind.NOT_FOUND
            assert error.info.message == f"the workspace {root} is not a git repository"
            assert "git init" in error.info.suggestion
    assert git(repo, "rev-list", "--count", "HEAD").strip() == "1"


# git_diff


def test_diff_shows_unstaged_changes_and_with_staged_what_is_staged(repo: Path) -> None:
    (repo / "app.py").write_text("total = round(price, 2)\n")
    (repo / "README.md").write_text("# App\nUsage.\n")
    git(repo, "add", "README.md")
    unstaged = call(GitDiff(), repo)
    assert unstaged.text.startswith("1 file changed, 1 insertion(+), 1 deletion(-)\n\ndiff --git a/app.py b/app.py\n")
    assert "-total = round(price)\n+total = round(price, 2)" in unstaged.text and "README" not in unstaged.text
    assert unstaged.data == {"files": ["app.py"], "added": 1, "removed": 1, "truncated": False}
    staged = call(GitDiff(), repo, staged=True)
    assert "+Usage." in staged.text and "app.py" not in staged.text
    assert staged.data == {"files": ["README.md"], "added": 1, "removed": 0, "truncated": False}
    both = call(GitDiff(), repo, ref="HEAD")
    assert both.data["files"] == ["README.md", "app.py"]


def test_diff_paths_limit_it_and_may_be_relative_or_absolute(repo: Path) -> None:
    (repo / "src").mkdir()
    (repo / "src" / "calc.py").write_text("a = 1\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "Add calc")
    (repo / "src" / "calc.py").write_text("a = 2\n")
    (repo / "app.py").write_text("changed\n")
    assert call(GitDiff(), repo, paths=["src"]).data["files"] == ["src/calc.py"]
    assert call(GitDiff(), repo, paths=[f"{repo}/app.py"]).data["files"] == ["app.py"]
    assert call(GitDiff(), repo, paths=["src/*.py"]).data["files"] == []  # paths are literal, not globs
    error = call_error(GitDiff(), repo, paths=["../elsewhere"])
    assert error.kind is ErrorKind.OUTSIDE_WORKSPACE and "paths[0]" in error.info.message


def test_diff_with_no_changes_says_so(repo: Path) -> None:
    assert call(GitDiff(), repo).text == ("No unstaged changes (untracked files are not shown; git_status lists"
                                          " them).")
    out = call(GitDiff(), repo, staged=True, paths=["app.py"])
    assert out.text == "No staged changes in app.py." and out.data["files"] == []


def test_diff_against_a_ref_that_does_not_exist_or_looks_like_an_option(repo: Path) -> None:
    error = call_error(GitDiff(), repo, ref="no-such-branch")
    assert error.kind is ErrorKind.INVALID_ARGS and "bad revision 'no-such-branch'" in error.info.message
    assert "ref" in error.info.suggestion
    error = call_error(GitDiff(), repo, ref="--output=/tmp/x")
    assert error.kind is ErrorKind.INVALID_ARGS and "ref" in error.info.message


def test_a_long_diff_is_cut_in_the_middle_like_bash_output(repo: Path) -> None:
    (repo / "app.py").write_text("".join(f"line {i}\n" for i in range(20_000)))
    out = call(GitDiff(), repo)
    assert out.data == {"files": ["app.py"], "added": 20_000, "removed": 1, "truncated": True}
    assert len(out.text) < 26_000 and "bytes cut ..." in out.text
    assert "+line 0\n" in out.text and out.text.endswith("+line 19999")


def test_diff_runs_no_external_diff_or_textconv_program(repo: Path, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    marker_hook(tmp_path / "prog", marker)
    git(repo, "config", "diff.external", str(tmp_path / "prog"))
    git(repo, "config", "diff.evil.textconv", str(tmp_path / "prog"))
    (repo / ".gitattributes").write_text("*.py diff=evil\n")
    (repo / "app.py").write_text("total = 0\n")
    assert "+total = 0" in call(GitDiff(), repo).text
    assert not marker.exists()


def test_filters_the_repository_config_defines_never_run(repo: Path, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    marker_hook(tmp_path / "filter", marker)
    git(repo, "config", "filter.evil.clean", str(tmp_path / "filter"))
    git(repo, "config", "filter.evil.process", str(tmp_path / "filter"))
    git(repo, "config", "filter.evil.required", "true")
    (repo / ".gitattributes").write_text("* filter=evil\n")
    (repo / "app.py").write_text("total = 0\n")
    os.utime(repo / "app.py", ns=(0, 0))  # a stat change git must look into, through the filter if it could
    call(GitStatus(), repo)
    call(GitDiff(), repo)
    call(GitCommit(), repo, message="Zero", paths=["app.py", ".gitattributes"])
    assert not marker.exists()
    assert git(repo, "show", "HEAD:app.py") == "total = 0\n"


# git_commit


def test_commit_stages_the_named_paths_and_commits_only_what_is_staged(repo: Path) -> None:
    (repo / "app.py").write_text("total = round(price, 2)\n")
    (repo / "new.py").write_text("x = 1\n")
    (repo / "README.md").unlink()
    out = call(GitCommit(), repo, message="Fix rounding", paths=["new.py", f"{repo}/README.md"])
    author, message, files = last_commit(repo)
    assert message == "Fix rounding\n" and files == ["D\tREADME.md", "A\tnew.py"]
    assert out.data["files"] == ["README.md", "new.py"] and out.data["commit"] == git(repo, "rev-parse", "HEAD").strip()
    assert out.text.startswith("[main ") and "Fix rounding" in out.text
    assert git(repo, "status", "--porcelain") == " M app.py\n"


def test_commit_all_commits_every_change_to_tracked_files_but_not_new_files(repo: Path) -> None:
    (repo / "app.py").write_text("total = 0\n")
    (repo / "README.md").unlink()
    (repo / "scratch.txt").write_text("mine\n")
    call(GitCommit(), repo, message="Tidy", all=True)
    assert last_commit(repo)[2] == ["D\tREADME.md", "M\tapp.py"]
    assert git(repo, "status", "--porcelain") == "?? scratch.txt\n"


def test_nothing_to_commit_is_a_clear_argument_error(repo: Path) -> None:
    cases = []
    cases.append(("nothing to commit: the working tree is clean", call_error(GitCommit(), repo, message="x")))
    (repo / "new.txt").write_text("1\n")
    cases.append(("nothing to commit: only untracked files changed", call_error(GitCommit(), repo, message="x")))
    (repo / "app.py").write_text("total = 0\n")
    cases.append(("nothing to commit: changes to tracked files are not staged",
                  call_error(GitCommit(), repo, message="x")))
    for message, error in cases:
        assert (error.kind, error.info.message) == (ErrorKind.INVALID_ARGS, message)
        assert "paths" in error.info.suggestion or "git_status" in error.info.suggestion
    assert git(repo, "rev-list", "--count", "HEAD").strip() == "1"


def test_a_message_with_quotes_newlines_and_hash_lines_is_kept_as_written(repo: Path) -> None:
    (repo / "app.py").write_text("total = 0\n")
    text = 'Fix "rounding" in $PRICE `calc`\n\nIt\'s done; see #12.\n# Not a comment\n- a\n  - b\n'
    call(GitCommit(), repo, message=text, all=True)
    assert last_commit(repo)[1] == text


def test_hooks_in_the_repository_never_run(repo: Path, tmp_path: Path) -> None:
    marker = tmp_path / "hook-ran"
    for name in ("pre-commit", "commit-msg", "prepare-commit-msg", "post-commit"):
        marker_hook(repo / ".git" / "hooks" / name, marker)
        marker_hook(repo / "hooks" / name, marker)
    git(repo, "config", "core.hooksPath", "hooks")
    (repo / "app.py").write_text("total = 0\n")
    call(GitCommit(), repo, message="Despite the hooks", paths=["app.py"])
    assert not marker.exists()
    assert last_commit(repo)[1] == "Despite the hooks\n"


def test_without_an_identity_the_commit_is_by_the_belay_agent_and_says_so(repo: Path) -> None:
    (repo / "app.py").write_text("total = 0\n")
    out = call(GitCommit(), repo, message="Anonymous", all=True)
    assert last_commit(repo)[0] == "Belay agent <agent@belay.invalid>"
    assert out.text.endswith("No git user.name or user.email is configured, so the commit is by Belay agent"
                             " <agent@belay.invalid>.")
    assert out.data["author"] == "Belay agent <agent@belay.invalid>"


def test_a_configured_identity_is_used_the_repository_s_over_the_person_s(repo: Path, home: Path) -> None:
    (home / ".gitconfig").write_text("[user]\n\tname = Pat Person\n\temail = pat@example.com\n")
    (repo / "app.py").write_text("total = 0\n")
    out = call(GitCommit(), repo, message="As Pat", all=True)
    assert last_commit(repo)[0] == "Pat Person <pat@example.com>" and "identity" not in out.text
    git(repo, "config", "user.name", "Repo Bot")
    (repo / "app.py").write_text("total = 1\n")
    call(GitCommit(), repo, message="As the repo", all=True)
    assert last_commit(repo)[0] == "Repo Bot <pat@example.com>"


def test_paths_outside_the_workspace_are_refused_before_anything_is_staged(repo: Path, tmp_path: Path) -> None:
    (tmp_path / "outside.txt").write_text("secret\n")
    (repo / "link").symlink_to(tmp_path)
    (repo / "app.py").write_text("total = 0\n")
    for path in ("../outside.txt", str(tmp_path / "outside.txt"), "link/outside.txt"):
        error = call_error(GitCommit(), repo, message="x", paths=["app.py", path])
        assert error.kind is ErrorKind.OUTSIDE_WORKSPACE and "paths[1]" in error.info.message
    assert git(repo, "diff", "--cached", "--name-only") == ""


def test_a_path_git_does_not_know_is_an_argument_error(repo: Path) -> None:
    error = call_error(GitCommit(), repo, message="x", paths=["nope.txt"])
    assert error.kind is ErrorKind.INVALID_ARGS and "pathspec 'nope.txt' did not match any files" in error.info.message
    for bad in ({"message": ""}, {"message": "  \n "}, {"message": "a\0b"}, {"message": "bad \ud800"},
                {"message": "x", "paths": [""]}):
        assert call_error(GitCommit(), repo, **bad).kind is ErrorKind.INVALID_ARGS


# running git


def _git_processes_in(root: Path) -> list[int]:
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if os.readlink(f"/proc/{pid}/cwd") == str(root):
                found.append(int(pid))
        except OSError:
            continue
    return found


def test_a_git_that_hangs_is_killed_at_the_deadline(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    os.mkfifo(repo / ".git" / "objects" / "info" / "alternates")  # git blocks opening it for reading
    monkeypatch.setattr(git_tools, "GIT_TIMEOUT_S", 0.5)
    error = call_error(GitStatus(), repo)
    assert error.kind is ErrorKind.TIMEOUT and error.info.message == "git status took longer than 0.5 s and was stopped"
    assert _git_processes_in(repo) == []


def test_cancelling_a_call_kills_its_git(repo: Path) -> None:
    os.mkfifo(repo / ".git" / "objects" / "info" / "alternates")

    async def cancel_while_running() -> None:
        task = asyncio.create_task(GitStatus().run(GitStatus.Args(), make_ctx(repo)))
        for _ in range(3000):  # up to 30 s: a loaded machine can take seconds to start git in its sandbox
            await asyncio.sleep(0.01)
            if _git_processes_in(repo):
                break
        assert _git_processes_in(repo)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(cancel_while_running())
    assert _git_processes_in(repo) == []


def test_the_tools_are_offered_by_default_and_declare_what_they_do(repo: Path) -> None:
    names = [tool.name for tool in default_tools()]
    assert {"NotebookRead", "git_status", "git_diff", "git_commit"} <= set(names)
    status, diff, commit = GitStatus(), GitDiff(), GitCommit()
    for tool in (status, diff):
        assert tool.annotations.read_only and not tool.annotations.destructive
        assert not tool.cacheable and tool.retry is None and not tool.captures_workspace
    assert not commit.annotations.read_only and not commit.annotations.destructive
    assert not commit.annotations.idempotent and commit.captures_workspace
    ws = Workspace(repo)
    args = arguments.validate(commit, {"message": "Fix rounding\n\nDetails", "all": True})
    assert commit.writes(args, ws) == frozenset({""})
    assert commit.summary(args, ws) == "commit: Fix rounding"
    assert status.summary(arguments.validate(status, {}), ws) == "status"
    assert diff.summary(arguments.validate(diff, {"staged": True, "paths": ["src/"]}), ws) == "diff --staged src/"
    assert diff.summary(arguments.validate(diff, {"ref": "HEAD~1", "paths": [f"{repo}/app.py"]}), ws) == \
        "diff HEAD~1 app.py"
