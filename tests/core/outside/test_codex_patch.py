"""Codex's apply_patch format read into per-file writes, as the approval's diff and undo need them."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.errors import ToolError
from core.ids import CallId
from core.outside.codex_patch import ApplyPatch, ApplyPatchArgs, apply, parse
from core.paths import Workspace
from core.tools.base import ReadState, ToolContext


def _ctx(root: Path) -> ToolContext:
    return ToolContext(Workspace(root), "", CallId(""), ReadState())


def _plan(root: Path, patch: str, cwd: Path | None = None) -> dict[str, tuple[bytes | None, bytes | None]]:
    args = ApplyPatchArgs(command=patch, cwd=str(cwd or root))
    plan = ApplyPatch().plan(args, _ctx(root))
    return {str(w.path.relative_to(root)): (w.before, w.after) for w in plan.writes}


def test_a_patch_adding_updating_deleting_and_moving_plans_each_file(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("def f():\n    return 1\n\ndef g():\n    return 1\n")
    (tmp_path / "old.txt").write_text("one\ntwo\n")
    (tmp_path / "gone.txt").write_text("bye\n")
    patch = ("*** Begin Patch\n*** Update File: a.py\n@@ def g():\n-    return 1\n+    return 2\n"
             "*** Add File: new/b.txt\n+hello\n+world\n*** Delete File: gone.txt\n"
             "*** Update File: old.txt\n*** Move to: moved.txt\n@@\n one\n-two\n+three\n*** End Patch")
    planned = _plan(tmp_path, patch)
    assert planned == {
        "a.py": (b"def f():\n    return 1\n\ndef g():\n    return 1\n", b"def f():\n    return 1\n\ndef g():\n    return 2\n"),
        "new/b.txt": (None, b"hello\nworld\n"),
        "gone.txt": (b"bye\n", None),
        "old.txt": (b"one\ntwo\n", None),
        "moved.txt": (None, b"one\nthree\n"),
    }
    assert ApplyPatch().writes(ApplyPatchArgs(command=patch, cwd=str(tmp_path)), Workspace(tmp_path)) == {
        "a.py", "new/b.txt", "gone.txt", "old.txt", "moved.txt"}


def test_paths_are_relative_to_codexs_working_directory_and_may_not_leave_the_workspace(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    planned = _plan(tmp_path, "*** Begin Patch\n*** Add File: x.txt\n+x\n*** End Patch\n", cwd=tmp_path / "sub")
    assert planned == {"sub/x.txt": (None, b"x\n")}
    with pytest.raises(ToolError):
        _plan(tmp_path, "*** Begin Patch\n*** Add File: ../../out.txt\n+x\n*** End Patch\n")
    args = ApplyPatchArgs(command="*** Begin Patch\n*** Add File: ../out.txt\n+x\n*** End Patch\n", cwd=str(tmp_path))
    assert ApplyPatch().writes(args, Workspace(tmp_path)) == {""}  # unknown: the workspace is compared instead


def test_hunks_match_as_codex_matches_them() -> None:
    text = "a\n  b  \nc\nb\n"
    [update] = parse("*** Begin Patch\n*** Update File: f\n@@\n-b\n+B\n*** End Patch")
    assert apply(text, update.hunks, "f") == "a\n  b  \nc\nB\n"  # an exact match first, anywhere after
    assert apply("a\n  b  \nc\n", update.hunks, "f") == "a\nB\nc\n"  # then ignoring whitespace
    [at_end] = parse("*** Begin Patch\n*** Update File: f\n@@\n-b\n+END\n*** End of File\n*** End Patch")
    assert apply(text, at_end.hunks, "f") == "a\n  b  \nc\nEND\n"
    [two] = parse("*** Begin Patch\n*** Update File: f\n@@ c\n-b\n+after c\n@@\n+appended\n*** End Patch")
    assert apply(text, two.hunks, "f").startswith("a\n  b  \nc\nafter c\n")


@pytest.mark.parametrize("patch", ["", "*** Begin Patch\n*** End Patch", "*** Begin Patch\n+x\n*** End Patch",
                                   "*** Begin Patch\n*** Add File: x\nno plus\n*** End Patch",
                                   "*** Begin Patch\n*** Add File: x\n+x\n"])
def test_what_is_not_a_patch_is_refused(patch: str) -> None:
    with pytest.raises(ToolError):
        parse(patch)


def test_a_hunk_that_does_not_apply_and_a_missing_file_are_refused(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x\n")
    with pytest.raises(ToolError, match="not there"):
        _plan(tmp_path, "*** Begin Patch\n*** Update File: f\n@@\n-y\n+z\n*** End Patch")
    with pytest.raises(ToolError, match="does not exist"):
        _plan(tmp_path, "*** Begin Patch\n*** Delete File: nope\n*** End Patch")


def test_the_summary_names_the_files(tmp_path: Path) -> None:
    args = ApplyPatchArgs(command="*** Begin Patch\n*** Add File: a\n+x\n*** Delete File: b\n*** End Patch",
                          cwd=str(tmp_path))
    assert ApplyPatch().summary(args, Workspace(tmp_path)) == "patch a, b"


def test_the_persons_version_is_said_as_a_patch_codex_applies_to_the_same_result(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "a.txt").write_text("one\ntwo\n")
    (tmp_path / "gone.txt").write_text("bye\n")
    patch = ("*** Begin Patch\n*** Update File: a.txt\n@@\n-two\n+2\n*** Add File: b.txt\n+b\n"
             "*** Delete File: ../gone.txt\n*** End Patch\n")
    tool, args = ApplyPatch(), ApplyPatchArgs(command=patch, cwd=str(tmp_path / "sub"))
    plan = tool.plan(args, _ctx(tmp_path))
    edited = {"sub/a.txt": "one\nTWO, as the person wrote it\n"}
    rewritten = tool.edited_input(args.model_dump(), plan, edited, Workspace(tmp_path))
    assert rewritten is not None and set(rewritten) == {"command"}  # Codex's own input: no cwd added
    again = _plan(tmp_path, rewritten["command"], cwd=tmp_path / "sub")
    assert again == {"sub/a.txt": (b"one\ntwo\n", b"one\nTWO, as the person wrote it\n"), "sub/b.txt": (None, b"b\n"),
                     "gone.txt": (b"bye\n", None)}
    assert tool.edited_input(args.model_dump(), plan, {"sub/a.txt": "no final newline"}, Workspace(tmp_path)) is None
    assert tool.edited_input(args.model_dump(), plan, {"sub/b.txt": ""}, Workspace(tmp_path)) is None
