"""The Read tool: numbered lines, bounded output, binary files, and the symlink-swap race."""

from __future__ import annotations

import asyncio
import os
import threading
import time
from pathlib import Path

import pytest
from pydantic import ValidationError

from core.errors import ErrorKind, ToolError
from core.ids import AgentId, CallId
from core.paths import Workspace
from core.tools.base import ReadState, ToolContext, ToolOutput
from core.tools.read import Read, ReadArgs


def make_ctx(root: Path) -> ToolContext:
    return ToolContext(workspace=Workspace(root), agent_id=AgentId("a"), call_id=CallId("c"), read_state=ReadState())


def read(ctx: ToolContext, **args: object) -> ToolOutput:
    return asyncio.run(Read().run(ReadArgs.model_validate(args), ctx))


def read_error(ctx: ToolContext, **args: object) -> ToolError:
    with pytest.raises(ToolError) as info:
        read(ctx, **args)
    return info.value


@pytest.fixture
def root(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "five.txt").write_text("".join(f"line {i}\n" for i in range(1, 6)))
    return ws


def test_lines_are_numbered_like_cat_n(root: Path) -> None:
    ctx = make_ctx(root)
    out = read(ctx, file_path=f"{root}/five.txt")
    assert out.text.split("\n") == [f"{i:>6}\tline {i}" for i in range(1, 6)]
    assert out.data == {"path": str(root / "five.txt"), "lines": 5, "total_lines": 5}


def test_offset_and_limit_pick_lines_and_say_how_to_go_on(root: Path) -> None:
    out = read(make_ctx(root), file_path=f"{root}/five.txt", offset=2, limit=2)
    assert out.text.split("\n")[:2] == ["     2\tline 2", "     3\tline 3"]
    assert "Showing lines 2-3 of 5" in out.text and "offset=4" in out.text
    assert out.data["lines"] == 2 and out.data["total_lines"] == 5


def test_an_offset_past_the_end_is_an_error_naming_the_length(root: Path) -> None:
    error = read_error(make_ctx(root), file_path=f"{root}/five.txt", offset=9)
    assert error.kind is ErrorKind.INVALID_ARGS and "five.txt, which has 5 lines" in error.info.message


def test_long_lines_are_cut_with_a_marker_saying_how_much_was_cut(root: Path) -> None:
    (root / "wide.txt").write_text("x" * 5000 + "\nshort\n")
    out = read(make_ctx(root), file_path=f"{root}/wide.txt")
    first, second = out.text.split("\n")[:2]
    assert first == "     1\t" + "x" * 2000 + "... [line cut: 3,000 of 5,000 characters not shown]"
    assert second == "     2\tshort"


def test_terminal_control_sequences_in_a_file_are_shown_as_escapes_never_live(root: Path) -> None:
    hostile = "ok\x1b[2K\x1b[1Aall tests passed\rrm -rf /\x1b]52;c;Y3VybCBldmls\x07\x9b31m\u202eevil\n"
    (root / "spoof.txt").write_text(hostile)
    out = read(make_ctx(root), file_path=f"{root}/spoof.txt")
    assert not any(c in out.text for c in "\x1b\x07\r\x9b\u202e")
    assert out.text == ("     1\tok\\x1b[2K\\x1b[1Aall tests passed\\rrm -rf /\\x1b]52;c;Y3VybCBldmls\\x07"
                        "\\x9b31m\\u202eevil")


def test_a_line_of_escapes_is_cut_as_it_is_shown(root: Path) -> None:
    (root / "bells.txt").write_text("\x07" * 1000 + "\n")
    out = read(make_ctx(root), file_path=f"{root}/bells.txt")
    assert out.text == "     1\t" + "\\x07" * 500 + "... [line cut: 2,000 of 4,000 characters not shown]"


def test_output_stays_under_the_cap_and_points_on(root: Path) -> None:
    (root / "big.txt").write_text(("y" * 1500 + "\n") * 100)
    out = read(make_ctx(root), file_path=f"{root}/big.txt")
    assert len(out.text) < 26_000 and out.data["lines"] < 100
    assert f"offset={out.data['lines'] + 1}" in out.text


def test_empty_and_binary_files_get_a_short_note(root: Path) -> None:
    (root / "empty.txt").write_bytes(b"")
    (root / "blob.bin").write_bytes(b"\x89PNG\r\n\x1a\n\0" + b"\xff" * 1000)
    (root / "latin1.txt").write_bytes("caf\xe9\n".encode("latin-1"))
    ctx = make_ctx(root)
    assert read(ctx, file_path=f"{root}/empty.txt").text == "empty.txt exists but is empty."
    assert read(ctx, file_path=f"{root}/blob.bin").text == "Binary file, 1,009 bytes (a PNG image); not shown."
    assert read(ctx, file_path=f"{root}/latin1.txt").text.startswith("Binary file, 5 bytes")


