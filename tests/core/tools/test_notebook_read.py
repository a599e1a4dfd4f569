"""NotebookRead: cells with sources and summarised outputs, one cell by name, and refusals of broken notebooks."""

from __future__ import annotations

import asyncio
import base64
import json
from pathlib import Path

import nbformat
import pytest
from nbformat import v4

from core.errors import ErrorKind, ToolError
from core.ids import AgentId, CallId
from core.paths import Workspace
from core.tools.base import ReadState, ToolContext, ToolOutput
from core.tools.notebook import NotebookEdit, NotebookEditArgs
from core.tools.notebook_read import MAX_OUTPUT_CHARS, MAX_RESULT_CHARS, NotebookRead, NotebookReadArgs

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 48).decode()  # 12 KB of image


def make_ctx(root: Path) -> ToolContext:
    return ToolContext(workspace=Workspace(root), agent_id=AgentId("a"), call_id=CallId("c"), read_state=ReadState())


def read(ctx: ToolContext, **args: object) -> ToolOutput:
    return asyncio.run(NotebookRead().run(NotebookReadArgs.model_validate(args), ctx))


def read_error(ctx: ToolContext, **args: object) -> ToolError:
    with pytest.raises(ToolError) as info:
        read(ctx, **args)
    return info.value


def analysis() -> nbformat.NotebookNode:
    """A notebook as Jupyter saves one after a run: text, a plot, an HTML-only display and an error."""
    nb = v4.new_notebook(metadata={"language_info": {"name": "python"}})
    nb.cells = [
        v4.new_markdown_cell("# Sales\nQuarterly totals.", id="intro"),
        v4.new_code_cell("import pandas as pd\nprint('loaded')", id="load", execution_count=1, outputs=[
            v4.new_output("stream", name="stdout", text="loaded\n"),
            v4.new_output("stream", name="stderr", text="\x1b[33mwarning\x1b[0m: slow disk\n")]),
        v4.new_code_cell("df.plot()", id="plot", execution_count=2, outputs=[
            v4.new_output("execute_result", execution_count=2,
                          data={"text/plain": "<Axes: >", "image/png": PNG})]),
        v4.new_code_cell("show(widget)", id="widget", execution_count=3, outputs=[
            v4.new_output("display_data", data={"text/html": "<table>" + "<tr></tr>" * 300 + "</table>"})]),
        v4.new_code_cell("1 / 0", id="boom", execution_count=4, outputs=[
            v4.new_output("error", ename="ZeroDivisionError", evalue="division by zero",
                          traceback=["\x1b[0;31mZeroDivisionError\x1b[0m Traceback", "----> 1 1 / 0"])]),
        v4.new_raw_cell("raw text", id="raw"),
    ]
    return nb


