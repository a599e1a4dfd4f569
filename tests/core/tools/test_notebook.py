"""NotebookEdit: one cell replaced, inserted or deleted; the rest of the notebook as Jupyter wrote it."""

from __future__ import annotations

import asyncio
import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from core.changes.diffs import compute_diff
from core.errors import ErrorKind, ToolError
from core.ids import AgentId, CallId
from core.paths import Workspace
from core.run import arguments
from core.store import fsio
from core.tools import nbcells
from core.tools.base import ReadState, ToolContext, WritePlan
from core.tools.notebook import NotebookEdit, NotebookEditArgs
from core.tools.read import Read, ReadArgs


def cell(cell_id: str | None, cell_type: str, source: list[str], **extra: Any) -> dict[str, Any]:
    c: dict[str, Any] = {"cell_type": cell_type, "metadata": {}, "source": source, **extra}
    if cell_id is not None:
        c["id"] = cell_id
    return c


def notebook(cells: list[dict[str, Any]], minor: int = 5) -> dict[str, Any]:
    return {"cells": cells, "metadata": {"kernelspec": {"display_name": "Python 3 – ünïcode", "name": "python3"},
                                         "language_info": {"name": "python"}},
            "nbformat": 4, "nbformat_minor": minor}


def jupyter_bytes(nb: dict[str, Any]) -> bytes:
    """What Jupyter itself writes (nbformat.writes, plus the trailing newline nbformat.write adds)."""
    return (json.dumps(nb, sort_keys=True, indent=1, ensure_ascii=False) + "\n").encode()


NB = notebook([
    cell("m1", "markdown", ["# Title\n", "Intro ✓"]),
    cell("c2", "code", ["x = 1\n", "x"], execution_count=3,
         outputs=[{"data": {"text/plain": ["1"]}, "execution_count": 3, "metadata": {},
                   "output_type": "execute_result"}]),
    cell("c3", "code", ["print(x)"], execution_count=4, outputs=[]),
])


def make_ctx(root: Path) -> ToolContext:
    return ToolContext(workspace=Workspace(root), agent_id=AgentId("a"), call_id=CallId("c"), read_state=ReadState())


def plan(ctx: ToolContext, **args: object) -> WritePlan:
    return NotebookEdit().plan(NotebookEditArgs.model_validate(args), ctx)


def plan_error(ctx: ToolContext, **args: object) -> ToolError:
    with pytest.raises(ToolError) as info:
        plan(ctx, **args)
    return info.value


def applied(ctx: ToolContext, p: WritePlan) -> dict[str, Any]:
    """Apply the plan as the pipeline would and return the notebook now on disk."""
    (w,) = p.writes
    assert w.after is not None
    fsio.atomic_write(ctx.workspace, w.path, w.after, w.mode)
    return json.loads(w.path.read_text(encoding="utf-8"))


@pytest.fixture
def root(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "nb.ipynb").write_bytes(jupyter_bytes(NB))
    return ws


@pytest.fixture
def nb_path(root: Path) -> str:
    return f"{root}/nb.ipynb"


def test_replacing_a_code_cell_sets_its_source_and_clears_its_outputs(root: Path, nb_path: str) -> None:
    ctx = make_ctx(root)
    p = plan(ctx, notebook_path=nb_path, cell_id="c2", new_source="y = 2\nprint(y)\n")
    assert p.message == "Replaced cell c2 in nb.ipynb; its outputs were cleared."
    assert p.writes[0].before == jupyter_bytes(NB)
    written = applied(ctx, p)
    assert written["cells"][1] == cell("c2", "code", ["y = 2\n", "print(y)\n"], execution_count=None, outputs=[])
    assert written["cells"][0] == NB["cells"][0] and written["cells"][2] == NB["cells"][2]
    assert written["metadata"] == NB["metadata"]


