"""How Belay runs git: /usr/bin/git in a neutral environment, out of reach of the user's git settings."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from core.changes.gitproc import GIT, git_env


def belay_git(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run git as Belay does: the fixed binary, `git_env()`."""
    return subprocess.run([GIT, *args], cwd=repo, env=git_env(), capture_output=True, text=True, check=False,
                          stdin=subprocess.DEVNULL)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A throwaway HOME, and no trace of the real user's git settings in the environment."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    for key in [k for k in os.environ if k.startswith("GIT_")]:
        monkeypatch.delenv(key)
    return home


@pytest.fixture
def repo(tmp_path: Path, home: Path) -> Path:
    """A repository on main with one commit of one file."""
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "a.txt").write_text("a\n")
    for args in (["init", "-q", "-b", "main"], ["add", "a.txt"],
                 ["-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-q", "-m", "Start"]):
        subprocess.run([GIT, *args], cwd=repo, check=True, capture_output=True)
    return repo


def hook_script(directory: Path, marker: Path, *names: str) -> Path:
    """Hooks that leave `marker` behind if git ever runs them."""
    directory.mkdir(parents=True, exist_ok=True)
    for name in names:
        script = directory / name
        script.write_text(f"#!/bin/sh\necho {name} >> {marker}\n")
        script.chmod(0o755)
    return directory


def test_belay_runs_the_system_git_whatever_git_comes_first_on_path(tmp_path: Path, repo: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    marker = tmp_path / "impostor-ran"
    impostor = hook_script(tmp_path / "bin", marker, "git")
    monkeypatch.setenv("PATH", f"{impostor}{os.pathsep}{os.environ['PATH']}")
    assert os.path.isabs(GIT) and os.access(GIT, os.X_OK)
    done = belay_git(repo, "rev-parse", "--abbrev-ref", "HEAD")
    assert (done.returncode, done.stdout.strip()) == (0, "main")
    assert not marker.exists()
    assert git_env()["PATH"] == os.environ["PATH"] and git_env()["HOME"] == os.environ["HOME"]  # the rest passes


def test_the_users_git_variables_do_not_reach_git(tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    marker = tmp_path / "hook-ran"
    hooks = hook_script(tmp_path / "hooks", marker, "reference-transaction")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.setenv("GIT_DIR", str(elsewhere))
    monkeypatch.setenv("GIT_WORK_TREE", str(elsewhere))
    monkeypatch.setenv("GIT_INDEX_FILE", str(elsewhere / "index"))
    monkeypatch.setenv("GIT_CONFIG_COUNT", "2")
    monkeypatch.setenv("GIT_CONFIG_KEY_0", "core.hooksPath")
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", str(hooks))
    monkeypatch.setenv("GIT_CONFIG_KEY_1", "alias.st")
    monkeypatch.setenv("GIT_CONFIG_VALUE_1", "status")
    monkeypatch.setenv("GIT_CONFIG_PARAMETERS", "'core.pager'='sh -c id'")
    assert not {"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_CONFIG_COUNT", "GIT_CONFIG_PARAMETERS"} & set(git_env())
    assert belay_git(repo, "rev-parse", "--git-dir").stdout.strip() == ".git"
    assert belay_git(repo, "config", "--get", "core.hooksPath").returncode == 1  # not set
    assert belay_git(repo, "st").returncode != 0  # no such command without the user's alias
    assert belay_git(repo, "var", "GIT_PAGER").stdout.strip() == "cat"
    assert belay_git(repo, "update-ref", "refs/heads/copy", "HEAD").returncode == 0
    assert not marker.exists()


def test_the_users_global_config_does_not_reach_git(tmp_path: Path, home: Path, repo: Path) -> None:
    marker = tmp_path / "hook-ran"
    hooks = hook_script(tmp_path / "hooks", marker, "reference-transaction")
    settings = f"[core]\n\thooksPath = {hooks}\n\tpager = sh -c id\n[alias]\n\tst = status\n[user]\n\tname = Me\n"
    (home / ".gitconfig").write_text(settings)
    (home / ".config" / "git").mkdir(parents=True)
    (home / ".config" / "git" / "config").write_text(settings)
    plain = subprocess.run([GIT, "config", "--get", "core.hooksPath"], cwd=repo, capture_output=True, text=True)
    assert plain.stdout.strip() == str(hooks)  # git run any other way would use it
    listed = belay_git(repo, "config", "--list", "--show-scope").stdout.splitlines()
    assert listed and all(line.startswith(("local\t", "command\t")) for line in listed)
    assert belay_git(repo, "st").returncode != 0
    assert belay_git(repo, "var", "GIT_PAGER").stdout.strip() == "cat"
    assert belay_git(repo, "update-ref", "refs/heads/copy", "HEAD").returncode == 0
    assert not marker.exists()


def test_the_repositorys_own_pager_is_never_started(repo: Path) -> None:
    subprocess.run([GIT, "config", "core.pager", "touch PAGER-RAN"], cwd=repo, check=True)
    assert belay_git(repo, "var", "GIT_PAGER").stdout.strip() == "cat"
    assert subprocess.run([GIT, "var", "GIT_PAGER"], cwd=repo, capture_output=True, text=True,
                          env={**os.environ, "GIT_CONFIG_NOSYSTEM": "1"}).stdout.strip() == "touch PAGER-RAN"


def test_reading_the_status_leaves_the_index_alone(repo: Path) -> None:
    os.utime(repo / "a.txt", (1_000_000_000, 1_000_000_000))  # same content, a stat git would refresh
    index = (repo / ".git" / "index").read_bytes()
    done = belay_git(repo, "status", "--porcelain")
    assert (done.returncode, done.stdout) == (0, "")
    assert (repo / ".git" / "index").read_bytes() == index  # no lock taken, nothing written beside the agent's git
    subprocess.run([GIT, "status", "--porcelain"], cwd=repo, check=True, capture_output=True)
    assert (repo / ".git" / "index").read_bytes() != index  # what a plain `git status` would have done
