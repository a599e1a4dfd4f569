"""core.changes.diffs against `git diff`: the same hunks, line for line, on inputs where diffs go wrong.

xdiff runs in process (libgit2's copy of git's), on the region Belay trims
around the change; these cases check that the hunks, their headers and their
lines (endings included) are the ones git prints for the same two files, and
that a large repetitive file is diffed exactly, with no quadratic blow-up.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from core.changes.diffs import compute_diff, unified_text
from core.changes.gitproc import GIT, git_env
from tests.conftest import RUNAWAY_S


def _numbered(count: int, ending: str = "\n") -> bytes:
    return "".join(f"line {n}{ending}" for n in range(1, count + 1)).encode()


def _repetitive(count: int, distinct: int = 120) -> list[str]:
    """`distinct` lines repeated: every line matches count / distinct others."""
    return [f"    value_{n % distinct} = compute(value_{n % distinct - 1}, {n % distinct})\n" for n in range(count)]


def _edited(lines: list[str], inserts: list[int], deletes: list[int]) -> bytes:
    out = list(lines)
    for k in sorted(deletes, reverse=True):
        del out[k]
    for k in sorted(inserts, reverse=True):
        out.insert(k, f"inserted at {k}\n")
    return "".join(out).encode()


def _function_blocks(count: int) -> list[str]:
    return [line for n in range(count) for line in (f"def f{n}():\n", "    return 1\n", "\n")]


_REPETITIVE = _repetitive(3_000)
_BLOCKS = _function_blocks(400)
CASES = {
    "crlf": (b"one\r\ntwo\r\nthree\r\n", b"one\r\nTWO\r\nthree\r\n"),
    "crlf-big": (_numbered(400, "\r\n"), _numbered(400, "\r\n").replace(b"line 200\r\n", b"line two hundred\r\n")),
    "crlf-to-lf": (b"a\r\nb\r\nc\r\n", b"a\nb\nc\n"),
    "no-final-newline-added": (b"a\nb", b"a\nb\n"),
    "no-final-newline-removed": (b"a\nb\n", b"a\nc"),
    "no-final-newline-either": (b"a\nb\nc", b"a\nB\nc"),
    "mixed-endings": (b"a\r\nb\nc\r\nd\ne\r\n", b"a\r\nb\r\nc\r\nd\nE\r\n"),
    "lone-cr": (b"a\rb\nc\n", b"a\rB\nc\n"),
    "repetitive": ("".join(_REPETITIVE).encode(), _edited(_REPETITIVE, [17, 1_500, 2_999], [700, 701, 2_000])),
    "insert-at-top-and-end": (_numbered(50), b"first\n" + _numbered(50) + b"last\n"),
    "empty-old": (b"", b"a\nb\n"),
    "empty-new": (b"a\nb\n", b""),
    "created": (None, b"a\nb\n"),
    "deleted": (b"a\nb\n", None),
    # A block whose first lines repeat its last ones: where the hunk lands is the indent heuristic's choice,
    # made on the region Belay trims around the change (the file is long enough for trimming to happen).
    "sliding-block": ("".join(_BLOCKS).encode(),
                      "".join(_BLOCKS[:600] + ["def g():\n", "    return 1\n", "\n"] + _BLOCKS[600:]).encode()),
    # Where xdiff's plain Myers puts this insertion one line lower than `git diff` (which slides it by indent).
    "indent-heuristic": (b"  a\n\n}\ndef f():\n}\n    c\n    c\nb\n",
                         b"  a\n\n}\ndef f():\n    c\ndef f():\n}\n    c\n    c\nb\n"),
    "far-apart-edits": (_numbered(5_000), _numbered(5_000).replace(b"line 10\n", b"ten\n")
                        .replace(b"line 4990\n", b"line 4990\nextra\n")),
}


def _git_hunks(tmp_path: Path, before: bytes | None, after: bytes | None) -> list[str]:
    """The hunks `git diff --no-index` prints, without the function name git adds after a hunk header."""
    paths = []
    for name, data in (("a", before), ("b", after)):
        if data is None:
            paths.append("/dev/null")
        else:
            (tmp_path / name).write_bytes(data)
            paths.append(name)
    proc = subprocess.run([GIT, "diff", "--no-index", "--no-color", "--no-ext-diff", "--text", "--indent-heuristic",
                           "-U3", "--", *paths], cwd=tmp_path, env=git_env(), capture_output=True, timeout=30)
    assert proc.returncode == 1, proc.stderr
    return _hunks(proc.stdout.decode())


def _hunks(text: str) -> list[str]:
    lines = text.splitlines(keepends=True)
    first = next(k for k, line in enumerate(lines) if line.startswith("@@ "))
    return [line[:line.index(" @@") + 3] + "\n" if line.startswith("@@ ") else line for line in lines[first:]]


@pytest.mark.skipif(not Path(GIT).exists(), reason=f"{GIT} is not installed")
@pytest.mark.parametrize("case", list(CASES))
def test_the_hunks_are_gits(case: str, tmp_path: Path) -> None:
    before, after = CASES[case]
    ours = _hunks(unified_text(compute_diff("f.txt", before, after)))
    assert ours == _git_hunks(tmp_path, before, after)


@pytest.mark.timeout(RUNAWAY_S)
def test_a_repetitive_file_is_diffed_in_linear_time() -> None:
    # Ten lines inserted into 40 distinct lines repeated, exactly, at 10,000 and 40,000 lines, well within the
    # deadline: a quadratic diff (difflib without its junk heuristic) takes minutes at 40,000.  How the time
    # grows with the lines (linear: four times the lines, four times as long) is bench/diff.py's figure
    # (diff_repetitive), where the machine's load is measured beside it.
    for count in (10_000, 40_000):
        lines = _repetitive(count, distinct=40)
        before = "".join(lines).encode()
        diff = compute_diff("values.py", before, _edited(lines, list(range(count // 20, count, count // 10)), []))
        assert diff.added == 10 and diff.removed == 0
