"""Characters a person cannot see: refused before a command line is parsed.

An approval shows text; Bash runs bytes.  A zero-width space, a bidi override
or a carriage return makes the two differ (`l\u200bs` looks like `ls`; `\r`
lets a terminal overprint the start of the line), so a command holding one
is refused outright rather than shown.
"""

from __future__ import annotations

import re
import unicodedata

_INVISIBLE_RANGES = (
    (0x200B, 0x200F), (0x2028, 0x2029), (0x202A, 0x202E), (0x2060, 0x2064), (0x2066, 0x2069),
    (0xFEFF, 0xFEFF),
)
_CONTROL_NAMES = {0x00: "NUL", 0x07: "bell", 0x08: "backspace", 0x0B: "vertical tab", 0x0C: "form feed",
                  0x0D: "carriage return", 0x1B: "escape", 0x7F: "delete"}


def _kind(code: int) -> str | None:
    """'control', 'invisible', 'space' or None for a character that shows as itself."""
    if code in (0x09, 0x0A):
        return None
    if code < 0x20 or code == 0x7F or 0x80 <= code <= 0x9F:
        return "control"
    if any(lo <= code <= hi for lo, hi in _INVISIBLE_RANGES):
        return "invisible"
    category = unicodedata.category(chr(code))
    if category == "Cf":
        return "invisible"
    if category == "Zs" and code != 0x20:
        return "space"
    return None


def _name(code: int) -> str:
    return _CONTROL_NAMES.get(code) or unicodedata.name(chr(code), "").lower() or "unnamed"


def _where(text: str, index: int) -> str:
    line = text.count("\n", 0, index) + 1
    column = index - (text.rfind("\n", 0, index) + 1) + 1
    return f"line {line}, column {column}" if "\n" in text else f"column {column}"


_SUSPECT = re.compile(r"[^\t\n\x20-\x7e]")
"""Everything but printable ASCII, tab and newline: only these characters need a closer look."""


def hidden_character(text: str) -> str | None:
    """Why `text` must not run as shown, or None when every character is visible."""
    for match in _SUSPECT.finditer(text):
        index, char = match.start(), match.group()
        kind = _kind(ord(char))
        if kind is None:
            continue
        code = f"U+{ord(char):04X} ({_name(ord(char))})"
        where = _where(text, index)
        if kind == "control":
            return f"contains a control character {code} at {where}: what you see is not what runs"
        if kind == "space":
            return f"contains a look-alike space {code} at {where}: it is not a word separator to Bash"
        return f"contains an invisible character {code} at {where}: what you see is not what runs"
    return None
