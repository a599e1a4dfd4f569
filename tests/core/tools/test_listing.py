"""LS and Glob: listings that stay inside the workspace, sorted and capped."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from core.errors import ErrorKind, ToolError
from core.ids import AgentId, CallId
from core.paths import Workspace
from core.tools import listing
from core.tools.base import ReadState, ToolContext, ToolOutput
from core.tools.listing import LS, Glob, GlobArgs, LSArgs, glob_regex


def make_ctx(root: Path) -> ToolContext:
    return ToolContext(workspace=Workspace(root), agent_id=AgentId("a"), call_id=CallId("c"), read_state=ReadState())


def ls(ctx: ToolContext, **args: object) -> ToolOutput:
    return asyncio.run(LS().run(LSArgs.model_validate(args), ctx))


def glob(ctx: ToolContext, **args: object) -> ToolOutput:
    return asyncio.run(Glob().run(GlobArgs.model_validate(args), ctx))


@pytest.fixture
def root(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    for rel in ("src/app.py", "src/pkg/util.py", "src/pkg/types.pyi", "setup.py", "README.md", ".git/hooks/x.py"):
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(rel)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "leak.py").write_text("SECRET")
    (ws / "linked_out").symlink_to(outside)
    (ws / "leak_link.py").symlink_to(outside / "leak.py")
    (ws / "alias.py").symlink_to(ws / "setup.py")
    return ws


def test_ls_lists_one_level_directories_first(root: Path) -> None:
    out = ls(make_ctx(root), path=str(root))
    assert out.text.split("\n") == [f"- {root}/", "  - .git/", "  - src/", "  - README.md", "  - alias.py",
                                    "  - leak_link.py", "  - linked_out", "  - setup.py"]
    assert out.data["entries"][:2] == [".git/", "src/"]


def test_ls_ignore_patterns(root: Path) -> None:
    out = ls(make_ctx(root), path=str(root), ignore=["*.py", ".git", "linked_*"])
    assert out.data["entries"] == ["src/", "README.md"]
    empty = root / "empty"
    empty.mkdir()
    assert ls(make_ctx(root), path=str(empty)).text.endswith("(empty directory)")


def test_ls_caps_long_listings(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(listing, "MAX_LS_ENTRIES", 3)
    out = ls(make_ctx(root), path=str(root))
    assert len(out.data["entries"]) == 3 and "... 4 more" in out.text


def test_ls_refuses_files_outside_and_missing(root: Path) -> None:
    ctx = make_ctx(root)
    for path, kind in ((f"{root}/setup.py", ErrorKind.INVALID_ARGS),
                       (f"{root}/linked_out", ErrorKind.OUTSIDE_WORKSPACE),
                       (f"{root}/nope", ErrorKind.NOT_FOUND), ("src", ErrorKind.INVALID_ARGS)):
        with pytest.raises(ToolError) as info:
            ls(ctx, path=path)
        assert info.value.kind is kind, path


def test_glob_recursive_newest_first_and_never_outside_or_in_git(root: Path) -> None:
    for age, rel in enumerate(("src/pkg/util.py", "setup.py", "src/app.py")):
        os.utime(root / rel, ns=(1_000_000_000 * (100 - age), 1_000_000_000 * (100 - age)))
    os.utime(root / "alias.py", ns=(10**9, 10**9), follow_symlinks=False)
    out = glob(make_ctx(root), pattern="**/*.py")
    assert out.data["files"] == [str(root / "src/pkg/util.py"), str(root / "setup.py"), str(root / "src/app.py"),
                                 str(root / "alias.py")]
    assert "SECRET" not in out.text and ".git" not in out.text and "leak" not in out.text


def test_glob_patterns_match_relative_to_path(root: Path) -> None:
    ctx = make_ctx(root)
    assert sorted(glob(ctx, pattern="*.py").data["files"]) == [str(root / "alias.py"), str(root / "setup.py")]
    pkg = glob(ctx, pattern="*.{py,pyi}", path=f"{root}/src/pkg").data["files"]
    assert sorted(pkg) == [str(root / "src/pkg/types.pyi"), str(root / "src/pkg/util.py")]
    assert glob(ctx, pattern=f"{root}/src/*.py").data["files"] == [str(root / "src/app.py")]
    assert glob(ctx, pattern="**/*.rs").text == "No files found"


def test_glob_caps_results_with_a_note(root: Path) -> None:
    (root / "many").mkdir()
    for i in range(105):
        (root / "many" / f"f{i:03}.txt").write_text("")
    out = glob(make_ctx(root), pattern="many/*.txt")
    assert len(out.data["files"]) == 100 and out.data["truncated"]
    assert "100 most recently modified of 105" in out.text


def test_glob_refuses_bad_patterns_and_paths(root: Path, tmp_path: Path) -> None:
    ctx = make_ctx(root)
    for args, kind in (({"pattern": "{a,b"}, ErrorKind.INVALID_ARGS),
                       ({"pattern": "/etc/*"}, ErrorKind.INVALID_ARGS),
                       ({"pattern": "*", "path": str(tmp_path)}, ErrorKind.OUTSIDE_WORKSPACE)):
        with pytest.raises(ToolError) as info:
            glob(ctx, **args)
        assert info.value.kind is kind, args


@pytest.mark.parametrize(("pattern", "path", "matches"), [
    ("**/*.py", "a.py", True), ("**/*.py", "a/b/c.py", True), ("*.py", "a/b.py", False),
    ("src/**", "src/a/b", True), ("?.md", "a.md", True), ("?.md", "ab.md", False),
    ("[!a]*.txt", "b1.txt", True), ("[!a]*.txt", "a1.txt", False), ("*.{js,ts}", "x.ts", True),
    ("a+b(c).txt", "a+b(c).txt", True), ("a+b(c).txt", "aab(c).txt", False),
])
def test_glob_regex(pattern: str, path: str, matches: bool) -> None:
    assert bool(glob_regex(pattern).fullmatch(path)) is matches
