"""Grep: ripgrep's output modes, its linear-time engine, and the time-limited Python fallback."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest
from pydantic import ValidationError

from core.errors import ErrorKind, ToolError
from core.ids import AgentId, CallId
from core.paths import Workspace
from core.tools import grep
from core.tools.base import ReadState, ToolContext, ToolOutput
from core.tools.grep import Grep, GrepArgs


def make_ctx(root: Path) -> ToolContext:
    return ToolContext(workspace=Workspace(root), agent_id=AgentId("a"), call_id=CallId("c"), read_state=ReadState())


def search(root: Path, **args: object) -> ToolOutput:
    return asyncio.run(Grep().run(GrepArgs.model_validate(args), make_ctx(root)))


def search_error(root: Path, **args: object) -> ToolError:
    with pytest.raises(ToolError) as info:
        search(root, **args)
    return info.value


@pytest.fixture(params=["rg", "python"])
def engine(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Every behaviour test runs against ripgrep and against the fallback."""
    if request.param == "rg":
        assert grep.find_rg() is not None, "the ripgrep wheel should put rg beside the interpreter"
    else:
        monkeypatch.setattr(grep, "find_rg", lambda: None)
    return str(request.param)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    files = {"src/app.py": "import os\n# TODO: split\ndef main():\n    return os.getcwd()\n",
             "src/util.py": "def helper():\n    pass  # todo later\n",
             "README.md": "TODO list\n", ".git/config": "TODO in git\n"}
    for rel, text in files.items():
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(text)
    os.utime(ws / "README.md", ns=(10**9, 10**9))
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.py").write_text("TODO SECRET\n")
    (ws / "linked").symlink_to(outside)
    return ws


def test_files_with_matches_lists_absolute_paths_newest_first(root: Path, engine: str) -> None:
    out = search(root, pattern="TODO")
    assert out.data["files"] == [str(root / "src/app.py"), str(root / "README.md")]
    assert "SECRET" not in out.text and ".git" not in out.text and "linked" not in out.text


def test_content_mode_shows_path_line_and_text(root: Path, engine: str) -> None:
    out = search(root, pattern="todo", output_mode="content", **{"-i": True}, glob="*.py")
    assert out.text.split("\n") == [f"{root}/src/app.py:2:# TODO: split",
                                    f"{root}/src/util.py:2:    pass  # todo later"]


def test_context_lines_and_head_limit(root: Path, engine: str) -> None:
    out = search(root, pattern="def main", output_mode="content", path=f"{root}/src/app.py", **{"-B": 1})
    assert out.text.split("\n") == [f"{root}/src/app.py-2-# TODO: split", f"{root}/src/app.py:3:def main():"]
    limited = search(root, pattern=".", output_mode="content", path=f"{root}/src", head_limit=2)
    assert len(limited.text.split("\n")) == 2


def test_count_mode(root: Path, engine: str) -> None:
    out = search(root, pattern="o", output_mode="count", type="py")
    assert out.data["matches"] == 3
    assert out.text.split("\n") == [f"{root}/src/app.py:2", f"{root}/src/util.py:1",
                                    "Found 3 matching lines in 2 files."]


def test_no_matches_and_bad_patterns(root: Path, engine: str) -> None:
    assert search(root, pattern="nothing-like-this").text == "No matches found"
    error = search_error(root, pattern="(unclosed")
    assert error.kind is ErrorKind.INVALID_ARGS and "(unclosed" in error.info.message


def test_multiline_patterns_span_lines(root: Path, engine: str) -> None:
    out = search(root, pattern=r"split\ndef", multiline=True, output_mode="content")
    assert out.text.split("\n") == [f"{root}/src/app.py:2:# TODO: split", f"{root}/src/app.py:3:def main():"]


def test_paths_are_checked(root: Path, tmp_path: Path, engine: str) -> None:
    assert search_error(root, pattern="x", path=str(tmp_path)).kind is ErrorKind.OUTSIDE_WORKSPACE
    assert search_error(root, pattern="x", path=f"{root}/linked").kind is ErrorKind.OUTSIDE_WORKSPACE
    assert search_error(root, pattern="x", path=f"{root}/nope").kind is ErrorKind.NOT_FOUND


def test_a_pattern_starting_with_a_dash_is_a_pattern(root: Path, engine: str) -> None:
    (root / "flags.txt").write_text("use --version here\n")
    assert search(root, pattern="--version").data["files"] == [str(root / "flags.txt")]


def test_catastrophic_backtracking_finishes_quickly_with_rg(root: Path) -> None:
    (root / "evil.txt").write_text("a" * 40 + "!\n")
    started = time.monotonic()
    assert search(root, pattern="(a+)+$", path=f"{root}/evil.txt").text == "No matches found"
    assert time.monotonic() - started < 5


def test_the_fallback_is_stopped_at_its_time_limit(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(grep, "find_rg", lambda: None)
    monkeypatch.setattr(grep, "TIME_LIMIT_S", 2.0)
    (root / "evil.txt").write_text("a" * 40 + "!\n")
    started = time.monotonic()
    error = search_error(root, pattern="(a+)+$", path=f"{root}/evil.txt")
    assert error.kind is ErrorKind.TIMEOUT
    assert time.monotonic() - started < 5


def test_alias_arguments_validate() -> None:
    args = GrepArgs.model_validate({"pattern": "x", "-i": True, "-n": False, "-A": 1, "-B": 2, "-C": 3})
    assert (args.case_insensitive, args.line_numbers, args.after, args.before, args.context) == (True, False, 1, 2, 3)
    assert args.model_dump(by_alias=True)["-i"] is True
    for bad in ({"pattern": "x", "-i": "yes"}, {"pattern": "x", "output_mode": "lines"}, {"pattern": ""},
                {"pattern": "x", "-A": -1}, {"pattern": "x", "unknown": 1}):
        with pytest.raises(ValidationError):
            GrepArgs.model_validate(bad)


def test_summary(root: Path) -> None:
    args = GrepArgs.model_validate({"pattern": "TODO", "path": f"{root}/src", "glob": "*.py"})
    assert Grep().summary(args, Workspace(root)) == "'TODO' in src (*.py)"


def test_output_beyond_the_cap_stops_the_search() -> None:
    started = time.monotonic()
    rc, out, _ = asyncio.run(grep.run_capped(["yes", "match"], 10, 1000))
    assert time.monotonic() - started < 5
    assert 0 < len(out) <= 1000 and out.endswith(b"match\n")


def test_a_cancelled_search_kills_its_process(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"

    async def cancel_soon() -> None:
        task = asyncio.ensure_future(grep.run_capped(["sh", "-c", f"echo $$ > {pid_file}; exec sleep 30"], 60, 1000))
        while not pid_file.exists() or not pid_file.read_text().strip():
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(cancel_soon())
    with pytest.raises(ProcessLookupError):
        os.kill(int(pid_file.read_text()), 0)


def test_a_fifo_named_explicitly_is_refused_not_waited_on(root: Path, engine: str) -> None:
    os.mkfifo(root / "pipe")
    started = time.monotonic()
    assert search_error(root, pattern="x", path=f"{root}/pipe").kind is ErrorKind.NOT_REGULAR_FILE
    assert search(root, pattern="TODO", path=str(root)).data["files"]  # and a walk skips it
    assert time.monotonic() - started < 5
