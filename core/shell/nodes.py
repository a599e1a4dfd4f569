"""The walk's working records: where a command sits, its working directory, and the display tree being built.

These are mutable and private to the analysis; `core.shell.models` holds the
frozen records it produces.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from tree_sitter import Node

from core.shell.models import Flag
from core.shell.words import WordValue

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
    """The working directory as far as it is known (None after `cd $X` or `popd`)."""

    path: Path | None

    def copy(self) -> Cwd:
        return Cwd(self.path)


@dataclass(frozen=True)
class Source:
    """Text being walked: the command line, or a string run by `bash -c` placed at `span` in it."""

    data: bytes
    span: tuple[int, int] | None = None

    def span_of(self, node: Node) -> tuple[int, int]:
        return self.span if self.span is not None else (node.start_byte, node.end_byte)

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
        if node is not None:
            start, end = src.span_of(node)
            text = src.data[node.start_byte:node.start_byte + LABEL_BYTES].decode("utf-8", "ignore")
            if node.end_byte - node.start_byte > LABEL_BYTES:
                text += "…"
        elif src.span is not None:
            start, end = src.span
        index = len(self._rows)
        self._rows.append({"kind": kind, "text": text or "", "start": start, "end": end, "flag": "ok", "why": ""})
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
