"""What every tool shares: strict frozen arguments, default reads and writes, and the paths a call depends on."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from pydantic import ValidationError

from core.errors import ErrorKind, ToolError
from core.ids import AgentId, CallId
from core.paths import Workspace
from core.run import arguments
from core.tools.base import (
    Annotations,
    ReadState,
    RunTool,
    ToolArgs,
    ToolContext,
    ToolOutput,
    WritePlan,
    WriteTool,
    read_places,
)
from core.tools.notebook import NotebookEdit, NotebookEditArgs
from core.tools.write import Write, WriteArgs


class RepeatArgs(ToolArgs):
    text: str
    times: int = 1


class Repeat(RunTool[RepeatArgs]):
    name = "repeat"
    description = "Say the text so many times."
    Args = RepeatArgs
    annotations = Annotations(read_only=True, destructive=False)

    async def run(self, args: RepeatArgs, ctx: ToolContext) -> ToolOutput:
        return ToolOutput(args.text * args.times)


class Announce(RunTool[RepeatArgs]):
    """Not read-only: it talks to the world."""

    name = "announce"
    description = "Announce the text."
    Args = RepeatArgs
    annotations = Annotations(read_only=False, destructive=False, open_world=True)

    async def run(self, args: RepeatArgs, ctx: ToolContext) -> ToolOutput:
        return ToolOutput(args.text)


class Stamp(WriteTool[RepeatArgs]):
    """A write tool whose arguments name no file."""

    name = "stamp"
    description = "Stamp something somewhere."
    Args = RepeatArgs

    def plan(self, args: RepeatArgs, ctx: ToolContext) -> WritePlan:
        return WritePlan((), "stamped")


def test_tool_arguments_refuse_unknown_keys_and_other_types_and_cannot_be_changed(tmp_path: Path) -> None:
    tool = Repeat()
    args = arguments.validate(tool, {"text": "ab", "times": 2})
    assert isinstance(args, RepeatArgs)
    ctx = ToolContext(Workspace(tmp_path), AgentId("a"), CallId("c"), ReadState())
    assert asyncio.run(tool.run(args, ctx)).text == "abab"

    with pytest.raises(ToolError) as unknown:
        arguments.validate(tool, {"text": "ab", "time": 2})
    assert unknown.value.kind == ErrorKind.INVALID_ARGS and "time: Extra inputs are not permitted" in str(unknown.value)
    with pytest.raises(ToolError) as coerced:
        arguments.validate(tool, {"text": "ab", "times": "2"})  # strict: a string is not quietly made a number
    assert "times: Input should be a valid integer" in str(coerced.value)
    with pytest.raises(ToolError):
        arguments.validate(tool, {"text": 12})
    with pytest.raises(ValidationError, match="frozen"):
        args.times = 100  # type: ignore[misc]
    assert args.times == 2


def test_a_tool_must_say_how_it_works_and_by_default_writes_anything_unless_read_only(tmp_path: Path) -> None:
    class Unfinished(RunTool[RepeatArgs]):
        name = "unfinished"
        description = "Has no run."
        Args = RepeatArgs
        annotations = Annotations()

    class Unplanned(WriteTool[RepeatArgs]):
        name = "unplanned"
        description = "Has no plan."
        Args = RepeatArgs

    with pytest.raises(TypeError, match="run"):
        Unfinished()  # type: ignore[abstract]
    with pytest.raises(TypeError, match="plan"):
        Unplanned()  # type: ignore[abstract]

    ws = Workspace(tmp_path)
    args = RepeatArgs(text="x")
    assert Repeat().writes(args, ws) is None  # read-only: runs alongside anything
    assert Announce().writes(args, ws) == frozenset({""})  # may change anything: runs alone
    assert Stamp().writes(args, ws) == frozenset({""})  # a write tool naming no file may write anything
    assert Repeat().reads(args, ws) is None  # cannot say what it read: never cached
    assert repr(Stamp()) == "<Stamp stamp>"


def test_a_write_tool_writes_the_file_its_path_argument_names_or_anything_when_it_cannot_tell(
        workspace: Path, tmp_path: Path) -> None:
    ws = Workspace(workspace)
    (workspace / "current.py").symlink_to(workspace / "src" / "shop" / "cart.py")
    outside = tmp_path / "outside.txt"
    outside.write_text("not ours\n")

    def write(path: str) -> frozenset[str] | None:
        return Write().writes(WriteArgs(file_path=path, content="x"), ws)

    assert write(f"{workspace}/src/shop/cart.py") == frozenset({"src/shop/cart.py"})
    assert write(f"{workspace}/src/new/module.py") == frozenset({"src/new/module.py"})  # not there yet
    assert write(f"{workspace}/current.py") == frozenset({"current.py", "src/shop/cart.py"})  # the link and its file
    assert write(str(outside)) == frozenset({""})  # refused later by the tool; meanwhile, it may be anything
    assert write("src/shop/cart.py") == frozenset({""})  # relative: cannot tell
    notebook = NotebookEditArgs(notebook_path=f"{workspace}/docs/analysis.ipynb", new_source="1")
    assert NotebookEdit().writes(notebook, ws) == frozenset({"docs/analysis.ipynb"})


def test_a_read_depends_on_the_path_as_named_and_where_its_link_leads(workspace: Path) -> None:
    ws = Workspace(workspace)
    (workspace / "shop").symlink_to(workspace / "src" / "shop", target_is_directory=True)
    (workspace / "usage.md").symlink_to(workspace / "docs" / "usage.md")
    (workspace / ".github").mkdir()
    (workspace / ".github" / "ci.yml").write_text("on: push\n")

    assert read_places(ws, f"{workspace}/README.md", tree=False) == frozenset({"README.md"})
    assert read_places(ws, f"{workspace}/usage.md", tree=False) == frozenset({"usage.md", "docs/usage.md"})
    assert read_places(ws, f"{workspace}/src/./shop/../shop/cart.py", tree=False) == frozenset({"src/shop/cart.py"})
    assert read_places(ws, f"{workspace}/shop", tree=True) == frozenset({"shop/", "src/shop/"})
    assert read_places(ws, f"{workspace}/shop/cart.py", tree=False) == frozenset({"shop/cart.py", "src/shop/cart.py"})
    assert read_places(ws, str(workspace), tree=True) == frozenset({""})
    assert read_places(ws, None, tree=True) == frozenset({""})  # no path: the whole workspace
    assert read_places(ws, f"{workspace}/.github/ci.yml", tree=False) == frozenset({".github/ci.yml"})


def test_a_read_inside_git_or_leading_outside_the_workspace_cannot_be_watched(workspace: Path, tmp_path: Path) -> None:
    ws = Workspace(workspace)
    (workspace / ".git").mkdir()
    (workspace / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (workspace / "vendor" / "lib" / ".git").mkdir(parents=True)
    (tmp_path / "secret.txt").write_text("elsewhere\n")
    (workspace / "secret.txt").symlink_to(tmp_path / "secret.txt")
    (workspace / "head").symlink_to(workspace / ".git" / "HEAD")

    for raw in (f"{workspace}/.git/HEAD", f"{workspace}/.git", f"{workspace}/vendor/lib/.git/config",
                f"{workspace}/head", f"{workspace}/secret.txt", str(tmp_path / "secret.txt"), "README.md"):
        assert read_places(ws, raw, tree=False) is None, raw
    assert read_places(ws, f"{workspace}/.git", tree=True) is None
