"""The walk's working records: where a command sits, its working directory, and the display tree being built.

These are mutable and private to the analysis; `core.models.bash` holds the
frozen records it produces.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from tree_sitter import Node

from core.models.bash import Flag
from core.policy.bash.words import WordValue

LABEL_BYTES = 240
_RANK = {"ok": 0, "ask": 1, "deny": 2}


@dataclass(frozen=True)
class Context:
    """Where a command sits, as a linked list so nesting a thousand deep costs O(1) per level."""

    label: str
    count: int
    parent: Context | None

    @staticmethod
    def push(ctx: Context | None, label: str) -> Context | None:
        if not label:
            return ctx
        if ctx is not None and ctx.label == label:
            return Context(label, ctx.count + 1, ctx.parent)
        return Context(label, 1, ctx)

    @staticmethod
    def render(ctx: Context | None, innermost: int = 6) -> str:
        """E.g. "pipeline › command substitution"; repeated levels as "subshell ×3", deep ones cut."""
        parts: list[str] = []
        while ctx is not None and len(parts) < innermost:
            parts.append(ctx.label if ctx.count == 1 else f"{ctx.label} ×{ctx.count}")
            ctx = ctx.parent
        if ctx is not None:
            parts.append("…")
        return " › ".join(reversed(parts))


@dataclass
class Cwd:
    """The working directory as far as it is known (None after `cd $X`, `popd`, or a `cd` that may fail)."""

    path: Path | None

    def copy(self) -> Cwd:
        return Cwd(self.path)

    def follow(self, raw: RawCommand, home: str) -> None:
        """Moves after a static `cd`, `pushd` or `popd`.

        A `cd` into a directory that does not exist (yet) fails at run time
        and leaves the shell where it was, so the directory becomes unknown:
        `cd nowhere; rm -rf ../x` must not be judged as if it ran in `nowhere`.
        """
        words = raw.words
        if not words or words[0].dynamic or words[0].text not in ("cd", "pushd", "popd"):
            return
        args = [w for w in words[1:] if w.dynamic or not (w.text.startswith("-") and len(w.text) > 1)]
        if words[0].text == "popd" or (args and (args[0].dynamic or args[0].text == "-")):
            self.path = None
            return
        target = args[0].text if args else home
        if self.path is None and not target.startswith("/"):
            return
        path = Path(os.path.realpath((self.path or Path("/")) / target))
        self.path = path if path.is_dir() else None


@dataclass(frozen=True)
class Source:
    """Text being walked: the command line, or a string run by `bash -c` placed at `span` in it."""

    data: bytes
    span: tuple[int, int] | None = None
    moving: frozenset[tuple[int, int, str]] = frozenset()
    known: frozenset[str] = frozenset()
    """Variables it sets only from harmless values (see `core.policy.bash.environment`)."""
    """Its nodes that may change the directory (see `core.policy.bash.moves`)."""

    def moves(self, node: Node | None = None) -> bool:
        """Whether `node` (or, without one, anything in this text) may change the directory."""
        return bool(self.moving) if node is None else (node.start_byte, node.end_byte, node.type) in self.moving

    def span_of(self, node: Node) -> tuple[int, int]:
        return self.place(node.start_byte, node.end_byte)

    def place(self, start: int, end: int) -> tuple[int, int]:
        """Where bytes `start:end` of this text sit in the analysed line (the whole string, when nested)."""
        return self.span if self.span is not None else (start, end)

    def text(self, node: Node) -> str:
        return self.data[node.start_byte:node.end_byte].decode("utf-8", "replace")


@dataclass
class RawRedirect:
    op: str
    target: WordValue | None
    start: int
    end: int


@dataclass
class RawCommand:
    """A simple command as found, before it is judged."""

    words: list[WordValue] = field(default_factory=list)
    assignments: list[tuple[str, WordValue]] = field(default_factory=list)
    redirects: list[RawRedirect] = field(default_factory=list)
    keyword: str | None = None
    """For commands that are syntax rather than a program: "assign", "export", "[[", "((", "for", "redirect"..."""
    piped: bool = False
    """Its stdin comes from the previous stage of a pipeline."""
    start: int = 0
    end: int = 0
    text: str = ""
    context: str = ""
    cwd_before: Path | None = None
    node: int = 0
    word_nodes: dict[int, int] = field(default_factory=dict)
    """id(word) -> its display node, for flagging the exact word at fault."""
    src: Source = Source(b"")


class Display:
    """The display tree under construction, flat."""

    def __init__(self) -> None:
        self._rows: list[dict[str, object]] = []
        self._children: list[list[int]] = []

    def add(self, kind: str, src: Source, node: Node | None, parent: int | None, start: int = 0, end: int = 0,
            text: str | None = None) -> int:
        """A node for a syntax node of `src`, or for the span `start:end` of the line labelled `text`."""
        if node is not None:
            return self.add_range(kind, src, node.start_byte, node.end_byte, parent)
        if src.span is not None:
            start, end = src.span
        return self._append(kind, text or "", start, end, parent)

    def add_range(self, kind: str, src: Source, first: int, last: int, parent: int | None) -> int:
        """A node for bytes `first:last` of `src`, labelled with (the start of) their text."""
        text = src.data[first:min(last, first + LABEL_BYTES)].decode("utf-8", "ignore")
        if last - first > LABEL_BYTES:
            text += "…"
        start, end = src.place(first, last)
        return self._append(kind, text, start, end, parent)

    def _append(self, kind: str, text: str, start: int, end: int, parent: int | None) -> int:
        index = len(self._rows)
        self._rows.append({"kind": kind, "text": text, "start": start, "end": end, "flag": "ok", "why": ""})
        self._children.append([])
        if parent is not None:
            self._children[parent].append(index)
        return index

    def flag(self, index: int, flag: Flag, why: str) -> None:
        """Raises a node's flag (ok < ask < deny); a lower flag never overwrites a higher one."""
        row = self._rows[index]
        if _RANK[flag] > _RANK[str(row["flag"])] or (flag == row["flag"] and not row["why"]):
            row["flag"], row["why"] = flag, why

    def build(self) -> list[dict[str, object]]:
        """The rows as `DisplayNode` fields, validated in one go by the caller (much faster than one by one)."""
        return [{**row, "children": kids} for row, kids in zip(self._rows, self._children)]
