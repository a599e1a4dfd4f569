"""Excerpts: what the timeline keeps of a call's arguments and output, bounded whatever their size.

The timeline lives as long as the console and holds every call of the
workspace, earlier sessions included, so what it keeps of one call must
not grow with what the agent sent: a Write of 1 MB would otherwise cost a
megabyte for as long as the window is open.  It keeps an excerpt (each
string cut to `STRING_CHARS` with a marker saying how much was cut, the
whole at most about `ARGS_CHARS`, nesting at most `DEPTH` levels) and says
that it did; the full call stays in the journal and the blob store, and a
front end reads it there when a person selects the call
(`Console.call_record`).
"""

from __future__ import annotations

from typing import Any, NamedTuple

STRING_CHARS = 300
"""The longest string argument kept whole; a longer one keeps its first `STRING_CHARS` characters."""
ARGS_CHARS = 4_000
"""About how many characters of arguments (keys and values) one call keeps in all."""
DEPTH = 8
"""How deep nested arguments are kept; deeper containers become a marker."""
ITEMS = 50
"""How many entries of one list or object are kept."""
OUTPUT_HEAD_CHARS = 3_000
OUTPUT_TAIL_CHARS = 1_000
"""A longer output keeps its beginning and its end (where a command says how it ended)."""
OUTPUT_WHOLE_CHARS = OUTPUT_HEAD_CHARS + OUTPUT_TAIL_CHARS
"""The longest output kept whole."""
SCALAR_COST = 8
"""What a number, a boolean or a null counts for against `ARGS_CHARS`."""


def cut_marker(cut: int) -> str:
    """The note put where characters were left out, e.g. "… [1,048,276 more characters in the journal]"."""
    return f"… [{cut:,} more characters in the journal]"


class Excerpt(NamedTuple):
    """Arguments as the timeline keeps them, and whether anything was left out.  A named tuple: one is made for
    every call, and a frozen dataclass took 0.9 us of the 2 us an excerpt of a path costs."""

    args: dict[str, Any]
    cut: bool


class _Budget:
    """Characters left for the rest of one call's arguments; notes whether anything was cut."""

    __slots__ = ("left", "cut")

    def __init__(self, chars: int) -> None:
        self.left = chars
        self.cut = False

    def take(self, chars: int) -> None:
        self.left -= chars


def excerpt_args(args: dict[str, Any]) -> Excerpt:
    """A bounded copy of a call's arguments: long strings cut, long lists and objects shortened, deep ones
    folded; small arguments come back equal (and `cut` False)."""
    if _small(args):
        return Excerpt(dict(args), False)
    budget = _Budget(ARGS_CHARS)
    kept = _mapping(args, budget, 0)
    return Excerpt(kept, budget.cut)


def _small(args: dict[str, Any]) -> bool:
    """Whether `args` is a few short strings by short names (a path, a pattern, a command line: most calls),
    which the budget would keep whole: what `_mapping` charges them comes to at most ARGS_CHARS."""
    if len(args) > ITEMS:
        return False
    charged = 0
    for name, value in args.items():
        if type(name) is not str or type(value) is not str or len(name) > STRING_CHARS or len(value) > STRING_CHARS:
            return False
        charged += len(name) + len(value) + 6  # what _mapping and _string take for the pair
    return charged <= ARGS_CHARS


def _value(value: Any, budget: _Budget, depth: int) -> Any:
    if isinstance(value, str):
        return _string(value, budget)
    if isinstance(value, dict):  # folded here, so that `_mapping` always gives a mapping
        return _folded(budget, f"{len(value):,} entries") if depth >= DEPTH else _mapping(value, budget, depth + 1)
    if isinstance(value, (list, tuple)):
        return _sequence(value, budget, depth + 1)
    if value is None or isinstance(value, (bool, int, float)):
        budget.take(SCALAR_COST)
        return value
    return _string(repr(value), budget)  # not JSON: kept as text, for showing only


def _string(text: str, budget: _Budget) -> str:
    room = max(min(STRING_CHARS, budget.left), 0)
    if len(text) <= room:
        budget.take(len(text) + 2)
        return text
    budget.cut = True
    budget.take(room + 40)
    return text[:room] + cut_marker(len(text) - room)


def _mapping(value: dict[Any, Any], budget: _Budget, depth: int) -> dict[str, Any]:
    kept: dict[str, Any] = {}
    for n, (key, item) in enumerate(value.items()):
        if n >= ITEMS or budget.left <= 0:
            budget.cut = True
            kept["…"] = f"{len(value) - n:,} more entries in the journal"
            break
        name = key if isinstance(key, str) and len(key) <= STRING_CHARS else _string(str(key), budget)
        budget.take(len(name) + 4)
        kept[name] = _value(item, budget, depth)
    return kept


def _sequence(value: list[Any] | tuple[Any, ...], budget: _Budget, depth: int) -> list[Any]:
    if depth > DEPTH:
        return [_folded(budget, f"{len(value):,} items")]
    kept: list[Any] = []
    for n, item in enumerate(value):
        if n >= ITEMS or budget.left <= 0:
            budget.cut = True
            kept.append(f"… {len(value) - n:,} more items in the journal")
            break
        budget.take(2)
        kept.append(_value(item, budget, depth))
    return kept


def _folded(budget: _Budget, what: str) -> str:
    budget.cut = True
    budget.take(40)
    return f"… [{what} nested deeper, in the journal]"


def excerpt_line(text: str) -> str:
    """A call's one-line summary, as the timeline keeps it: tools keep theirs short, outside agents may not."""
    return text if len(text) <= STRING_CHARS else text[:STRING_CHARS - 1] + "…"


def excerpt_text(text: str) -> tuple[str, bool]:
    """A call's output as the timeline keeps it: its beginning and its end around a marker when it is long;
    and whether it was cut."""
    if len(text) <= OUTPUT_WHOLE_CHARS:
        return text, False
    cut = len(text) - OUTPUT_HEAD_CHARS - OUTPUT_TAIL_CHARS
    return f"{text[:OUTPUT_HEAD_CHARS]}\n{cut_marker(cut)}\n{text[-OUTPUT_TAIL_CHARS:]}", True