def test_the_written_notebook_is_byte_for_byte_what_jupyter_would_write(root: Path, nb_path: str) -> None:
    ctx = make_ctx(root)
    expected = copy.deepcopy(NB)
    expected["cells"][0]["source"] = ["# New title\n", "Ünïcode stays as it is"]
    p = plan(ctx, notebook_path=nb_path, cell_id="m1", new_source="# New title\nÜnïcode stays as it is")
    assert p.writes[0].after == jupyter_bytes(expected)
    unchanged = plan(ctx, notebook_path=nb_path, cell_id="m1", new_source="# Title\nIntro ✓")
    assert unchanged.writes[0].after == unchanged.writes[0].before
    assert unchanged.message == "Replaced cell m1 in nb.ipynb."
    to_code = plan(ctx, notebook_path=nb_path, cell_id="m1", new_source="1", cell_type="code")
    expected = copy.deepcopy(NB)
    expected["cells"][0] = cell("m1", "code", ["1"], execution_count=None, outputs=[])
    assert to_code.writes[0].after == jupyter_bytes(expected)
    inserted = plan(ctx, notebook_path=nb_path, cell_id="c3", edit_mode="insert", cell_type="code", new_source="z")
    new_id = json.loads(inserted.writes[0].after or b"")["cells"][3]["id"]
    expected = copy.deepcopy(NB)
    expected["cells"].append(cell(new_id, "code", ["z"], execution_count=None, outputs=[]))
    assert inserted.writes[0].after == jupyter_bytes(expected)


def test_a_notebook_s_own_indentation_and_line_endings_are_kept(root: Path) -> None:
    (root / "two.ipynb").write_bytes(json.dumps(NB, indent=2).replace("\n", "\r\n").encode() + b"\r\n")
    p = plan(make_ctx(root), notebook_path=f"{root}/two.ipynb", cell_id="c3", new_source="pass")
    expected = copy.deepcopy(NB)
    expected["cells"][2].update(source=["pass"], execution_count=None)
    crlf = json.dumps(expected, indent=2, ensure_ascii=False).replace("\n", "\r\n") + "\r\n"
    assert p.writes[0].after == crlf.encode()


def test_changing_a_cell_s_type_gives_it_that_type_s_fields(root: Path, nb_path: str) -> None:
    ctx = make_ctx(root)
    p = plan(ctx, notebook_path=nb_path, cell_id="c2", new_source="Now prose", cell_type="markdown")
    assert p.message == "Replaced cell c2 in nb.ipynb; it is now a markdown cell."
    assert applied(ctx, p)["cells"][1] == cell("c2", "markdown", ["Now prose"])
    (root / "img.ipynb").write_bytes(jupyter_bytes(notebook([cell("m", "markdown", ["![x](attachment:x.png)"],
                                                                   attachments={"x.png": {"image/png": "iVBO"}})])))
    p = plan(ctx, notebook_path=f"{root}/img.ipynb", cell_id="m", new_source="1 + 1", cell_type="code")
    assert applied(ctx, p)["cells"][0] == cell("m", "code", ["1 + 1"], execution_count=None, outputs=[])


def test_insert_adds_a_cell_with_a_fresh_id_after_the_named_cell(root: Path, nb_path: str) -> None:
    ctx = make_ctx(root)
    p = plan(ctx, notebook_path=nb_path, cell_id="m1", edit_mode="insert", cell_type="code", new_source="import os\n")
    cells = applied(ctx, p)["cells"]
    assert [c.get("id") for c in cells][::2] == ["m1", "c2"] and len(cells) == 4
    new = cells[1]
    assert re.fullmatch(r"[0-9a-f]{8}", new["id"]) and new["id"] not in {"m1", "c2", "c3"}
    assert new == cell(new["id"], "code", ["import os\n"], execution_count=None, outputs=[])
    assert p.message == f"Inserted code cell {new['id']} after cell m1 in nb.ipynb."


def test_insert_without_a_cell_id_puts_the_cell_at_the_top(root: Path, nb_path: str) -> None:
    ctx = make_ctx(root)
    p = plan(ctx, notebook_path=nb_path, edit_mode="insert", cell_type="markdown", new_source="Read me first")
    cells = applied(ctx, p)["cells"]
    assert cells[0] == cell(cells[0]["id"], "markdown", ["Read me first"]) and cells[1]["id"] == "m1"
    assert p.message == f"Inserted markdown cell {cells[0]['id']} at the top of nb.ipynb."