def test_crlf_files_say_so(root: Path) -> None:
    (root / "dos.txt").write_bytes(b"a\r\nb\r\n")
    out = read(make_ctx(root), file_path=f"{root}/dos.txt")
    assert out.text.startswith("     1\ta\n     2\tb\n") and "CRLF" in out.text


def test_an_executable_is_summarised_by_its_kind_and_size(root: Path) -> None:
    data = Path("/bin/ls").read_bytes()
    (root / "a.out").write_bytes(data)
    out = read(make_ctx(root), file_path=f"{root}/a.out")
    assert out.text == f"Binary file, {len(data):,} bytes (an ELF executable); not shown."
    assert out.data["binary"] is True


def test_a_read_is_remembered_for_stale_checks(root: Path) -> None:
    ctx = make_ctx(root)
    read(ctx, file_path=f"{root}/five.txt")
    st = os.stat(root / "five.txt")
    assert ctx.read_state.seen[root / "five.txt"] == (st.st_mtime_ns, st.st_size)


def test_errors_name_the_path(root: Path, tmp_path: Path) -> None:
    ctx = make_ctx(root)
    missing = read_error(ctx, file_path=f"{root}/fiv.txt")
    assert missing.kind is ErrorKind.NOT_FOUND and "fiv.txt" in missing.info.message
    assert "five.txt" in missing.info.suggestion
    assert read_error(ctx, file_path=str(root)).kind is ErrorKind.IS_DIRECTORY
    assert read_error(ctx, file_path="five.txt").kind is ErrorKind.INVALID_ARGS
    (tmp_path / "secret").write_text("s")
    (root / "peek").symlink_to(tmp_path / "secret")
    assert read_error(ctx, file_path=f"{root}/peek").kind is ErrorKind.OUTSIDE_WORKSPACE
    assert not ctx.read_state.seen


def test_arguments_are_strict(root: Path) -> None:
    for bad in ({"file_path": None}, {"file_path": "/x", "offset": "3"}, {"file_path": "/x", "extra": 1},
                {"file_path": "/x", "limit": 0}):
        with pytest.raises(ValidationError):
            ReadArgs.model_validate(bad)


def test_summary_is_the_relative_path(root: Path) -> None:
    ws = Workspace(root)
    assert Read().summary(ReadArgs(file_path=f"{root}/five.txt"), ws) == "five.txt"
    assert Read().summary(ReadArgs(file_path=f"{root}/five.txt", offset=3), ws) == "five.txt from line 3"


def test_a_directory_swapped_with_an_outside_symlink_never_leaks(tmp_path: Path) -> None:
    """A thread keeps swapping ws/d between a real directory and a link to outside while Read runs,
    and while the pipeline asks what the read depends on (for its result cache): neither crashes."""
    root, outside = tmp_path / "ws", tmp_path / "outside"
    (root / "d").mkdir(parents=True)
    outside.mkdir()
    (root / "d" / "f.txt").write_text("inside\n")
    (outside / "f.txt").write_text("SECRET\n")
    stop, swaps = threading.Event(), [0]

    def swapper() -> None:
        while not stop.is_set():
            os.rename(root / "d", root / "parked")
            os.symlink(outside, root / "d")
            os.unlink(root / "d")
            os.rename(root / "parked", root / "d")
            swaps[0] += 1

    async def reader() -> set[str]:
        seen: set[str] = set()
        ctx, deadline = make_ctx(root), time.monotonic() + 5
        while (swaps[0] < 1000 or len(seen) < 2) and time.monotonic() < deadline:
            Read().reads(ReadArgs(file_path=f"{root}/d/f.txt"), ctx.workspace)
            try:
                seen.add((await Read().run(ReadArgs(file_path=f"{root}/d/f.txt"), ctx)).text)
            except ToolError as e:
                assert e.kind in (ErrorKind.OUTSIDE_WORKSPACE, ErrorKind.NOT_FOUND), e
                seen.add(e.kind.value)
        return seen

    thread = threading.Thread(target=swapper)
    thread.start()
    try:
        seen = asyncio.run(reader())
    finally:
        stop.set()
        thread.join()
    assert swaps[0] >= 1000
    assert not any("SECRET" in s for s in seen)
    assert "     1\tinside" in seen
