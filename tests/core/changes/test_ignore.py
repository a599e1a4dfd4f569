"""The workspace's ignore rules: every answer checked against `git check-ignore` on the same tree."""

from __future__ import annotations

import os
import random
import shutil
import subprocess
from pathlib import Path

import pytest

from core.changes.ignore import IgnoreRules
from tests.conftest import RUNAWAY_S

ROOT_IGNORE = (
    "# a comment, and a blank line\n"
    "\n"
    "*.log\n"
    "!keep.log\n"
    "/build\n"
    "dist/\n"
    "**/cache\n"
    "a/**/b\n"
    "logs/\n"
    "!logs/important.log\n"
    "trailing   \n"
    "space\\ \n"
    "\\#hash\n"
    "\\!bang\n"
    "vendor/**\n"
    "!vendor/.gitkeep\n"
    "gen/**/\n"
    "*.py[cod]\n"
    "[z-a]\n"
    "/sub2/*.txt\n"
    "!gen.txt\n"  # a later line naming no directory still beats an earlier one that does
)
SUB_IGNORE = "!*.log\r\n/local\r\nbuild/\r\nout/\r\n!special.tmp\r\nend\\ \r\n"  # CRLF, as Windows editors write
DEEP_IGNORE = "*.log\n"
EXCLUDE = "secret.txt\n"
EXTRA = ("*.tmp",)

# path ("/" at the end: a directory), and whether git ignores it
CASES = [
    ("app.log", True), ("keep.log", False), ("sub/other.log", False), ("sub/keep.log", False),
    ("sub/deep/y.log", True),  # nested files override shallower ones, deepest first
    ("build/", True), ("build/out.o", True), ("src/build/", False), ("src/build/x.c", False),  # /build anchored
    ("sub/build/", True), ("sub/tools/build", False),  # build/ is for directories: a file named build stays
    ("dist/", True), ("pkg/dist", False),
    ("cache/", True), ("x/y/cache/", True), ("x/y/cache/z.txt", True), ("docs/cache", True), ("x/cache_not", False),
    ("a/b", True), ("a/q/r/b", True), ("a/q/c", False), ("q/a/b", False),
    ("logs/", True), ("logs/important.log", True), ("logs/x.txt", True),  # no way back out of an ignored directory
    ("vendor/", False), ("vendor/.gitkeep", False), ("vendor/lib.js", True), ("vendor/pkg/", True),
    ("gen/", False), ("gen/file.c", False), ("gen/d/", True), ("gen/d/x.c", True),
    ("trailing", True), ("space ", True), ("space", False),
    ("#hash", True), ("!bang", True), ("hash", False),
    ("m.pyc", True), ("m.py", False),
    ("sub/local", True), ("sub/x/local", False), ("local", False), ("sub/end ", True),  # CRLF lines still match
    ("sub/out/", True), ("sub/out/deep.txt", True),
    ("secret.txt", True), ("sub/secret.txt", True),  # .git/info/exclude
    ("a.tmp", True), ("sub/special.tmp", False),  # extra patterns, lowest precedence
    ("sub2/gen.txt", False), ("sub2/other.txt", True), ("README.md", False),
]


def _git(ws: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}  # no user excludes
    return subprocess.run(["git", *args], cwd=ws, env=env, input=stdin, capture_output=True, text=True, check=False)