def test_delete_removes_the_cell(root: Path, nb_path: str) -> None:
    ctx = make_ctx(root)
    p = plan(ctx, notebook_path=nb_path, cell_id="c2", edit_mode="delete", new_source="")
    assert p.message == "Deleted cell c2 from nb.ipynb (2 cells left)."
    assert [c["id"] for c in applied(ctx, p)["cells"]] == ["m1", "c3"]


def test_cells_without_ids_are_named_by_position(root: Path) -> None:
    ctx = make_ctx(root)
    old = notebook([cell(None, "code", ["a"], execution_count=None, outputs=[]), cell(None, "raw", ["b"])], minor=4)
    (root / "old.ipynb").write_bytes(jupyter_bytes(old))
    path = f"{root}/old.ipynb"
    by_label = plan(ctx, notebook_path=path, cell_id="cell-1", new_source="B")
    assert by_label.message == "Replaced cell cell-1 in old.ipynb."
    by_index = plan(ctx, notebook_path=path, cell_id="1", new_source="B")
    assert applied(ctx, by_index)["cells"][1] == cell(None, "raw", ["B"])
    p = plan(ctx, notebook_path=path, cell_id="cell-0", edit_mode="insert", cell_type="markdown", new_source="m")
    assert p.message == "Inserted markdown cell cell-1 after cell cell-0 in old.ipynb."
    assert "id" not in applied(ctx, p)["cells"][1]  # nbformat 4.4 cells have no ids


def test_an_id_is_matched_before_a_position(root: Path) -> None:
    (root / "n.ipynb").write_bytes(jupyter_bytes(notebook([cell("cell-1", "markdown", ["first"]),
                                                           cell("zz", "markdown", ["second"])])))
    ctx = make_ctx(root)
    cells = applied(ctx, plan(ctx, notebook_path=f"{root}/n.ipynb", cell_id="cell-1", new_source="changed"))["cells"]
    assert [c["source"] for c in cells] == [["changed"], ["second"]]


def test_an_unknown_cell_is_not_found_and_the_error_lists_cells(root: Path, nb_path: str) -> None:
    ctx = make_ctx(root)
    error = plan_error(ctx, notebook_path=nb_path, cell_id="nope", new_source="x")
    assert error.kind is ErrorKind.NOT_FOUND
    assert error.info.message == "cell 'nope' not found in nb.ipynb (3 cells)"
    assert error.info.suggestion == "Its cells are m1, c2, c3."
    assert plan_error(ctx, notebook_path=nb_path, cell_id="cell-3", new_source="x").kind is ErrorKind.NOT_FOUND
    many = notebook([cell(f"id{i}", "markdown", []) for i in range(8)])
    (root / "many.ipynb").write_bytes(jupyter_bytes(many))
    error = plan_error(ctx, notebook_path=f"{root}/many.ipynb", cell_id="x", edit_mode="delete", new_source="")
    assert error.info.suggestion == "Its cells are id0, id1, id2, id3, id4 and 3 more."


INVALID = [
    (b"{not json", "nb.ipynb is not valid JSON: Expecting property name enclosed in double quotes at line 1 column 2"),
    (b"[1, 2]", "nb.ipynb is not a Jupyter notebook: its JSON is a list, not an object"),
    (b'{"cells": []}', "nb.ipynb is not a Jupyter notebook: it has no nbformat version"),
    (b'{"nbformat": 3, "nbformat_minor": 0, "worksheets": []}',
     "nb.ipynb is an nbformat 3 notebook; only nbformat 4 notebooks can be read and edited"),
    (b'{"nbformat": 4, "nbformat_minor": 5, "metadata": {}}',
     "nb.ipynb is not a Jupyter notebook: it has no list of cells"),
    (b'{"nbformat": 4, "nbformat_minor": 5, "cells": [{"source": "x"}]}',
     "nb.ipynb has an invalid cell at position 0: not an object with a cell_type"),
    (b"\xff\xfe{}", "nb.ipynb is not UTF-8 text (byte 0), so not a Jupyter notebook"),
    (b'{"nbformat": 4, "nbformat_minor": 5, "cells": [], "metadata": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
     "nb.ipynb is nested too deeply to be a Jupyter notebook"),
    (b'{"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [{"id": "a", "cell_type": "code",'
     b' "metadata": {}, "outputs": [], "execution_count": null}]}',
     "nb.ipynb is not a valid Jupyter notebook: cell 0 (id a): 'source' is a required property"),
    (b'{"nbformat": 4, "nbformat_minor": 4, "cells": []}',
     "nb.ipynb is not a valid Jupyter notebook: 'metadata' is a required property"),
]