@pytest.fixture
def root(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    nbformat.write(analysis(), ws / "sales.ipynb")
    return ws


@pytest.fixture
def nb_path(root: Path) -> str:
    return f"{root}/sales.ipynb"


def test_every_cell_is_shown_with_its_name_type_source_and_outputs(root: Path, nb_path: str) -> None:
    out = read(make_ctx(root), notebook_path=nb_path)
    assert out.text == "\n\n".join([
        "sales.ipynb: 6 cells, nbformat 4.5, python",
        "# ── cell 0 · markdown · id intro ──\n# Sales\nQuarterly totals.",
        "# ── cell 1 · code · id load · In [1] ──\nimport pandas as pd\nprint('loaded')\n# ── 2 outputs ──\n"
        "[stdout]\nloaded\n[stderr]\nwarning: slow disk",  # colours dropped
        "# ── cell 2 · code · id plot · In [2] ──\ndf.plot()\n# ── 1 output ──\n[Out 2]\n<Axes: >\n"
        "[image/png output, 12 KB]",
        "# ── cell 3 · code · id widget · In [3] ──\nshow(widget)\n# ── 1 output ──\n[display]\n"
        "[text/html output, 2 KB]",
        "# ── cell 4 · code · id boom · In [4] ──\n1 / 0\n# ── 1 output ──\n"
        "[error] ZeroDivisionError: division by zero",
        "# ── cell 5 · raw · id raw ──\nraw text",
    ])
    assert out.data["total_cells"] == 6
    assert out.data["cells"][2] == {"index": 2, "id": "plot", "type": "code", "outputs": 1}


def test_one_cell_is_read_by_id_by_cell_n_or_by_position(root: Path, nb_path: str) -> None:
    ctx = make_ctx(root)
    by_id = read(ctx, notebook_path=nb_path, cell_id="boom")
    assert by_id.text.split("\n\n")[1:] == ["# ── cell 4 · code · id boom · In [4] ──\n1 / 0\n# ── 1 output ──\n"
                                            "[error] ZeroDivisionError: division by zero"]
    assert by_id.data["cells"] == [{"index": 4, "id": "boom", "type": "code", "outputs": 1}]
    assert read(ctx, notebook_path=nb_path, cell_id="cell-4").text == by_id.text
    assert read(ctx, notebook_path=nb_path, cell_id="4").text == by_id.text


def test_an_unknown_cell_is_not_found_and_the_error_lists_cells(root: Path, nb_path: str) -> None:
    error = read_error(make_ctx(root), notebook_path=nb_path, cell_id="nope")
    assert error.kind is ErrorKind.NOT_FOUND
    assert error.info.message == "cell 'nope' not found in sales.ipynb (6 cells)"
    assert error.info.suggestion == "Its cells are intro, load, plot, widget, boom and 1 more."


def test_cells_without_ids_are_named_cell_n(root: Path) -> None:
    nb = v4.new_notebook()
    nb.nbformat_minor = 4
    nb.cells = [v4.new_code_cell("a = 1"), v4.new_markdown_cell("b")]
    for c in nb.cells:
        del c["id"]
    (root / "old.ipynb").write_text(json.dumps(nb))
    out = read(make_ctx(root), notebook_path=f"{root}/old.ipynb", cell_id="cell-1")
    assert out.text == "old.ipynb: 2 cells, nbformat 4.4\n\n# ── cell 1 · markdown ──\nb"
    assert out.data["cells"] == [{"index": 1, "id": "cell-1", "type": "markdown", "outputs": 0}]


def test_long_outputs_are_cut_and_say_how_long_they_were(root: Path) -> None:
    nb = v4.new_notebook()
    nb.cells = [v4.new_code_cell("print(log)", id="log", outputs=[
        v4.new_output("stream", name="stdout", text="".join(f"line {i}\n" for i in range(5000)))])]
    nbformat.write(nb, root / "log.ipynb")
    out = read(make_ctx(root), notebook_path=f"{root}/log.ipynb")
    assert len(out.text) < MAX_OUTPUT_CHARS + 200
    assert "line 0\n" in out.text and "line 4999" not in out.text
    assert out.text.endswith("[... output cut: 48,889 characters ...]")


def test_a_large_notebook_is_shown_in_part_and_says_where_to_go_on(root: Path) -> None:
    nb = v4.new_notebook()
    nb.cells = [v4.new_code_cell("x = 1  # " + "padding " * 200, id=f"c{i}") for i in range(40)]
    nbformat.write(nb, root / "big.ipynb")
    out = read(make_ctx(root), notebook_path=f"{root}/big.ipynb")
    shown = len(out.data["cells"])
    assert 0 < shown < 40 and len(out.text) <= MAX_RESULT_CHARS + 300
    assert out.text.endswith(f'(Showing cells 0-{shown - 1} of 40. Read the rest one cell at a time with cell_id,'
                             f' starting at cell_id="c{shown}".)')


def test_an_empty_notebook_says_so(root: Path) -> None:
    nbformat.write(v4.new_notebook(), root / "empty.ipynb")
    out = read(make_ctx(root), notebook_path=f"{root}/empty.ipynb")
    assert out.text == "empty.ipynb has no cells." and out.data["total_cells"] == 0


MALFORMED = [
    (b"\x00garbage\xff", "x.ipynb is not UTF-8 text (byte 8), so not a Jupyter notebook"),
    (b"{\"cells\": [", "x.ipynb is not valid JSON: Expecting value at line 1 column 12"),
    (b'{"name": "package.json", "version": "1.0.0"}', "x.ipynb is not a Jupyter notebook: it has no nbformat version"),
    (b'[{"cell_type": "code"}]', "x.ipynb is not a Jupyter notebook: its JSON is a list, not an object"),
    (b'{"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [{"id": "a1", "cell_type": "markdown",'
     b' "metadata": {}}]}',
     "x.ipynb is not a valid Jupyter notebook: cell 0 (id a1): 'source' is a required property"),
    (b'{"nbformat": 4, "nbformat_minor": 5, "metadata": {"kernelspec": {"name": "python3"}}, "cells": []}',
     "x.ipynb is not a valid Jupyter notebook: metadata.kernelspec: 'display_name' is a required property"),
    (b'{"nbformat": 4, "nbformat_minor": -1, "metadata": {}, "cells": []}',
     "x.ipynb claims nbformat 4.-1, which is not a notebook format version"),
]


@pytest.mark.parametrize(("content", "message"), MALFORMED)
def test_a_malformed_notebook_is_invalid_with_a_message_naming_what_and_where(root: Path, content: bytes,
                                                                           message: str) -> None:
    (root / "x.ipynb").write_bytes(content)
    error = read_error(make_ctx(root), notebook_path=f"{root}/x.ipynb")
    assert (error.kind, error.info.message) == (ErrorKind.INVALID_NOTEBOOK, message)
    assert error.info.suggestion


def test_paths_are_checked_like_read_checks_them(root: Path, tmp_path: Path) -> None:
    nbformat.write(analysis(), tmp_path / "secret.ipynb")
    (root / "link.ipynb").symlink_to(tmp_path / "secret.ipynb")
    (root / "notes.txt").write_text("x")
    (root / "dir.ipynb").mkdir()
    ctx = make_ctx(root)
    cases = [(f"{root}/link.ipynb", ErrorKind.OUTSIDE_WORKSPACE), (f"{root}/notes.txt", ErrorKind.INVALID_ARGS),
             ("sales.ipynb", ErrorKind.INVALID_ARGS), (f"{root}/missing.ipynb", ErrorKind.NOT_FOUND),
             (f"{root}/dir.ipynb", ErrorKind.IS_DIRECTORY)]
    for path, kind in cases:
        assert read_error(ctx, notebook_path=path).kind is kind, path


def test_reading_counts_as_reading_for_a_later_edit(root: Path, nb_path: str) -> None:
    ctx = make_ctx(root)
    read(ctx, notebook_path=nb_path)
    nbformat.write(v4.new_notebook(cells=[v4.new_markdown_cell("theirs", id="intro")]), root / "sales.ipynb")
    with pytest.raises(ToolError) as info:
        NotebookEdit().plan(NotebookEditArgs(notebook_path=nb_path, cell_id="intro", new_source="mine"), ctx)
    assert info.value.kind is ErrorKind.STALE_READ


def test_a_cached_answer_also_counts_as_reading(root: Path, nb_path: str) -> None:
    ctx = make_ctx(root)
    NotebookRead().on_cache_hit(NotebookReadArgs(notebook_path=nb_path), ctx)
    st = (root / "sales.ipynb").stat()
    assert ctx.read_state.seen[root / "sales.ipynb"] == (st.st_mtime_ns, st.st_size)


def test_it_is_a_cacheable_retryable_read_of_one_file(root: Path, nb_path: str) -> None:
    tool, ws = NotebookRead(), Workspace(root)
    assert tool.annotations.read_only and not tool.annotations.destructive
    assert tool.cacheable and tool.retry is not None
    args = NotebookReadArgs(notebook_path=nb_path, cell_id="plot")
    assert tool.reads(args, ws) == frozenset({"sales.ipynb"})
    assert tool.reads(NotebookReadArgs(notebook_path="/etc/x.ipynb"), ws) is None
    assert tool.summary(args, ws) == "sales.ipynb (cell plot)"
    assert tool.summary(NotebookReadArgs(notebook_path=nb_path), ws) == "sales.ipynb"


def test_control_sequences_in_sources_are_shown_as_escapes_and_long_lines_cut(root: Path) -> None:
    nb = v4.new_notebook()
    nb.cells = [v4.new_code_cell("print('ok')\x1b[2K\x1b]52;c;Y3VybA==\x07\n" + "z" * 2500, id="evil",
                                 outputs=[v4.new_output("stream", name="stdout", text="\x1b]52;c;eA==\x07done\n")])]
    nbformat.write(nb, root / "evil.ipynb")
    out = read(make_ctx(root), notebook_path=f"{root}/evil.ipynb")
    assert "\x1b" not in out.text and "\x07" not in out.text
    assert out.text.split("\n")[2:] == ["# ── cell 0 · code · id evil ──", "print('ok')\\x1b[2K\\x1b]52;c;Y3VybA==\\x07",
                                        "z" * 2000 + "... [line cut: 500 of 2,500 characters not shown]",
                                        "# ── 1 output ──", "[stdout]", "done"]


def test_a_notebook_the_read_rules_refuse_is_not_opened_even_through_a_link(root: Path, nb_path: str) -> None:
    (root / "alias.ipynb").symlink_to(root / "sales.ipynb")
    ctx = make_ctx(root)
    ctx.may_read = lambda path: f"{path} matches the deny rule Read(./sales.ipynb)" \
        if path.name == "sales.ipynb" else None
    for named in (nb_path, f"{root}/alias.ipynb"):
        error = read_error(ctx, notebook_path=named)
        assert error.kind is ErrorKind.DENIED and "Read(./sales.ipynb)" in error.info.message
    assert ctx.read_state.seen == {}
