"""The conflict regions of a merged text, as data, and taking one side of a region.

`merge3` writes diff3 markers into the merged text; a merge editor needs
the regions themselves: where each starts and ends (to number, highlight and
scroll to it) and the text of each side (to take now, the undo, or both).
The markers are parsed back out of the text rather than kept from the merge
because the person edits that text: after an edit, the regions are whatever
the text now holds.  Pure functions over `str`; no I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

Take = Literal["now", "undo", "both"]
"""now: keep the file as it is now; undo: the version before the call; both: now, then the undo's."""

_OPEN, _BASE, _SPLIT, _CLOSE = (re.compile(rf"^{re.escape(m)}(?:[ \t]|\r?$)") for m in
                                ("<" * 7, "|" * 7, "=" * 7, ">" * 7))


@dataclass(frozen=True)
class ConflictRegion:
    """One `<<<<<<< … >>>>>>>` region of a merged text; line numbers are 0-based, `end` exclusive."""

    start: int
    """The line of the `<<<<<<<` marker."""
    end: int
    """The line after the `>>>>>>>` marker."""
    now: str
    """The lines of the file as it is now (ours), with their line endings."""
    base: str
    """What the call left (the diff3 base section; "" when the markers have none)."""
    undo: str
    """What the undo would put back (theirs: the version before the call)."""

    @property
    def lines(self) -> int:
        return self.end - self.start

    def text(self, take: Take) -> str:
        """The lines that replace the whole region when this side is taken."""
        return {"now": self.now, "undo": self.undo, "both": self.now + self.undo}[take]


def split_lines(text: str) -> list[str]:
    """Lines split at LF only, keeping their endings (CRLF too), as git and the editor number them."""
    lines = [line + "\n" for line in text.split("\n")]
    lines[-1] = lines[-1][:-1]
    return lines if lines[-1] else lines[:-1]


def conflict_regions(text: str) -> list[ConflictRegion]:
    """Every complete conflict region of `text`, in order; an unclosed or malformed one is left out."""
    lines, regions, i = split_lines(text), [], 0
    while i < len(lines):
        region = _region_at(lines, i) if _OPEN.match(lines[i]) else None
        if region is None:
            i += 1
            continue
        regions.append(region)
        i = region.end
    return regions


def _region_at(lines: list[str], start: int) -> ConflictRegion | None:
    """The region opened at `start`, or None when no `=======` and `>>>>>>>` follow before another opens."""
    base_at = split_at = None
    for i in range(start + 1, len(lines)):
        line = lines[i]
        if _OPEN.match(line):
            return None
        if _BASE.match(line) and base_at is None and split_at is None:
            base_at = i
        elif _SPLIT.match(line) and split_at is None:
            split_at = i
        elif _CLOSE.match(line) and split_at is not None:
            now_end = base_at if base_at is not None else split_at
            base = "".join(lines[base_at + 1:split_at]) if base_at is not None else ""
            return ConflictRegion(start=start, end=i + 1, now="".join(lines[start + 1:now_end]), base=base,
                                  undo="".join(lines[split_at + 1:i]))
    return None


def take_side(text: str, region: ConflictRegion, take: Take) -> str:
    """`text` with `region` (found in this very text) replaced by the side taken."""
    lines = split_lines(text)
    return "".join(lines[:region.start]) + region.text(take) + "".join(lines[region.end:])


def resolve_all(text: str, take: Take) -> str:
    """Every region of `text` settled the same way (what "take now" for the whole file means)."""
    for region in reversed(conflict_regions(text)):
        text = take_side(text, region, take)
    return text
