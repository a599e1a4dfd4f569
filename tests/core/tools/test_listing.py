"""LS and Glob: listings that stay inside the workspace, sorted and capped."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from core import Console, RunStatus
from core.errors import ErrorKind, ToolError
from core.ids import AgentId, CallId
from core.paths import Workspace
from core.run.calls import CallOutcome
from core.tools import listing
from core.tools.base import ReadState, ToolContext, ToolOutput
from core.tools.listing import LS, Glob, GlobArgs, LSArgs, glob_regex
from tests.conftest import run


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
    assert len(out.data["entries"]) == 3
    assert out.text.endswith("(Showing the first 3 entries; there may be more: use Glob to narrow it down.)")


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
    assert out.text.endswith("(Showing the 100 most recently modified matching files; there may be more: use a "
                             "narrower pattern or path.)")


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


def deny_secrets(path: Path) -> str | None:
    """A stand-in for the policy's read filter with `Read(./.env)` and `Read(./keys/**)` denied."""
    if path.name == ".env":
        return f"{path} matches the deny rule Read(./.env)"
    return f"{path} matches the deny rule Read(./keys/**)" if path.parent.name == "keys" else None


@pytest.fixture
def denying(root: Path) -> ToolContext:
    (root / ".env").write_text("API_KEY=x")
    (root / "src" / ".env").write_text("API_KEY=y")
    (root / "keys").mkdir()
    (root / "keys" / "id.py").write_text("KEY")
    (root / "env_link.py").symlink_to(root / ".env")
    ctx = make_ctx(root)
    ctx.may_read = lambda path: deny_secrets(Path(os.path.realpath(path))) or deny_secrets(path)
    return ctx


def test_ls_hides_what_a_read_deny_rule_covers_and_says_how_many(root: Path, denying: ToolContext) -> None:
    out = ls(denying, path=str(root))
    assert ".env" not in out.text and "env_link.py" not in out.text
    assert out.text.endswith("  - setup.py\n  (2 entries hidden by Read deny rules.)")
    assert ls(denying, path=str(root / "keys")).text == f"- {root}/keys/\n  (1 entry hidden by Read deny rules.)"


def test_glob_hides_what_a_read_deny_rule_covers_whatever_the_path(root: Path, denying: ToolContext) -> None:
    out = glob(denying, pattern="**/*")
    assert ".env" not in out.text and "keys/id.py" not in out.text and "env_link" not in out.text
    assert out.text.endswith("(4 files hidden by Read deny rules.)")
    assert glob(denying, pattern="*", path=str(root / "keys")).text == \
        "No files found\n(1 file hidden by Read deny rules.)"
    in_src = glob(denying, pattern="**/*", path=str(root / "src"))
    assert sorted(in_src.data["files"]) == [str(root / "src/app.py"), str(root / "src/pkg/types.pyi"),
                                            str(root / "src/pkg/util.py")]
    assert in_src.text.endswith("(1 file hidden by Read deny rules.)")


def test_names_with_escapes_or_newlines_are_shown_escaped(root: Path) -> None:
    (root / "src" / "a\x1b]52;c;eA==\x07b.py").write_text("")
    (root / "src" / "x.py\n  - fake.py").write_text("")
    listed = ls(make_ctx(root), path=str(root / "src")).text
    assert "\x1b" not in listed and "\x07" not in listed
    assert "  - a\\x1b]52;c;eA==\\x07b.py" in listed.split("\n")
    assert "  - x.py\\n  - fake.py" in listed.split("\n")
    found = glob(make_ctx(root), pattern="src/*.py").text.split("\n")
    assert f"{root}/src/x.py\\n  - fake.py" in found and "\x1b" not in "".join(found)


def test_a_nul_in_a_pattern_is_an_invalid_args_error(root: Path) -> None:
    with pytest.raises(ToolError) as info:
        glob(make_ctx(root), pattern="*.py\0")
    assert info.value.kind is ErrorKind.INVALID_ARGS and "NUL" in info.value.info.message
    with pytest.raises(ToolError) as info:
        ls(make_ctx(root), path=str(root), ignore=["x\0"])
    assert info.value.kind is ErrorKind.INVALID_ARGS


def test_through_the_console_ls_and_glob_hide_what_the_settings_deny(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / ".belay").mkdir(parents=True)
    (ws / ".belay" / "settings.toml").write_text('[permissions]\ndeny = ["Read(./.env)", "Read(./keys/**)"]\n')
    (ws / ".env").write_text("API_KEY=sk-live\n")
    (ws / "keys").mkdir()
    (ws / "keys" / "deploy.pem").write_text("KEY\n")
    (ws / "app.py").write_text("print()\n")

    async def scenario() -> list[CallOutcome]:
        async with Console(ws) as console:
            agent = await console.start_agent("agent", "scripted")
            calls = [("LS", {"path": str(ws)}), ("LS", {"path": str(ws / "keys")}), ("Glob", {"pattern": "**/*"})]
            return [await console.call(agent, tool, args) for tool, args in calls]

    root_list, keys_list, globbed = run(scenario())
    assert root_list.status is RunStatus.DONE and ".env" not in root_list.text and "app.py" in root_list.text
    assert root_list.text.endswith("(1 entry hidden by Read deny rules.)")
    assert keys_list.text == f"- {ws}/keys/\n  (1 entry hidden by Read deny rules.)"
    assert "deploy.pem" not in globbed.text and ".env" not in globbed.text and f"{ws}/app.py" in globbed.text
    assert globbed.text.endswith("(2 files hidden by Read deny rules.)")


def test_glob_over_many_files_checks_only_what_it_shows_and_still_shows_a_full_page(root: Path) -> None:
    for i in range(300):
        (root / f"m{i:03}.txt").write_text("")
        os.utime(root / f"m{i:03}.txt", ns=(i * 10**9, i * 10**9))  # m299 newest
    asked: list[Path] = []
    ctx = make_ctx(root)

    def refuse_every_tenth(path: Path) -> str | None:
        asked.append(path)
        return f"{path} matches the deny rule Read(./m*0.txt)" if path.name.endswith("0.txt") else None

    ctx.may_read = refuse_every_tenth
    out = glob(ctx, pattern="*.txt")
    assert len(out.data["files"]) == listing.MAX_GLOB_RESULTS and str(root / "m299.txt") == out.data["files"][0]
    assert not any(f.endswith("0.txt") for f in out.data["files"])
    assert len(asked) < 120  # not all 300: the cost of the rules is paid for what is shown
    assert out.text.endswith("(11 files hidden by Read deny rules.)")  # m290 to m190, passed on the way


def test_summaries_show_escapes_not_live_control_characters(root: Path) -> None:
    ws = Workspace(root)
    assert LS().summary(LSArgs(path=f"{root}/a\x1b[2J"), ws) == "a\\x1b[2J"
    assert Glob().summary(GlobArgs(pattern="*\x1b]52;c;eA==\x07"), ws) == "*\\x1b]52;c;eA==\\x07"


def test_a_glob_past_its_cap_says_the_same_whether_or_not_a_hidden_file_matched(root: Path) -> None:
    for i in range(101):
        (root / f"n{i:03}.txt").write_text("")
        os.utime(root / f"n{i:03}.txt", ns=(10**9 + i, 10**9 + i))
    ctx = make_ctx(root)
    ctx.may_read = lambda path: "matches the deny rule Read(./n000.txt)" if path.name == "n000.txt" else None
    with_hidden = glob(ctx, pattern="*.txt").text
    (root / "n000.txt").unlink()
    assert glob(ctx, pattern="*.txt").text == with_hidden  # the oldest, hidden match changes nothing shown