@pytest.mark.parametrize(("content", "message"), INVALID)
def test_a_file_that_is_not_a_notebook_is_invalid(root: Path, nb_path: str, content: bytes, message: str) -> None:
    (root / "nb.ipynb").write_bytes(content)
    error = plan_error(make_ctx(root), notebook_path=nb_path, edit_mode="insert", cell_type="code", new_source="x")
    assert (error.kind, error.info.message) == (ErrorKind.INVALID_NOTEBOOK, message)
    assert (root / "nb.ipynb").read_bytes() == content


def test_the_check_after_an_edit_says_the_edit_is_what_would_break_the_notebook() -> None:
    broken = notebook([cell("a", "markdown", ["x"]), cell("b", "code", ["y"], outputs=[])])
    with pytest.raises(ToolError) as info:
        nbcells.check_schema(broken, "nb.ipynb", edited=True)
    assert info.value.kind is ErrorKind.INVALID_NOTEBOOK
    assert info.value.info.message == ("the edit would make nb.ipynb an invalid notebook: cell 1 (id b):"
                                       " 'execution_count' is a required property")


def test_argument_mistakes_are_invalid_args(root: Path, nb_path: str) -> None:
    ctx = make_ctx(root)
    (root / "app.py").write_text("x = 1\n")
    cases = [({"notebook_path": f"{root}/app.py", "cell_id": "c2"}, "must be a Jupyter notebook (.ipynb)"),
             ({"notebook_path": nb_path, "edit_mode": "insert"}, "cell_type is required when edit_mode is insert"),
             ({"notebook_path": nb_path}, "cell_id is required when edit_mode is replace"),
             ({"notebook_path": nb_path, "cell_id": "c2", "new_source": "bad \ud800"},
              "new_source is not valid Unicode"),
             ({"notebook_path": "nb.ipynb", "cell_id": "c2"}, "notebook_path must be an absolute path")]
    for args, message in cases:
        error = plan_error(ctx, **{"new_source": "x", **args})
        assert error.kind is ErrorKind.INVALID_ARGS and message in error.info.message
    assert (root / "nb.ipynb").read_bytes() == jupyter_bytes(NB)


def test_arguments_are_strict_and_the_pipeline_reports_them_as_invalid_args() -> None:
    base = {"notebook_path": "/w/nb.ipynb", "cell_id": "a", "new_source": "x"}
    for bad in ({**base, "edit_mode": "append"}, {**base, "cell_type": "raw"}, {**base, "cell_id": 3},
                {"notebook_path": "/w/nb.ipynb"}, {**base, "extra": 1}):
        with pytest.raises(ValidationError):
            NotebookEditArgs.model_validate(bad)
    with pytest.raises(ToolError) as info:
        arguments.validate(NotebookEdit(), {**base, "edit_mode": "append"})
    assert info.value.kind is ErrorKind.INVALID_ARGS and "edit_mode" in info.value.info.message


def test_a_missing_notebook_is_not_created(root: Path) -> None:
    error = plan_error(make_ctx(root), notebook_path=f"{root}/new.ipynb", edit_mode="insert", cell_type="code",
                       new_source="x")
    assert error.kind is ErrorKind.NOT_FOUND and error.info.message == "new.ipynb does not exist"
    assert "Write" in error.info.suggestion and not (root / "new.ipynb").exists()


