"""`${call.data.field}` references between the calls of a batch: a small parser, a finder and a resolver.

Inside `${ ... }` comes a call's batch id, then any sequence of `.name`, `[integer]` (negative counts from
the end) and `["key"]` / `['key']` (backslash escapes the quote and the backslash).  No whitespace is
allowed inside.  `$${` is a literal `${`.  The text is scanned left to right, so `$$${a}` reads as a `$`
followed by the literal `${a}`.

A string that is exactly one reference is replaced by the referenced value itself, whatever its type;
a reference inside a larger string is replaced by its text form (JSON for everything but a string).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, NoReturn

_DIGITS = frozenset("0123456789")
_IDENT_START = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_")
_IDENT_REST = _IDENT_START | _DIGITS | {"-"}
_MAX_INDEX_DIGITS = 18  # keeps int() far from Python's digit limit on hostile input
_MAX_KEYS_LISTED = 8


@dataclass(frozen=True)
class Reference:
    """One `${...}` in an argument."""

    call: str
    """The batch id of the call whose result is referred to."""
    path: tuple[str | int, ...]
    """Fields and indexes into that result, e.g. `("data", "files", 0)`."""
    text: str
    """The source, e.g. `${read_cfg.data.files[0]}`."""


class BadReference(ValueError):
    """A reference that cannot be parsed or resolved; says where it is and what is wrong."""

    def __init__(self, where: str, reference: str, reason: str) -> None:
        super().__init__(f"{where}: {reference}: {reason}")
        self.where = where
        """The argument path, e.g. `args.edits[1].old_string`."""
        self.reference = reference
        """The reference's source text (for a syntax error, up to the next `}`)."""
        self.reason = reason


class _SyntaxProblem(Exception):
    def __init__(self, start: int, message: str) -> None:
        super().__init__(message)
        self.start = start
        self.message = message


class _Scanner:
    """Reads the one reference whose `${` begins at `start`: a hand-written scanner, one method per rule."""

    def __init__(self, text: str, start: int) -> None:
        self.text, self.start, self.pos = text, start, start + 2

    def reference(self) -> Reference:
        call = self._identifier("a call id")
        path: list[str | int] = []
        while (char := self._peek()) != "}":
            if char not in (".", "["):
                self._fail("'.', '[' or '}'")
            self.pos += 1
            path.append(self._identifier("a field name after '.'") if char == "." else self._subscript())
        self.pos += 1
        return Reference(call, tuple(path), self.text[self.start:self.pos])

    def _identifier(self, what: str) -> str:
        begin = self.pos
        if self._peek() not in _IDENT_START:
            self._fail(what)
        while self._peek() in _IDENT_REST:
            self.pos += 1
        return self.text[begin:self.pos]

    def _subscript(self) -> str | int:
        char = self._peek()
        if char in ("'", '"'):
            step: str | int = self._quoted(char)
        elif char == "-" or char in _DIGITS:
            step = self._integer()
        else:
            self._fail("an integer index or a quoted key after '['")
        if self._peek() != "]":
            self._fail("']'")
        self.pos += 1
        return step

    def _integer(self) -> int:
        begin = self.pos
        if self._peek() == "-":
            self.pos += 1
        if self._peek() not in _DIGITS:
            self._fail("a digit")
        digits = self.pos
        while self._peek() in _DIGITS:
            if self.pos - digits == _MAX_INDEX_DIGITS:
                self._fail(f"']' after at most {_MAX_INDEX_DIGITS} digits")
            self.pos += 1
        return int(self.text[begin:self.pos])

    def _quoted(self, quote: str) -> str:
        self.pos += 1
        chars: list[str] = []
        while (char := self._peek()) != quote:
            if char == "":
                self._fail(f"the closing {quote}")
            if char == "\\":
                self.pos += 1
                char = self._peek()
                if char not in ("\\", "'", '"'):
                    self._fail("a quote or a backslash after '\\'")
            chars.append(char)
            self.pos += 1
        self.pos += 1
        return "".join(chars)

    def _peek(self) -> str:
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def _fail(self, expected: str) -> NoReturn:
        found = repr(self._peek()) if self.pos < len(self.text) else "the end of the text"
        raise _SyntaxProblem(self.start, f"expected {expected} at position {self.pos}, found {found}")


def _parse(text: str) -> list[str | Reference]:
    """The literal pieces and references of `text`, in order (empty pieces left out)."""
    parts: list[str | Reference] = []
    literal, i = "", 0
    while (j := text.find("${", i)) >= 0:
        if j > i and text[j - 1] == "$":  # `$${`: the first `$` escapes the reference
            literal, i = literal + text[i:j - 1] + "${", j + 2
            continue
        ref = _Scanner(text, j).reference()
        parts += [literal + text[i:j], ref]
        literal, i = "", j + len(ref.text)
    parts.append(literal + text[i:])
    return [part for part in parts if part != ""]


