"""The Write tool: plans of whole-file writes, refused on directories and stale reads."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from pydantic import ValidationError

from core.errors import ErrorKind, ToolError
from core.ids import AgentId, CallId
from core.paths import Workspace
from core.store import fsio
from core.tools.base import ReadState, ToolContext, WritePlan
from core.tools.read import Read, ReadArgs
from core.tools.write import Write, WriteArgs


def make_ctx(root: Path) -> ToolContext:
    return ToolContext(workspace=Workspace(root), agent_id=AgentId("a"), call_id=CallId("c"), read_state=ReadState())


def plan(ctx: ToolContext, **args: object) -> WritePlan:
    return Write().plan(WriteArgs.model_validate(args), ctx)


def apply(ctx: ToolContext, p: WritePlan) -> None:
    for w in p.writes:
        assert w.after is not None
        fsio.atomic_write(ctx.workspace, w.path, w.after, w.mode)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "app.py").write_text("old\n")
    return ws


def test_creating_a_file_plans_a_create_with_its_directories(root: Path) -> None:
    ctx = make_ctx(root)
    p = plan(ctx, file_path=f"{root}/src/pkg/new.py", content="a\nb\nc\n")
    (w,) = p.writes
    assert (w.path, w.before, w.after, w.mode) == (root / "src" / "pkg" / "new.py", None, b"a\nb\nc\n", None)
    assert p.message == "Created src/pkg/new.py (3 lines)."
    assert not (root / "src" / "pkg").exists()  # planning writes nothing
    apply(ctx, p)
    assert (root / "src" / "pkg" / "new.py").read_text() == "a\nb\nc\n"


def test_overwriting_records_the_old_bytes(root: Path) -> None:
    p = plan(make_ctx(root), file_path=f"{root}/src/app.py", content="new\nlines\n")
    assert p.writes[0].before == b"old\n" and p.writes[0].after == b"new\nlines\n"
    assert p.message == "Wrote 2 lines to src/app.py."


def test_writing_to_a_directory_is_refused(root: Path) -> None:
    with pytest.raises(ToolError) as info:
        plan(make_ctx(root), file_path=f"{root}/src", content="x")
    assert info.value.kind is ErrorKind.IS_DIRECTORY and "src" in info.value.info.message


def test_a_file_changed_since_it_was_read_is_stale(root: Path) -> None:
    ctx = make_ctx(root)
    asyncio.run(Read().run(ReadArgs(file_path=f"{root}/src/app.py"), ctx))
    (root / "src" / "app.py").write_text("edited by a person\n")
    with pytest.raises(ToolError) as info:
        plan(ctx, file_path=f"{root}/src/app.py", content="agent\n")
    assert info.value.kind is ErrorKind.STALE_READ
    assert "src/app.py was modified since you read it" in info.value.info.message


def test_a_file_never_read_can_be_written(root: Path) -> None:
    ctx = make_ctx(root)
    asyncio.run(Read().run(ReadArgs(file_path=f"{root}/src/app.py"), ctx))
    assert plan(ctx, file_path=f"{root}/src/app.py", content="same stat\n").writes[0].before == b"old\n"
    (root / "other.txt").write_text("never read")
    assert plan(ctx, file_path=f"{root}/other.txt", content="x").writes[0].before == b"never read"


def test_outside_and_relative_paths_are_refused(root: Path, tmp_path: Path) -> None:
    ctx = make_ctx(root)
    (root / "escape").symlink_to(tmp_path)
    for path, kind in ((f"{root}/escape/x.txt", ErrorKind.OUTSIDE_WORKSPACE), ("x.txt", ErrorKind.INVALID_ARGS),
                       (f"{root}/../x.txt", ErrorKind.OUTSIDE_WORKSPACE)):
        with pytest.raises(ToolError) as info:
            plan(ctx, file_path=path, content="x")
        assert info.value.kind is kind


def test_a_lone_surrogate_in_content_is_an_argument_error(root: Path) -> None:
    with pytest.raises(ToolError) as info:
        plan(make_ctx(root), file_path=f"{root}/x.txt", content="bad \ud800")
    assert info.value.kind is ErrorKind.INVALID_ARGS


def test_arguments_are_strict() -> None:
    for bad in ({"file_path": None, "content": ""}, {"file_path": "/x"}, {"file_path": "/x", "content": 3},
                {"file_path": "/x", "content": "", "mode": 0o777}):
        with pytest.raises(ValidationError):
            WriteArgs.model_validate(bad)