def test_a_notebook_changed_since_it_was_read_is_stale(root: Path, nb_path: str) -> None:
    ctx = make_ctx(root)
    asyncio.run(Read().run(ReadArgs(file_path=nb_path), ctx))
    (root / "nb.ipynb").write_bytes(jupyter_bytes(notebook([])))
    error = plan_error(ctx, notebook_path=nb_path, cell_id="c2", new_source="x")
    assert error.kind is ErrorKind.STALE_READ and "nb.ipynb was modified since you read it" in error.info.message


def test_a_notebook_outside_the_workspace_is_refused(root: Path, tmp_path: Path) -> None:
    (tmp_path / "secret.ipynb").write_bytes(jupyter_bytes(NB))
    (root / "link.ipynb").symlink_to(tmp_path / "secret.ipynb")
    error = plan_error(make_ctx(root), notebook_path=f"{root}/link.ipynb", cell_id="c2", new_source="x")
    assert error.kind is ErrorKind.OUTSIDE_WORKSPACE and "notebook_path" in error.info.message


def test_a_notebook_with_large_outputs_can_still_be_edited(root: Path) -> None:
    image = "A" * (12 * 1024 * 1024)  # a plot's base64, bigger than Read's 10 MB limit
    big = notebook([cell("plot", "code", ["plot()"], execution_count=1,
                         outputs=[{"data": {"image/png": image}, "metadata": {}, "output_type": "display_data"}]),
                    cell("note", "markdown", ["old"])])
    (root / "big.ipynb").write_bytes(jupyter_bytes(big))
    ctx = make_ctx(root)
    written = applied(ctx, plan(ctx, notebook_path=f"{root}/big.ipynb", cell_id="note", new_source="new"))
    assert written["cells"][1]["source"] == ["new"] and written["cells"][0]["outputs"][0]["data"]["image/png"] == image


def test_source_is_stored_as_lines_the_way_jupyter_stores_it(root: Path, nb_path: str) -> None:
    ctx = make_ctx(root)
    for source, lines in (("a\n\nb\n", ["a\n", "\n", "b\n"]), ("one line", ["one line"]), ("", []),
                          ("tab\tand\r\nCRLF", ["tab\tand\r\n", "CRLF"])):
        written = applied(ctx, plan(ctx, notebook_path=nb_path, cell_id="c3", new_source=source))
        assert written["cells"][2]["source"] == lines and "".join(lines) == source


def test_summaries_name_the_notebook_the_mode_and_the_cell(root: Path, nb_path: str) -> None:
    ws, tool = Workspace(root), NotebookEdit()
    cases = [({"cell_id": "c2"}, "nb.ipynb (replace cell c2)"),
             ({"cell_id": "c2", "edit_mode": "delete"}, "nb.ipynb (delete cell c2)"),
             ({"cell_id": "m1", "edit_mode": "insert", "cell_type": "code"}, "nb.ipynb (insert code cell after m1)"),
             ({"edit_mode": "insert", "cell_type": "markdown"}, "nb.ipynb (insert markdown cell at the top)")]
    for extra, expected in cases:
        args = NotebookEditArgs.model_validate({"notebook_path": nb_path, "new_source": "x", **extra})
        assert tool.summary(args, ws) == expected


def shown_diff(p: WritePlan) -> tuple[list[str], list[str]]:
    """The lines the approval diff removes and adds, computed on what the plan shows (its cells, not JSON)."""
    (w,) = p.writes
    assert w.shown is not None
    diff = compute_diff("nb.ipynb", *w.shown)
    lines = [line for hunk in diff.hunks for line in hunk.lines]
    return [x.text for x in lines if x.kind == "-"], [x.text for x in lines if x.kind == "+"]


def test_the_approval_shows_cells_with_outputs_folded_not_json(root: Path, nb_path: str) -> None:
    p = plan(make_ctx(root), notebook_path=nb_path, cell_id="c3", new_source="print(x)")
    assert p.writes[0].shown is not None
    assert p.writes[0].shown[0] == ("# ── cell m1 · markdown ──\n# Title\nIntro ✓\n\n"
                                    "# ── cell c2 · code ──\nx = 1\nx\n# [1 output folded]\n\n"
                                    "# ── cell c3 · code ──\nprint(x)\n").encode()
    assert p.writes[0].shown[1] == p.writes[0].shown[0]