def _parse_at(text: str, where: str) -> list[str | Reference]:
    try:
        return _parse(text)
    except _SyntaxProblem as problem:
        end = text.find("}", problem.start)
        source = text[problem.start:] if end < 0 else text[problem.start:end + 1]
        raise BadReference(where, source, problem.message) from None


def iter_references(value: Any, where: str = "args") -> Iterator[tuple[str, Reference]]:
    """Each reference in nested dicts, lists and strings, with its argument path, in document order."""
    if isinstance(value, str):
        if "${" in value:
            yield from ((where, part) for part in _parse_at(value, where) if isinstance(part, Reference))
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield from iter_references(item, _child(where, key))
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            yield from iter_references(item, f"{where}[{index}]")


def find_references(value: Any) -> list[Reference]:
    """Every reference in an args value (repeats included); raises BadReference for a syntax error."""
    return [ref for _, ref in iter_references(value)]


def resolve(value: Any, results: Mapping[str, Mapping[str, Any]], where: str = "args") -> Any:
    """A copy of `value` with each reference replaced from `results` (batch id -> finished call's result)."""
    if isinstance(value, str):
        return _resolve_text(value, results, where) if "${" in value else value
    if isinstance(value, Mapping):
        return {key: resolve(item, results, _child(where, key)) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return _same_sequence(value, (resolve(item, results, f"{where}[{i}]") for i, item in enumerate(value)))
    return copy.deepcopy(value)


def _resolve_text(text: str, results: Mapping[str, Mapping[str, Any]], where: str) -> Any:
    parts = _parse_at(text, where)
    if len(parts) == 1 and isinstance(parts[0], Reference):
        return _copy(_lookup(parts[0], results, where))
    return "".join(part if isinstance(part, str) else _text_form(_lookup(part, results, where))
                   for part in parts)


def _lookup(ref: Reference, results: Mapping[str, Mapping[str, Any]], where: str) -> Any:
    if ref.call not in results:
        raise BadReference(where, ref.text, f'no result for call "{ref.call}"')
    value: Any = results[ref.call]
    for depth, step in enumerate(ref.path):
        if problem := _step_problem(value, step, _label(ref.call, ref.path[:depth])):
            raise BadReference(where, ref.text, problem)
        value = value[step]
    return value


def _step_problem(value: Any, step: str | int, label: str) -> str | None:
    """Why `value[step]` cannot be taken (`label` is what `value` is called), or None."""
    if isinstance(step, str):
        if not isinstance(value, Mapping):
            return f'cannot take field "{step}" of {label}, which is {_kind(value)}, not a dict'
        return None if step in value else f'{label} has no field "{step}" ({_fields(value)})'
    if not isinstance(value, (list, tuple)):
        return f"cannot take [{step}] of {label}, which is {_kind(value)}, not a list"
    if -len(value) <= step < len(value):
        return None
    count = f"{len(value)} item" + ("" if len(value) == 1 else "s")
    return f"index {step} is out of range ({label} has {count})"


def _label(call: str, path: tuple[str | int, ...]) -> str:
    """The part of a path a person recognises: from its last field name on (`files`, `rows[0]`)."""
    names = [i for i, step in enumerate(path) if isinstance(step, str)]
    head, tail = (call, path) if not names else (str(path[names[-1]]), path[names[-1] + 1:])
    return head + "".join(f"[{step}]" for step in tail)


def _fields(mapping: Mapping[Any, Any]) -> str:
    if not mapping:
        return "it is empty"
    keys = [str(key) for key in list(mapping)[:_MAX_KEYS_LISTED]]
    more = ", ..." if len(mapping) > _MAX_KEYS_LISTED else ""
    return "it has: " + ", ".join(keys) + more


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, Mapping):
        return "a dict"
    if isinstance(value, (list, tuple)):
        return "a list"
    name = type(value).__name__
    return ("an " if name[0] in "aeiou" else "a ") + name


def _text_form(value: Any) -> str:
    """How a value reads inside a larger string: a string as is, anything else as compact JSON."""
    if isinstance(value, str):
        return value
    if value is None or isinstance(value, (bool, int, float, Mapping, list, tuple)):
        return json.dumps(_copy(value), separators=(",", ":"), ensure_ascii=False, default=str)
    return str(value)


def _copy(value: Any) -> Any:
    """A deep copy that also turns read-only mappings (which deepcopy cannot copy) into dicts."""
    if isinstance(value, Mapping):
        return {key: _copy(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return _same_sequence(value, (_copy(item) for item in value))
    return copy.deepcopy(value)


def _same_sequence(original: list[Any] | tuple[Any, ...], items: Iterator[Any]) -> list[Any] | tuple[Any, ...]:
    return list(items) if isinstance(original, list) else tuple(items)


def _child(where: str, key: Any) -> str:
    if isinstance(key, str) and key[:1] in _IDENT_START and all(char in _IDENT_REST for char in key):
        return f"{where}.{key}"
    return f"{where}[{json.dumps(key, ensure_ascii=False) if isinstance(key, str) else repr(key)}]"
