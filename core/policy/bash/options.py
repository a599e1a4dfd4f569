"""Reading a command's options the way GNU getopt does, enough to tell operands from option values.

Combined short options (`-rf`), attached values (`-n5`, `--output=x`),
abbreviated long options (`--compress-p=sh`),
separate values (`-o x`), `--` and GNU's permutation (options after
operands still count) are handled; a program's table names the options
that take a value.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

from core.policy.bash.words import WordValue


@dataclass
class Parsed:
    """Options as (name, value, index of the word holding the name) and operand word indices."""

    options: list[tuple[str, str | None, int]] = field(default_factory=list)
    operands: list[int] = field(default_factory=list)

    def has(self, *names: str) -> bool:
        return any(name in names for name, _, _ in self.options)

    def values(self, *names: str) -> list[str]:
        return [value for name, value, _ in self.options if name in names and value is not None]

    def index(self, *names: str) -> int | None:
        return next((i for name, _, i in self.options if name in names), None)


def parse(words: Sequence[WordValue], value_short: str = "", value_long: Collection[str] = (),
          permute: bool = True) -> Parsed:
    """Parses `words` (the arguments, without the program name)."""
    out = Parsed()
    i = 0
    while i < len(words):
        text = words[i].text
        if words[i].dynamic or text == "-" or not text.startswith("-"):
            out.operands.append(i)
            if not permute:
                out.operands += range(i + 1, len(words))
                break
        elif text == "--":
            out.operands += range(i + 1, len(words))
            break
        elif text.startswith("--"):
            i = _long(words, i, value_long, out)
        else:
            i = _short(words, i, value_short, out)
        i += 1
    return out


def _long(words: Sequence[WordValue], i: int, value_long: Collection[str], out: Parsed) -> int:
    name, eq, value = words[i].text.partition("=")
    name = _unabbreviated(name, value_long)
    if eq:
        out.options.append((name, value, i))
    elif name in value_long and i + 1 < len(words):
        out.options.append((name, words[i + 1].text, i))
        return i + 1
    else:
        out.options.append((name, None, i))
    return i


def _unabbreviated(name: str, value_long: Collection[str]) -> str:
    """GNU getopt takes any unambiguous start of a long option: `--compress-p=sh` is `--compress-program=sh`.

    Only the options that take a value are known here; a start that fits exactly one of them is read as
    that one (the riskier reading when it could also start an option not listed).
    """
    if name in value_long or len(name) < 4:
        return name
    fits = [option for option in value_long if option.startswith(name)]
    return fits[0] if len(fits) == 1 else name


def _short(words: Sequence[WordValue], i: int, value_short: str, out: Parsed) -> int:
    letters = words[i].text[1:]
    for k, letter in enumerate(letters):
        if letter in value_short:
            rest = letters[k + 1:]
            if rest:
                out.options.append((f"-{letter}", rest, i))
                return i
            if i + 1 < len(words):
                out.options.append((f"-{letter}", words[i + 1].text, i))
                return i + 1
            out.options.append((f"-{letter}", None, i))
            return i
        out.options.append((f"-{letter}", None, i))
    return i
