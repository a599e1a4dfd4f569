"""libgit2's xdiff on two buffers, called without holding the GIL: bytes in, hunks out.

pygit2's `Patch.create_from` diffs two buffers in libgit2, but its C extension
keeps the GIL for the whole call: every other Python thread, the window's
among them, stops for as long as the diff takes (60-190 ms on 100k lines).
ctypes releases the GIL around each foreign call, so Belay calls the same
library pygit2 has loaded through libgit2's public C API
(`git_patch_from_buffers` and the `git_patch` accessors).  The diff options
are built with pygit2's own declarations (cffi) for the libgit2 it ships;
the hunk and line structures, unchanged since libgit2 0.2x, are checked
against pygit2's API in the tests.  pygit2's API is the fallback where that
library cannot be found in the process.

Lines are read hunk by hunk, on demand, so a caller that stops at a line
budget does not pay for the rest of a huge diff.
"""

from __future__ import annotations

import ctypes
import logging
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple, Protocol

if TYPE_CHECKING:
    import pygit2

log = logging.getLogger(__name__)

FORCE_TEXT = 1 << 20
"""GIT_DIFF_FORCE_TEXT: what is binary is decided before diffing; a NUL must not turn a text diff off."""
INDENT_HEURISTIC = 1 << 18
"""GIT_DIFF_INDENT_HEURISTIC: `git diff`'s default, which places a hunk where a reader expects it."""
FLAGS = FORCE_TEXT | INDENT_HEURISTIC


class XdiffError(Exception):
    """libgit2 could not diff the two buffers (out of memory, or one of its limits)."""


class XHunk(NamedTuple):
    """A hunk's header, as in `@@ -old_start,old_lines +new_start,new_lines @@`."""

    old_start: int
    old_lines: int
    new_start: int
    new_lines: int


class XLine(NamedTuple):
    """One line of a hunk: origin " ", "+", "-" (or a "\\ No newline" marker: "=", ">", "<")."""

    origin: str
    old_no: int
    """-1 for an added line."""
    new_no: int
    """-1 for a removed line."""
    raw: bytes
    """The line with its ending (none for a last line without one)."""


class XPatch(Protocol):
    """A computed diff: counts and hunk headers at once, a hunk's lines when asked."""

    added: int
    removed: int
    hunks: list[XHunk]

    def lines(self, hunk: int) -> Iterator[XLine]:
        """The lines of hunk number `hunk` (0-based), in order."""
        ...


def diff_buffers(old: bytes, new: bytes, context: int) -> XPatch:
    """xdiff's patch from `old` to `new` with `context` lines around each change (hunks merged when at most
    2 * context equal lines lie between, as git does).  Raises XdiffError."""
    native = _native()
    if native is None:
        return _PygitPatch(old, new, context)
    return _CtypesPatch(native, old, new, context)


# -- libgit2 through ctypes ----------------------------------------------------


class DiffHunk(ctypes.Structure):
    """git_diff_hunk."""

    _fields_ = [("old_start", ctypes.c_int), ("old_lines", ctypes.c_int), ("new_start", ctypes.c_int),
                ("new_lines", ctypes.c_int), ("header_len", ctypes.c_size_t), ("header", ctypes.c_char * 128)]


class GitDiffLine(ctypes.Structure):
    """git_diff_line."""

    _fields_ = [("origin", ctypes.c_char), ("old_lineno", ctypes.c_int), ("new_lineno", ctypes.c_int),
                ("num_lines", ctypes.c_int), ("content_len", ctypes.c_size_t), ("content_offset", ctypes.c_int64),
                ("content", ctypes.c_void_p)]


_size = ctypes.c_size_t
_ptr = ctypes.c_void_p
_SIGNATURES: dict[str, tuple[list[object], object]] = {
    "git_patch_from_buffers": ([ctypes.POINTER(_ptr), ctypes.c_char_p, _size, ctypes.c_char_p, ctypes.c_char_p,
                                _size, ctypes.c_char_p, _ptr], ctypes.c_int),
    "git_patch_line_stats": ([ctypes.POINTER(_size)] * 3 + [_ptr], ctypes.c_int),
    "git_patch_num_hunks": ([_ptr], _size),
    "git_patch_get_hunk": ([ctypes.POINTER(ctypes.POINTER(DiffHunk)), ctypes.POINTER(_size), _ptr, _size],
                           ctypes.c_int),
    "git_patch_get_line_in_hunk": ([ctypes.POINTER(ctypes.POINTER(GitDiffLine)), _ptr, _size, _size], ctypes.c_int),
    "git_patch_free": ([_ptr], None),
}


