"""Tests for core.tools.nbpartial: a NotebookEdit approved in part writes the cell as the accepted hunks show it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.changes.diffs import compute_diff
from core.changes.partial import PartialError, apply_hunks
from core.models.diffs import FileDiff
from core.tools.base import FileWrite
from core.tools.nbcells import load, render
from core.tools.nbpartial import notebook_edit_input, notebook_in_part
from tests.core.tools.test_notebook import cell, jupyter_bytes, make_ctx, notebook, plan

LONG = [f"step_{n} = {n}\n" for n in range(30)]
NOTEBOOK = notebook([
    cell("m1", "markdown", ["# Title\n", "Intro"]),
    cell("c2", "code", [*LONG[:-1], LONG[-1].rstrip("\n")], execution_count=3,
         outputs=[{"name": "stdout", "output_type": "stream", "text": ["done\n"]}]),
    cell("c3", "code", ["print(step_1)"], execution_count=4, outputs=[]),
])


@pytest.fixture
def replaced(tmp_path: Path) -> tuple[FileWrite, FileDiff]:
    """The agent rewrites two far-apart lines of cell c2 (which clears its output): three hunks."""
    (tmp_path / "nb.ipynb").write_bytes(jupyter_bytes(NOTEBOOK))
    new_source = "".join(LONG).replace("step_2 = 2\n", "step_2 = 'two'\n").replace("step_28 = 28\n", "step_28 = -28\n")
    p = plan(make_ctx(tmp_path), notebook_path=str(tmp_path / "nb.ipynb"), cell_id="c2",
             new_source=new_source.rstrip("\n"))
    (write,) = p.writes
    assert write.shown is not None
    diff = compute_diff("nb.ipynb", *write.shown)
    assert len(diff.hunks) == 2  # the second change and the cleared output are one hunk
    return write, diff


def test_the_first_change_alone_is_written_and_the_output_is_cleared_with_the_second(
        replaced: tuple[FileWrite, FileDiff]) -> None:
    write, diff = replaced
    data = notebook_in_part(write, diff, {0}, "nb.ipynb")
    written = json.loads(data)
    c2 = written["cells"][1]
    assert "".join(c2["source"]) == "".join(LONG).replace("step_2 = 2\n", "step_2 = 'two'\n").rstrip("\n")
    assert c2["source"][-1] == "step_29 = 29"  # stored as Jupyter stores it: lines, no newline at the end
    assert c2["outputs"] == NOTEBOOK["cells"][1]["outputs"] and c2["execution_count"] == 3  # kept with its hunk
    assert written["cells"][0] == NOTEBOOK["cells"][0] and written["cells"][2] == NOTEBOOK["cells"][2]
    assert render(load(data, "nb.ipynb")[1]) == apply_hunks(write.shown[0], diff, {0})  # reads as approved


def test_the_second_change_alone_clears_the_output_with_it(replaced: tuple[FileWrite, FileDiff]) -> None:
    write, diff = replaced
    c2 = json.loads(notebook_in_part(write, diff, {1}, "nb.ipynb"))["cells"][1]
    assert "".join(c2["source"]) == "".join(LONG).replace("step_28 = 28\n", "step_28 = -28\n").rstrip("\n")
    assert c2["outputs"] == [] and c2["execution_count"] is None


def test_everything_or_nothing_accepted_is_the_tools_notebook_or_the_one_on_disk(
        replaced: tuple[FileWrite, FileDiff]) -> None:
    write, diff = replaced
    assert notebook_in_part(write, diff, {0, 1}, "nb.ipynb") == write.after
    assert notebook_in_part(write, diff, (), "nb.ipynb") == write.before


def test_an_inserted_cell_is_one_hunk_approved_whole_or_not_at_all(tmp_path: Path) -> None:
    (tmp_path / "nb.ipynb").write_bytes(jupyter_bytes(NOTEBOOK))
    p = plan(make_ctx(tmp_path), notebook_path=str(tmp_path / "nb.ipynb"), cell_id="m1", edit_mode="insert",
             cell_type="code", new_source="a = 1\n" + "".join(f"# {n}\n" for n in range(10)) + "b = 2\n")
    (write,) = p.writes
    assert write.shown is not None
    diff = compute_diff("nb.ipynb", *write.shown)
    assert len(diff.hunks) == 1
    assert notebook_in_part(write, diff, (), "nb.ipynb") == write.before
    assert notebook_in_part(write, diff, {0}, "nb.ipynb") == write.after


def test_a_type_change_kept_apart_from_the_source_change_is_refused(tmp_path: Path) -> None:
    (tmp_path / "nb.ipynb").write_bytes(jupyter_bytes(NOTEBOOK))
    p = plan(make_ctx(tmp_path), notebook_path=str(tmp_path / "nb.ipynb"), cell_id="c2", cell_type="markdown",
             new_source="".join(LONG).replace("step_20 = 20\n", "step_20 = 'x'\n").rstrip("\n"))
    (write,) = p.writes
    assert write.shown is not None
    diff = compute_diff("nb.ipynb", *write.shown)
    assert len(diff.hunks) == 3  # the heading, the changed line, the cleared output
    with pytest.raises(PartialError, match="changes its type"):
        notebook_in_part(write, diff, {1, 2}, "nb.ipynb")


def test_an_agents_own_notebook_edit_gets_the_approved_source_unless_its_outputs_were_kept(
        replaced: tuple[FileWrite, FileDiff]) -> None:
    write, diff = replaced
    given = {"notebook_path": "/ws/nb.ipynb", "cell_id": "c2", "new_source": "ignored"}
    second_only = notebook_in_part(write, diff, {1}, "nb.ipynb").decode()
    assert notebook_edit_input(given, write, second_only) == {
        **given, "new_source": "".join(LONG).replace("step_28 = 28\n", "step_28 = -28\n").rstrip("\n")}
    first_only = notebook_in_part(write, diff, {0}, "nb.ipynb").decode()  # keeps the outputs: not sayable
    assert notebook_edit_input(given, write, first_only) is None
    assert notebook_edit_input({**given, "edit_mode": "insert"}, write, second_only) is None
