"""Edit and MultiEdit: exact, unique, byte-faithful replacement; MultiEdit all or nothing."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from pydantic import ValidationError

from core.errors import ErrorKind, ToolError
from core.ids import AgentId, CallId
from core.paths import Workspace
from core.tools.base import ReadState, ToolContext, WritePlan
from core.tools.edit import Edit, EditArgs, MultiEdit, MultiEditArgs
from core.tools.read import Read, ReadArgs

APP = "def greet():\n    print('hi')\n    print('hi')\n    print('hi')\n"


def make_ctx(root: Path) -> ToolContext:
    return ToolContext(workspace=Workspace(root), agent_id=AgentId("a"), call_id=CallId("c"), read_state=ReadState())


def edit(ctx: ToolContext, **args: object) -> WritePlan:
    return Edit().plan(EditArgs.model_validate(args), ctx)


def multi(ctx: ToolContext, file_path: str, *edits: dict[str, object]) -> WritePlan:
    return MultiEdit().plan(MultiEditArgs.model_validate({"file_path": file_path, "edits": list(edits)}), ctx)


def edit_error(ctx: ToolContext, **args: object) -> ToolError:
    with pytest.raises(ToolError) as info:
        edit(ctx, **args)
    return info.value


@pytest.fixture
def root(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "app.py").write_text(APP)
    return ws


def test_a_unique_string_is_replaced(root: Path) -> None:
    p = edit(make_ctx(root), file_path=f"{root}/src/app.py", old_string="def greet", new_string="def hello")
    assert p.writes[0].before == APP.encode()
    assert p.writes[0].after == APP.replace("def greet", "def hello").encode()
    assert p.message == "Edited src/app.py: 1 replacement."


def test_several_matches_need_replace_all(root: Path) -> None:
    ctx = make_ctx(root)
    error = edit_error(ctx, file_path=f"{root}/src/app.py", old_string="print('hi')", new_string="pass")
    assert error.kind is ErrorKind.NOT_UNIQUE
    assert "found 3 times in src/app.py" in error.info.message and "replace_all" in error.info.suggestion
    p = edit(ctx, file_path=f"{root}/src/app.py", old_string="print('hi')", new_string="pass", replace_all=True)
    assert p.writes[0].after == APP.replace("print('hi')", "pass").encode()
    assert "3 replacements" in p.message


def test_a_missing_string_is_not_found(root: Path) -> None:
    error = edit_error(make_ctx(root), file_path=f"{root}/src/app.py", old_string="goodbye", new_string="x")
    assert error.kind is ErrorKind.NOT_FOUND and error.info.message == "old_string not found in src/app.py"


def test_line_endings_are_not_normalised(root: Path) -> None:
    (root / "dos.txt").write_bytes(b"a\r\nb\r\n")
    ctx = make_ctx(root)
    error = edit_error(ctx, file_path=f"{root}/dos.txt", old_string="a\nb", new_string="c")
    assert error.kind is ErrorKind.NOT_FOUND and "CRLF" in error.info.suggestion
    p = edit(ctx, file_path=f"{root}/dos.txt", old_string="a\r\nb", new_string="c")
    assert p.writes[0].after == b"c\r\n"


def test_identical_strings_and_empty_old_string_on_content_are_invalid(root: Path) -> None:
    ctx = make_ctx(root)
    same = edit_error(ctx, file_path=f"{root}/src/app.py", old_string="greet", new_string="greet")
    assert same.kind is ErrorKind.INVALID_ARGS and "identical" in same.info.message
    empty = edit_error(ctx, file_path=f"{root}/src/app.py", old_string="", new_string="x")
    assert empty.kind is ErrorKind.INVALID_ARGS and "src/app.py is not empty" in empty.info.message


def test_a_missing_file_is_created_only_with_an_empty_old_string(root: Path) -> None:
    ctx = make_ctx(root)
    missing = edit_error(ctx, file_path=f"{root}/src/new.py", old_string="x", new_string="y")
    assert missing.kind is ErrorKind.NOT_FOUND and "src/new.py does not exist" in missing.info.message
    p = edit(ctx, file_path=f"{root}/src/new.py", old_string="", new_string="one\ntwo\n")
    assert (p.writes[0].before, p.writes[0].after) == (None, b"one\ntwo\n")
    assert p.message == "Created src/new.py (2 lines)."


def test_binary_files_are_refused(root: Path) -> None:
    (root / "img.bin").write_bytes(b"\x00\x01abc")
    error = edit_error(make_ctx(root), file_path=f"{root}/img.bin", old_string="abc", new_string="x")
    assert error.kind is ErrorKind.INVALID_ARGS and "img.bin is a binary file" in error.info.message


def test_an_edit_after_someone_else_changed_the_file_is_stale(root: Path) -> None:
    ctx = make_ctx(root)
    asyncio.run(Read().run(ReadArgs(file_path=f"{root}/src/app.py"), ctx))
    (root / "src" / "app.py").write_text(APP + "# more\n")
    error = edit_error(ctx, file_path=f"{root}/src/app.py", old_string="def greet", new_string="def hello")
    assert error.kind is ErrorKind.STALE_READ


def test_edit_arguments_are_strict() -> None:
    base = {"file_path": "/x", "old_string": "a", "new_string": "b"}
    for bad in ({**base, "replace_all": "yes"}, {**base, "file_path": None}, {**base, "extra": 1}):
        with pytest.raises(ValidationError):
            EditArgs.model_validate(bad)
    with pytest.raises(ValidationError):
        MultiEditArgs.model_validate({"file_path": "/x", "edits": []})


def test_multiedit_applies_edits_in_order(root: Path) -> None:
    p = multi(make_ctx(root), f"{root}/src/app.py",
              {"old_string": "def greet", "new_string": "def hello"},
              {"old_string": "hello", "new_string": "wave"},
              {"old_string": "print('hi')", "new_string": "pass", "replace_all": True})
    assert p.writes[0].after == b"def wave():\n    pass\n    pass\n    pass\n"
    assert p.message == "Applied 3 edits to src/app.py (5 replacements)."


def test_multiedit_is_all_or_nothing(root: Path) -> None:
    with pytest.raises(ToolError) as info:
        multi(make_ctx(root), f"{root}/src/app.py",
              {"old_string": "def greet", "new_string": "def hello"},
              {"old_string": "def greet", "new_string": "def again"})
    assert info.value.kind is ErrorKind.NOT_FOUND
    assert info.value.info.message == "edit 2 of 2: old_string not found in src/app.py"
    assert (root / "src" / "app.py").read_text() == APP


def test_multiedit_can_create_a_file_with_its_first_edit(root: Path) -> None:
    p = multi(make_ctx(root), f"{root}/new.txt",
              {"old_string": "", "new_string": "alpha beta\n"},
              {"old_string": "beta", "new_string": "gamma"})
    assert (p.writes[0].before, p.writes[0].after) == (None, b"alpha gamma\n")


def test_summaries(root: Path) -> None:
    ws = Workspace(root)
    args = MultiEditArgs.model_validate({"file_path": f"{root}/src/app.py",
                                         "edits": [{"old_string": "a", "new_string": "b"}] * 2})
    assert MultiEdit().summary(args, ws) == "src/app.py (2 edits)"
    assert Edit().summary(EditArgs(file_path=f"{root}/src/app.py", old_string="a", new_string="b"), ws) == "src/app.py"