@cache
def _native() -> ctypes.CDLL | None:
    """The libgit2 pygit2 loaded, with the signatures Belay calls; None where it cannot be found."""
    import pygit2  # noqa: F401  (loads libgit2 and initialises it: 150 ms, paid by the first diff)

    path = loaded_libgit2()
    if path is None:
        log.info("libgit2 not found among the loaded libraries; diffs hold the GIL (pygit2's API)")
        return None
    lib = ctypes.CDLL(path)
    for name, (argtypes, restype) in _SIGNATURES.items():
        function = getattr(lib, name)
        function.argtypes, function.restype = argtypes, restype
    return lib


def loaded_libgit2() -> str | None:
    """The path of the libgit2 shared library mapped into this process (Linux), if any."""
    try:
        maps = Path("/proc/self/maps").read_text()
    except OSError:
        return None
    for line in maps.splitlines():
        fields = line.split(maxsplit=5)
        if len(fields) == 6 and Path(fields[5]).name.startswith("libgit2") and ".so" in fields[5]:
            return fields[5]
    return None


class _CtypesPatch:
    """A git_patch, freed when collected; every call releases the GIL."""

    def __init__(self, lib: ctypes.CDLL, old: bytes, new: bytes, context: int) -> None:
        from pygit2.ffi import C, ffi

        self._lib = lib
        # The options as pygit2 declares them for the libgit2 it ships, so their layout is never guessed here.
        options = ffi.new("git_diff_options *")
        if C.git_diff_options_init(options, 1) != 0:  # GIT_DIFF_OPTIONS_VERSION
            raise XdiffError("git_diff_options_init failed")
        options.flags, options.context_lines, options.interhunk_lines = FLAGS, context, 0
        self._patch = _ptr()
        if lib.git_patch_from_buffers(ctypes.byref(self._patch), old, len(old), None, new, len(new), None,
                                      int(ffi.cast("uintptr_t", options))) != 0:
            raise XdiffError(f"git_patch_from_buffers failed on {len(old):,} and {len(new):,} bytes")
        stats = [_size(), _size(), _size()]
        lib.git_patch_line_stats(*(ctypes.byref(s) for s in stats), self._patch)
        self.added, self.removed = stats[1].value, stats[2].value
        self._counts: list[int] = []
        self.hunks = [self._hunk(k) for k in range(lib.git_patch_num_hunks(self._patch))]

    def _hunk(self, index: int) -> XHunk:
        pointer, count = ctypes.POINTER(DiffHunk)(), _size()
        if self._lib.git_patch_get_hunk(ctypes.byref(pointer), ctypes.byref(count), self._patch, index) != 0:
            raise XdiffError(f"git_patch_get_hunk failed for hunk {index}")
        self._counts.append(count.value)
        hunk = pointer.contents
        return XHunk(hunk.old_start, hunk.old_lines, hunk.new_start, hunk.new_lines)

    def lines(self, hunk: int) -> Iterator[XLine]:
        pointer = ctypes.POINTER(GitDiffLine)()
        for k in range(self._counts[hunk]):
            if self._lib.git_patch_get_line_in_hunk(ctypes.byref(pointer), self._patch, hunk, k) != 0:
                raise XdiffError(f"git_patch_get_line_in_hunk failed for line {k} of hunk {hunk}")
            line = pointer.contents
            yield XLine(line.origin.decode("ascii"), line.old_lineno, line.new_lineno,
                        ctypes.string_at(line.content, line.content_len))

    def __del__(self) -> None:
        if getattr(self, "_patch", None):
            self._lib.git_patch_free(self._patch)
            self._patch = _ptr()


# -- the fallback: pygit2's API (holds the GIL) ----------------------------------------


class _PygitPatch:
    def __init__(self, old: bytes, new: bytes, context: int) -> None:
        import pygit2

        try:
            self._patch: pygit2.Patch = pygit2.Patch.create_from(old, new, flag=pygit2.enums.DiffOption(FLAGS),
                                                                 context_lines=context, interhunk_lines=0)
        except pygit2.GitError as exc:
            raise XdiffError(str(exc)) from exc
        _, self.added, self.removed = self._patch.line_stats
        self._hunks = self._patch.hunks
        self.hunks = [XHunk(h.old_start, h.old_lines, h.new_start, h.new_lines) for h in self._hunks]

    def lines(self, hunk: int) -> Iterator[XLine]:
        for line in self._hunks[hunk].lines:
            yield XLine(line.origin, line.old_lineno, line.new_lineno, line.raw_content)