def _write(ws: Path, rel: str, text: str) -> None:
    (ws / rel).parent.mkdir(parents=True, exist_ok=True)
    (ws / rel).write_bytes(text.encode())


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A git work tree holding every case on disk, and the excludes file that stands for `EXTRA`."""
    assert shutil.which("git"), "these tests use git itself as the reference"
    ws = tmp_path_factory.mktemp("ignore") / "ws"
    ws.mkdir()
    assert _git(ws, "init", "-q").returncode == 0
    for rel, text in [(".gitignore", ROOT_IGNORE), ("sub/.gitignore", SUB_IGNORE), ("sub/deep/.gitignore", DEEP_IGNORE),
                      (".git/info/exclude", EXCLUDE)]:
        _write(ws, rel, text)
    for rel, _ in CASES:
        if rel.endswith("/"):
            (ws / rel).mkdir(parents=True, exist_ok=True)
        else:
            _write(ws, rel, "x\n")
    extra = ws.parent / "extra-excludes"
    extra.write_text("\n".join(EXTRA) + "\n")
    return ws, extra


@pytest.mark.parametrize(("path", "expected"), CASES, ids=[c[0] for c in CASES])
def test_agrees_with_git_check_ignore(tree: tuple[Path, Path], path: str, expected: bool) -> None:
    ws, extra = tree
    rel = path.rstrip("/")
    git = _git(ws, "-c", f"core.excludesFile={extra}", "check-ignore", "-q", "--no-index", rel).returncode
    assert git in (0, 1)
    rules = IgnoreRules.load(ws, EXTRA)
    assert (rules.ignored(rel, is_dir=path.endswith("/")), git == 0) == (expected, expected)


def _ignored_by_both(ws: Path, extra: Path | None = None, patterns: tuple[str, ...] = ()) -> tuple[set[str], set[str]]:
    """What IgnoreRules ignores and what git ignores, among every file and directory of the tree."""
    entries = {str(p.relative_to(ws)): p.is_dir() for p in ws.rglob("*") if ".git" not in p.relative_to(ws).parts}
    config = ["-c", f"core.excludesFile={extra}"] if extra else []
    out = _git(ws, *config, "check-ignore", "--no-index", "--stdin", "-z", stdin="\0".join(entries) + "\0").stdout
    rules = IgnoreRules.load(ws, patterns)
    return {rel for rel, is_dir in entries.items() if rules.ignored(rel, is_dir)}, set(out.split("\0")) - {""}


def test_every_entry_of_the_tree_agrees_with_git(tree: tuple[Path, Path]) -> None:
    """Not just the chosen cases: every file and directory, including the ignore files themselves."""
    mine, git = _ignored_by_both(*tree, EXTRA)
    assert mine == git


@pytest.mark.parametrize("lines", ["/**/\n!a/\n", "*/\n!a/\n", "**/\n!a/\n"])
def test_any_directory_patterns_reach_inside_a_reincluded_directory(tmp_path: Path, lines: str) -> None:
    assert _git(tmp_path, "init", "-q").returncode == 0
    for rel in [".gitignore", "a/f", "a/b/g", "c/d/e", "top"]:
        _write(tmp_path, rel, lines if rel == ".gitignore" else "x\n")
    mine, git = _ignored_by_both(tmp_path)
    assert mine == git == {"a/b", "a/b/g", "c", "c/d", "c/d/e"}


def test_prunes_whole_ignored_directories_only(tree: tuple[Path, Path]) -> None:
    rules = IgnoreRules.load(tree[0], EXTRA)
    assert [d for d in ["", "logs", "build", "x/y/cache", "gen/d", "vendor", "gen", "sub"] if rules.prunes(d)] == [
        "logs", "build", "x/y/cache", "gen/d"]


def test_sources_are_the_files_git_reads_and_unusable_lines_are_problems(tree: tuple[Path, Path]) -> None:
    rules = IgnoreRules.load(tree[0], EXTRA)
    assert sorted(rules.sources) == [".git/info/exclude", ".gitignore", "sub/.gitignore", "sub/deep/.gitignore"]
    assert rules.problems == (".gitignore, line 19: '[z-a]' can never match, skipped",)


def test_ignore_files_inside_ignored_directories_are_not_read(tmp_path: Path) -> None:
    _write(tmp_path, ".gitignore", "node_modules/\n")
    _write(tmp_path, "node_modules/pkg/.gitignore", "!*\n")
    rules = IgnoreRules.load(tmp_path)
    assert rules.sources == (".gitignore",)
    assert rules.ignored("node_modules/pkg/index.js")


def test_a_symlinked_ignore_file_is_skipped_and_named(tmp_path: Path) -> None:
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    outside.mkdir()
    (outside / "rules").write_text("*.txt\n")
    (outside / "info").mkdir()
    (outside / "info" / "exclude").write_text("*.md\n")
    _write(ws, "sub/.gitignore", "*.py\n")
    (ws / ".gitignore").symlink_to(outside / "rules")
    (ws / ".git").symlink_to(outside)  # so .git/info/exclude is outside too
    rules = IgnoreRules.load(ws)
    assert rules.sources == ("sub/.gitignore",)
    assert rules.problems == (".git/info/exclude: not read: it is outside the workspace",
                              ".gitignore: not read: it is a symbolic link (git does not follow it either)")
    assert (rules.ignored("a.txt"), rules.ignored("a.md"), rules.ignored("sub/a.py")) == (False, False, True)


def test_undecodable_and_unreadable_files_are_problems_not_failures(tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_bytes(b"*.bin\n\xff\xfe broken\n")
    _write(tmp_path, "ok/.gitignore", "*.o\n")
    (tmp_path / "fifo").mkdir()
    os.mkfifo(tmp_path / "fifo" / ".gitignore")  # a reader would wait for a writer forever
    rules = IgnoreRules.load(tmp_path)
    assert rules.sources == ("ok/.gitignore",)
    assert rules.problems == (".gitignore: not read: it is not UTF-8 text",
                              "fifo/.gitignore: not read: it is not a regular file")
    assert (rules.ignored("x.bin"), rules.ignored("ok/x.o")) == (False, True)


def test_reload_is_needed_when_an_ignore_file_changes() -> None:
    rules = IgnoreRules(Path("/nowhere"))
    assert rules.reload_needed(["src/a.py", "deep/dir/.gitignore"])
    assert rules.reload_needed([".gitignore"]) and rules.reload_needed([".git/info/exclude"])
    assert not rules.reload_needed(["src/a.py", "x.gitignore", "gitignore", ".gitignore/x"])


@pytest.mark.timeout(RUNAWAY_S)  # milliseconds here (a few tens); the figure is not in bench/
def test_ten_thousand_answers_take_milliseconds(tmp_path: Path) -> None:
    """A full walk asks once per file; cached directory states keep that linear and cheap."""
    _write(tmp_path, ".gitignore", "".join(f"{p}\n" for p in [
        "node_modules/", "/build", "dist/", "*.log", "*.py[cod]", "__pycache__/", ".venv/", "*.egg-info/",
        ".DS_Store", "coverage/", ".pytest_cache/", "*.tmp", "*.swp", "/target", "out/", "!keep.log", "*.o",
        ".idea/", "secrets/*.key", "**/cache"]))
    for d in ["pkg0", "pkg1/lib", "pkg2/src/deep"]:
        _write(tmp_path, f"{d}/.gitignore", "!*.log\n/generated\nsnapshots/\n")
    dirs = [f"pkg{i % 3}/src/m{i % 7}/sub{i % 11}" for i in range(300)] + ["pkg2/src/deep/x", "node_modules/a/b"]
    paths = [f"{dirs[i % len(dirs)]}/file{i}.{('py', 'log', 'txt', 'pyc')[i % 4]}" for i in range(10_000)]
    rules = IgnoreRules.load(tmp_path)  # cold caches
    verdicts = [rules.ignored(p) for p in paths]
    assert 0 < sum(verdicts) < len(paths)


POOL = ["*.log", "!keep.log", "/build", "build/", "**/cache", "a/**/b", "logs/", "!logs/x.log", "vendor/**",
        "!vendor/keep.log", "gen/**/", "*/", "!a/", "**/", "*", "!*.txt", "d*/", "!d1/", "a/*", "!a/b", "/a/b/",
        "x?", "[ab]", "**/a", "a/**", "!**/b", "b", "!b/", "*/b/", "!/b", "\\!x", "cache/**/*.txt",
        "/**/", "!**/d1", "/*"]
NAMES = ["a", "b", "d1", "build", "cache", "logs", "vendor", "gen", "keep.log", "x.log", "f.txt", "x1"]


@pytest.mark.parametrize("seed", range(12))
def test_random_rule_sets_agree_with_git(tmp_path: Path, seed: int) -> None:
    """Mixed patterns at several depths: git and these rules pick the same paths, every one of them."""
    rng = random.Random(seed)
    ws = tmp_path / "ws"
    ws.mkdir()
    assert _git(ws, "init", "-q").returncode == 0
    entries: dict[str, bool] = {}
    for _ in range(60):
        parts = [rng.choice(NAMES) for _ in range(rng.randint(1, 4))]
        rel = "/".join(parts)
        if any(entries.get("/".join(parts[:i])) is False for i in range(1, len(parts))):
            continue  # a parent is already a file
        for i in range(1, len(parts)):
            entries["/".join(parts[:i])] = True
        entries.setdefault(rel, rng.random() < 0.3)
    for rel, is_dir in entries.items():
        (ws / rel).mkdir(parents=True, exist_ok=True) if is_dir else _write(ws, rel, "x\n")
    for base in [""] + rng.sample(sorted(r for r, d in entries.items() if d), k=min(3, sum(entries.values()))):
        lines = rng.sample(POOL, k=rng.randint(3, 8))
        _write(ws, f"{base}/.gitignore" if base else ".gitignore", "\n".join(lines) + "\n")
    mine, git = _ignored_by_both(ws)
    assert mine == git
