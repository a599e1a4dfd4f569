"""Workspace.resolve: the string-level boundary check an agent's path must pass."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from core import paths
from core.errors import ErrorKind, ToolError
from core.paths import Workspace


@pytest.fixture
def root(tmp_path: Path) -> Path:
    ws = tmp_path / "app"
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "app.py").write_text("print('hi')\n")
    return ws


def refused(ws: Workspace, raw: object) -> ToolError:
    with pytest.raises(ToolError) as info:
        ws.resolve(raw)
    return info.value


def test_a_path_inside_resolves_to_its_real_path(root: Path) -> None:
    ws = Workspace(root)
    assert ws.resolve(f"{root}/src/./app.py") == root / "src" / "app.py"
    assert ws.resolve(f"{root}/src/new.py") == root / "src" / "new.py"  # need not exist


def test_a_sibling_sharing_the_prefix_is_outside(root: Path, tmp_path: Path) -> None:
    (tmp_path / "app2").mkdir()
    error = refused(Workspace(root), f"{tmp_path}/app2/secret.txt")
    assert error.kind is ErrorKind.OUTSIDE_WORKSPACE
    assert "app2/secret.txt" in error.info.message and str(root) in error.info.message


def test_dot_dot_cannot_climb_out(root: Path) -> None:
    error = refused(Workspace(root), f"{root}/src/../../etc/passwd")
    assert error.kind is ErrorKind.OUTSIDE_WORKSPACE


def test_tilde_is_expanded_before_the_absolute_check(root: Path, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert refused(Workspace(root), "~/.ssh/id_rsa").kind is ErrorKind.OUTSIDE_WORKSPACE
    monkeypatch.setenv("HOME", str(root))
    assert Workspace(root).resolve("~/src/app.py") == root / "src" / "app.py"


def test_a_relative_path_is_refused_with_the_absolute_one_suggested(root: Path) -> None:
    error = refused(Workspace(root), "README.md")
    assert error.kind is ErrorKind.INVALID_ARGS
    assert "must be an absolute path, got 'README.md'" in error.info.message
    assert f"{root}/README.md" in error.info.suggestion


@pytest.mark.parametrize("raw", [None, 42, b"/tmp", "", "/tmp/a\0b"])
def test_non_strings_empty_and_nul_are_invalid(root: Path, raw: object) -> None:
    assert refused(Workspace(root), raw).kind is ErrorKind.INVALID_ARGS


def test_overlong_paths_and_names_are_invalid(root: Path) -> None:
    assert refused(Workspace(root), f"{root}/{'a' * 256}").kind is ErrorKind.INVALID_ARGS
    assert refused(Workspace(root), f"{root}/" + "d/" * 2100).kind is ErrorKind.INVALID_ARGS
    assert refused(Workspace(root), f"{root}/\ud800").kind is ErrorKind.INVALID_ARGS


def test_symlinks_pointing_outside_are_outside(root: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret").write_text("s")
    (root / "file_link").symlink_to(outside / "secret")
    (root / "dir_link").symlink_to(outside)
    ws = Workspace(root)
    assert refused(ws, f"{root}/file_link").kind is ErrorKind.OUTSIDE_WORKSPACE
    error = refused(ws, f"{root}/dir_link/secret")
    assert error.kind is ErrorKind.OUTSIDE_WORKSPACE and str(outside / "secret") in error.info.message


def test_a_symlink_inside_pointing_inside_is_allowed(root: Path) -> None:
    (root / "alias.py").symlink_to(root / "src" / "app.py")
    assert Workspace(root).resolve(f"{root}/alias.py") == root / "src" / "app.py"


def test_a_root_given_through_a_symlink_is_stored_real(root: Path, tmp_path: Path) -> None:
    link = tmp_path / "link_to_app"
    link.symlink_to(root)
    ws = Workspace(link)
    assert ws.root == root
    assert ws.resolve(f"{link}/src/app.py") == root / "src" / "app.py"
    assert str(root) in repr(ws)


def test_relative_and_contains(root: Path, tmp_path: Path) -> None:
    ws = Workspace(root)
    assert ws.relative(root / "src" / "app.py") == os.path.join("src", "app.py")
    assert ws.relative(root) == "."
    assert ws.contains(root / "src") and not ws.contains(tmp_path)
    assert ws.describe(f"{root}/src/app.py") == "src/app.py"
    assert ws.describe("relative.txt") == "relative.txt"


def test_a_link_that_vanishes_while_contains_looks_is_not_inside(root: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """realpath's lstat saw a link, and it was gone by readlink (CI's path-toctou-swap case): not inside, no crash."""
    os.symlink(root / "src", root / "link")
    ws = Workspace(root)

    def gone(path: object, *args: object, **kwargs: object) -> str:
        raise FileNotFoundError(2, "No such file or directory", path)

    monkeypatch.setattr(os, "readlink", gone)
    assert not ws.contains(root / "link" / "app.py")
    assert ws.contains(root / "src" / "app.py")  # no link on the way: nothing to read


def test_a_missing_root_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="not an existing directory"):
        Workspace(tmp_path / "nope")


def test_one_look_resolves_each_path_once_and_what_it_saw_does_not_outlive_it(tmp_path: Path,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """A call's summary and its policy request resolve its path once; after the look, a swapped link is seen."""
    ws_root, outside = tmp_path / "ws", tmp_path / "outside"
    (ws_root / "real").mkdir(parents=True)
    outside.mkdir()
    (ws_root / "real" / "a.txt").write_text("inside")
    (outside / "a.txt").write_text("outside")
    (ws_root / "link").symlink_to(ws_root / "real")
    ws = Workspace(ws_root)
    walks: list[str] = []
    real_realpath = os.path.realpath
    monkeypatch.setattr(paths.os.path, "realpath", lambda p: walks.append(p) or real_realpath(p))
    named = f"{ws_root}/link/a.txt"
    with paths.one_look():
        assert ws.describe(named) == "real/a.txt"
        assert ws.resolve(named) == ws_root / "real" / "a.txt"
        assert paths.realpath(named) == str(ws_root / "real" / "a.txt")
    assert walks == [named]
    (ws_root / "link").unlink()
    (ws_root / "link").symlink_to(outside)
    assert refused(ws, named).kind == ErrorKind.OUTSIDE_WORKSPACE


@pytest.mark.parametrize(("path", "root", "inside"), [
    ("/work/app", "/work/app", True), ("/work/app/src/a.py", "/work/app", True),
    ("/work/app2", "/work/app", False), ("/work/app2/a.py", "/work/app", False), ("/work", "/work/app", False),
    ("/etc/passwd", "/", True), ("/", "/", True),
    ("//home/u/.ssh/id_rsa", "/home/u", True), ("//home/u2", "/home/u", False),
])
def test_within_compares_whole_components_never_a_bare_prefix(path: str, root: str, inside: bool) -> None:
    assert paths.within(path, root) is inside
    assert paths.within(path, root) is (os.path.commonpath([root, path]) == root)


def test_a_path_is_shown_relative_to_the_root_and_the_root_as_a_dot(root: Path) -> None:
    ws = Workspace(root)
    assert ws.relative(root / "src" / "app.py") == "src/app.py" and ws.relative(root) == "."
    assert ws.describe(f"{root}/src/app.py") == "src/app.py"
    assert ws.relative(f"{root}2/x") == f"{root}2/x"  # a sibling whose name starts the same is outside
