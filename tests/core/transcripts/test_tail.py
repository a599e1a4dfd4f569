"""The incremental reader: only what is new, a line cut mid-write kept back, rotation, bounded memory."""

from __future__ import annotations

import os
import tracemalloc
from pathlib import Path

from core.transcripts.tail import JsonlTail


def test_each_read_returns_only_the_lines_completed_since_the_last(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    tail = JsonlTail(path)
    assert tail.read().lines == []  # not written yet: nothing, no error
    path.write_bytes(b'{"a":1}\n{"b":2}\n')
    assert tail.read().lines == [b'{"a":1}', b'{"b":2}']
    assert tail.read().lines == []
    with path.open("ab") as f:
        f.write(b'{"c":3}\n')
    assert tail.read().lines == [b'{"c":3}']


def test_a_line_cut_mid_write_is_kept_for_the_next_read(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(b'{"a":1}\n{"text":"half')
    tail = JsonlTail(path)
    assert tail.read().lines == [b'{"a":1}']
    with path.open("ab") as f:
        f.write(b' and the rest"}\n\n')
    assert tail.read().lines == [b'{"text":"half and the rest"}']


def test_a_rotated_or_truncated_file_is_read_again_from_its_start(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(b'{"old":1}\n{"old":2}\n')
    tail = JsonlTail(path)
    assert len(tail.read().lines) == 2
    path.write_bytes(b'{"new":1}\n')  # truncated and rewritten, shorter than what was read
    found = tail.read()
    assert found.restarted and found.lines == [b'{"new":1}']
    replacement = tmp_path / "t.jsonl.next"
    replacement.write_bytes(b'{"rotated":1}\n{"rotated":2}\n')
    os.replace(replacement, path)  # another file in its place
    found = tail.read()
    assert found.restarted and found.lines == [b'{"rotated":1}', b'{"rotated":2}']


def test_an_overlong_line_is_skipped_and_counted_without_being_held(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    tail = JsonlTail(path, max_line=1000)
    path.write_bytes(b'{"a":1}\n' + b"x" * 600)
    assert tail.read().lines == [b'{"a":1}']
    with path.open("ab") as f:
        f.write(b"x" * 600)  # over the limit before its newline: dropped as it comes
    assert tail.read().overlong == 1
    with path.open("ab") as f:
        f.write(b"x" * 5000 + b'\n{"b":2}\n' + b"y" * 3000 + b'\n{"c":3}\n')
    found = tail.read()
    assert found.lines == [b'{"b":2}', b'{"c":3}'] and found.overlong == 1


def test_a_large_file_is_read_in_steps_with_memory_bounded_by_a_step(tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    line = b'{"type":"assistant","message":{"content":"' + b"w" * 1000 + b'"}}\n'
    with path.open("wb") as f:
        for _ in range(40):
            f.write(line * 1000)  # 40 MB
    tail = JsonlTail(path)
    tracemalloc.start()
    try:
        lines, steps = 0, 0
        while True:
            found = tail.read(budget=2 << 20)
            lines += len(found.lines)
            steps += 1
            del found
            if tail.offset >= path.stat().st_size:
                break
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert lines == 40_000 and steps >= 20
    assert peak < 12 << 20  # a few steps' worth, never the file's 40 MB


def test_its_repr_says_where_it_is(tmp_path: Path) -> None:
    tail = JsonlTail(tmp_path / "t.jsonl")
    assert "at 0" in repr(tail)
