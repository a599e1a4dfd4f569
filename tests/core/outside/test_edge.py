"""An outside agent's file tools meet the workspace's edge where Belay's own tools do."""

from __future__ import annotations

import os
from pathlib import Path

from core.errors import ErrorKind
from core.outside.edge import path_problem, separate
from core.paths import Workspace
from core.run import arguments
from core.tools.registry import ToolRegistry, file_tools


def _problem(workspace: Path, tool: str, raw: dict[str, object]) -> ErrorKind | None:
    chosen = ToolRegistry(file_tools()).get(tool)
    assert chosen is not None
    info = path_problem(chosen, arguments.validate(chosen, raw), Workspace(workspace))
    return info.kind if info is not None else None


def test_a_path_that_leaves_the_workspace_or_is_no_file_is_refused_as_belays_own_tools_refuse(
        workspace: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("secret\n")
    (workspace / "link_out").symlink_to(outside)
    os.mkfifo(workspace / "fifo")
    assert _problem(workspace, "Read", {"file_path": str(workspace / "link_out")}) == ErrorKind.OUTSIDE_WORKSPACE
    assert _problem(workspace, "Read", {"file_path": f"{workspace}/../outside.txt"}) == ErrorKind.OUTSIDE_WORKSPACE
    assert _problem(workspace, "Read", {"file_path": "README.md"}) == ErrorKind.INVALID_ARGS  # not absolute
    assert _problem(workspace, "Read", {"file_path": str(workspace / "fifo")}) == ErrorKind.NOT_REGULAR_FILE
    assert _problem(workspace, "Write", {"file_path": str(workspace / "src"), "content": "x"}) == ErrorKind.IS_DIRECTORY
    assert _problem(workspace, "Edit", {"file_path": str(workspace / "link_out"), "old_string": "secret",
                                        "new_string": "x"}) == ErrorKind.OUTSIDE_WORKSPACE
    assert _problem(workspace, "Read", {"file_path": str(workspace / "README.md")}) is None
    assert _problem(workspace, "Write", {"file_path": str(workspace / "new.txt"), "content": "x"}) is None


def test_a_file_with_a_name_outside_gets_an_inode_of_its_own_before_the_agent_writes_it(
        workspace: Path, tmp_path: Path) -> None:
    outside = tmp_path / "other-name.txt"
    os.link(workspace / "README.md", outside)
    before = outside.read_bytes()
    assert separate(Workspace(workspace), "README.md")
    (workspace / "README.md").write_text("the agent's text\n")  # the agent's tool writes in place
    assert outside.read_bytes() == before and os.stat(outside).st_nlink == 1
    assert not separate(Workspace(workspace), "README.md")  # one name now: nothing to do
