"""Tests for core.changes.xdiff: libgit2 called through ctypes gives pygit2's hunks, without stopping other threads."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import pygit2
import pytest

from core.changes import xdiff
from core.changes.xdiff import XPatch, diff_buffers


def _source(count: int) -> bytes:
    return "".join(f"def f{n}(x):\n" if n % 20 == 0 else f"    v_{n} = g(x, {n % 97}) + {n}\n"
                   for n in range(count)).encode()


def _edited(data: bytes) -> bytes:
    lines = data.splitlines(keepends=True)
    for k in range(len(lines) // 11, len(lines), len(lines) // 11):
        lines[k] = b"    edited()\n"
    return b"".join(lines)


def _everything(patch: XPatch) -> tuple[object, ...]:
    return patch.added, patch.removed, [(hunk, list(patch.lines(k))) for k, hunk in enumerate(patch.hunks)]


def test_the_flags_are_libgit2s_and_its_library_is_found() -> None:
    assert xdiff.loaded_libgit2() is not None, "pygit2's libgit2 is not mapped into the process"
    assert xdiff.FORCE_TEXT == pygit2.enums.DiffOption.FORCE_TEXT
    assert xdiff.INDENT_HEURISTIC == pygit2.enums.DiffOption.INDENT_HEURISTIC


@pytest.mark.parametrize(("old", "new", "context"), [
    (b"a\nb", b"a\nb\nc\n", 3),                          # a last line without its newline
    (b"one\r\ntwo\r\n", b"one\ntwo\n", 3),               # CRLF to LF
    (b"", b"x\ny\n", 3),                                 # empty old side
    (b"x\x00y\n", b"x\x00z\n", 1),                       # a NUL: text all the same
    (_source(3_000), _edited(_source(3_000)), 0),
    (_source(3_000), _edited(_source(3_000)), 5),
], ids=["no-final-newline", "crlf", "empty-old", "nul", "scattered-no-context", "scattered-wide-context"])
def test_ctypes_gives_pygit2s_hunks_and_lines(old: bytes, new: bytes, context: int) -> None:
    ours = diff_buffers(old, new, context)
    assert type(ours).__name__ == "_CtypesPatch"
    assert _everything(ours) == _everything(xdiff._PygitPatch(old, new, context))


def _ran_beside(diff: Callable[[], object]) -> int:
    """How many times this thread got to run (a turn, then a 0.5 ms sleep) while `diff` ran in another: a call
    that keeps the GIL lets it run once at most, one that releases it lets it run all along."""
    done = threading.Event()
    worker = threading.Thread(target=lambda: (diff(), done.set()), name="diff")
    turns = 0
    worker.start()
    while not done.is_set():
        turns += 1
        time.sleep(0.0005)
    worker.join(timeout=10)
    return turns


def test_a_diff_in_a_worker_thread_leaves_the_other_threads_running() -> None:
    # What the window feels: pygit2's Patch.create_from keeps the GIL for the whole diff (the loop stops for as
    # long), libgit2 called through ctypes does not.  Best of three each, on the same input turn about.  (How
    # long the loop stops while a preview is diffed is bench/diff.py's diff_100k_longest_stall.)
    old = _source(120_000)
    new = _edited(old)
    ours, theirs = [], []
    for _ in range(3):
        ours.append(_ran_beside(lambda: diff_buffers(old, new, 3)))
        theirs.append(_ran_beside(lambda: xdiff._PygitPatch(old, new, 3)))
    assert min(theirs) <= 2, "pygit2 releases the GIL now: the ctypes path may no longer be needed"
    assert max(ours) >= 10, (ours, theirs)  # this thread ran throughout: a hundred times or so, here
