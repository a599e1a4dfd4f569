"""WCAG 2.x contrast maths, pure Python so `highlight` (no Qt) and `theme` share it.

`readable` nudges a colour towards black or white until it reads at AA on
every background given; pygments' stock styles miss 4.5:1 on the tinted
added/removed line backgrounds by a little, and this keeps their hues.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

AA = 4.5
"""WCAG AA for normal-size text."""


def _rgb(colour: str) -> tuple[int, int, int]:
    h = colour.lstrip("#")
    if len(h) == 3:
        h = "".join(c * 2 for c in h)
    return int(h[0:2], 16), int(h[2:4], 16), int(h[4:6], 16)


def relative_luminance(colour: str) -> float:
    """WCAG relative luminance of an sRGB "#rrggbb" colour."""
    def channel(v: int) -> float:
        s = v / 255
        return s / 12.92 if s <= 0.04045 else ((s + 0.055) / 1.055) ** 2.4

    r, g, b = _rgb(colour)
    return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b)


def contrast(foreground: str, background: str) -> float:
    """The WCAG contrast ratio of two colours (1 to 21)."""
    a, b = sorted((relative_luminance(foreground), relative_luminance(background)), reverse=True)
    return (a + 0.05) / (b + 0.05)


@lru_cache(maxsize=4096)
def readable(colour: str, backgrounds: Sequence[str], *, dark: bool, ratio: float = AA) -> str:
    """`colour`, mixed towards white (`dark`) or black just enough to reach `ratio` on every background."""
    target = 255 if dark else 0
    r, g, b = _rgb(colour)
    for step in range(21):
        t = step / 20
        mixed = "#{:02x}{:02x}{:02x}".format(*(round(c + (target - c) * t) for c in (r, g, b)))
        if all(contrast(mixed, bg) >= ratio for bg in backgrounds):
            return mixed
    return "#ffffff" if dark else "#000000"