def test_the_approval_diff_of_a_replace_touches_only_that_cell(root: Path, nb_path: str) -> None:
    p = plan(make_ctx(root), notebook_path=nb_path, cell_id="c2", new_source="y = 2\nprint(y)\n")
    removed, added = shown_diff(p)
    assert removed == ["x = 1", "x", "# [1 output folded]"]
    assert added == ["y = 2", "print(y)"]


def test_the_approval_diff_of_an_insert_or_delete_renames_no_other_cell(root: Path, nb_path: str) -> None:
    ctx = make_ctx(root)
    inserted = plan(ctx, notebook_path=nb_path, edit_mode="insert", cell_type="code", new_source="import os\n")
    new_id = json.loads(inserted.writes[0].after or b"")["cells"][0]["id"]
    removed, added = shown_diff(inserted)
    assert removed == [] and [line for line in added if line] == [f"# ── cell {new_id} · code ──", "import os"]
    removed, added = shown_diff(plan(ctx, notebook_path=nb_path, cell_id="c2", edit_mode="delete", new_source=""))
    assert added == [] and [line for line in removed if line] == ["# ── cell c2 · code ──", "x = 1", "x",
                                                                  "# [1 output folded]"]


def test_cells_without_ids_are_headed_by_the_name_cell_id_takes(root: Path) -> None:
    old = notebook([cell(None, "code", "a = 1", execution_count=None, outputs=[]), cell(None, "raw", ["b"])], minor=4)
    (root / "old.ipynb").write_bytes(jupyter_bytes(old))
    p = plan(make_ctx(root), notebook_path=f"{root}/old.ipynb", cell_id="cell-1", new_source="B")
    assert p.writes[0].shown == ("# ── cell-0 · code ──\na = 1\n\n# ── cell-1 · raw ──\nb\n".encode(),
                                 "# ── cell-0 · code ──\na = 1\n\n# ── cell-1 · raw ──\nB\n".encode())


SCHEMA_INVALID = [
    ([cell("a", "code", ["x"], outputs=[], execution_count=None, extra=1)],
     "cell 0 (id a): Additional properties are not allowed ('extra' was unexpected)"),
    ([cell("a", "code", ["x"], execution_count=1, outputs=[{"output_type": "stream", "name": "stdout"}])],
     "cell 0 (id a), outputs[0]: 'text' is a required property"),
    ([cell("a", "python", ["x"])], "cell 0 (id a): cell_type 'python' is not one of raw, markdown, code"),
    ([cell("a b", "markdown", ["x"])], "cell 0 (id a b), id: 'a b' does not match '^[a-zA-Z0-9-_]+$'"),
    ([cell("a", "markdown", 5)], "cell 0 (id a), source: 5 is not valid under any of the given schemas"),
]


@pytest.mark.parametrize(("cells", "problem"), SCHEMA_INVALID)
def test_a_notebook_its_schema_refuses_is_not_edited(root: Path, nb_path: str, cells: list[dict[str, Any]],
                                                      problem: str) -> None:
    content = jupyter_bytes(notebook(cells))
    (root / "nb.ipynb").write_bytes(content)
    error = plan_error(make_ctx(root), notebook_path=nb_path, edit_mode="insert", cell_type="code", new_source="x")
    assert (error.kind, error.info.message) == (ErrorKind.INVALID_NOTEBOOK,
                                                f"nb.ipynb is not a valid Jupyter notebook: {problem}")
    assert "Jupyter" in error.info.suggestion and (root / "nb.ipynb").read_bytes() == content


def test_a_cell_missing_its_id_in_a_4_5_notebook_is_tolerated_as_nbformat_does(root: Path, nb_path: str) -> None:
    (root / "nb.ipynb").write_bytes(jupyter_bytes(notebook([cell(None, "markdown", ["old"])])))
    ctx = make_ctx(root)
    assert applied(ctx, plan(ctx, notebook_path=nb_path, cell_id="cell-0", new_source="new"))["cells"] == [
        cell(None, "markdown", ["new"])]
