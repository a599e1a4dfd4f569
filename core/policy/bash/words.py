"""One shell word from the syntax tree: its text after quote removal, or why it is only known at run time.

`'r''m'` and `\\rm` are the static word `rm`; `$X`, `${IFS}`, `$(...)`,
`$'\\x74'`, `{a,b}` and arithmetic make a word dynamic, each for a named
reason (`kinds`), because some are harmless in some places: a variable in the
argument of `echo` changes nothing, the same variable as a command name
changes everything.  The walk is iterative, so nesting depth costs no stack.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from tree_sitter import Node

from core.policy.protected import UNKNOWN

SUBSTITUTIONS = frozenset({"command_substitution", "process_substitution"})
SAFE_DYNAMIC = frozenset({"variable", "substitution", "process", "ansi-c", "brace", "literal-arithmetic"})
"""Kinds that cannot turn a harmless read-only command into another one."""
CODE_KINDS = frozenset({"arithmetic", "prompt", "unparsed"})
"""Kinds whose expansion can itself run a command (`$((x))` with x = `a[$(cmd)]`, `${x@P}`), even in data."""
_BRACE = re.compile(r"\{[^{}]*(,|\.\.)[^{}]*\}")
_GLOB = re.compile(r"[*?\[]")
_LITERAL_ARITHMETIC = re.compile(r"[0-9\s+\-*/%()<>=!&|^~]*")
_DQ_ESCAPES = frozenset('$`"\\\n')


@dataclass
class WordValue:
    """A word as the analysis sees it."""

    text: str
    """The literal after quote removal when static; otherwise the source text."""
    source: str
    start: int
    end: int
    kinds: frozenset[str] = frozenset()
    """Why it is dynamic: variable, substitution, ansi-c, brace, arithmetic, expansion, tilde, unparsed..."""
    glob: bool = False
    """Holds an unquoted *, ? or [: a pattern the shell expands against file names."""
    substitutions: tuple[Node, ...] = ()
    """Command and process substitutions inside it, for the walk to analyse."""
    pattern: str = ""
    """The text with each part only known at run time as `UNKNOWN` (`/proc/$PPID/environ` is `/proc/\\0/environ`),
    for the checks that hold whatever that part is; empty where a word was made up from another's text."""

    @property
    def dynamic(self) -> bool:
        return bool(self.kinds)

    def why(self) -> str:
        return ", ".join(sorted(_KIND_WORDS.get(k, k) for k in self.kinds))


_KIND_WORDS = {"variable": "a variable", "substitution": "a command substitution",
               "process": "a process substitution", "ansi-c": "ANSI-C quoting",
               "brace": "brace expansion", "arithmetic": "arithmetic", "expansion": "a parameter expansion",
               "tilde": "a ~user path", "unparsed": "text Bash reads differently than shown",
               "translated": "a locale-translated string", "literal-arithmetic": "arithmetic",
               "prompt": "a prompt expansion (@P), which runs substitutions in the value"}


@dataclass
class _Builder:
    home: str
    in_backticks: bool
    parts: list[str] = field(default_factory=list)
    shape: list[str] = field(default_factory=list)
    kinds: set[str] = field(default_factory=set)
    subs: list[Node] = field(default_factory=list)
    glob: bool = False


_PLAIN_WORD = re.compile(r"[A-Za-z0-9_./:=+%@,-]+")
"""A bare word with nothing Bash would expand or unquote: the common case, taken without the full walk."""


def evaluate(node: Node, source: bytes, home: str, in_backticks: bool = False) -> WordValue:
    """The value of one word node (word, string, concatenation, expansion...)."""
    if node.type == "word":
        text = source[node.start_byte:node.end_byte].decode("utf-8", "replace")
        if _PLAIN_WORD.fullmatch(text):
            return WordValue(text, text, node.start_byte, node.end_byte, pattern=text)
    b = _Builder(home, in_backticks)
    stack = [node]
    while stack:
        n = stack.pop()
        pushed = _piece(n, source, b, n.start_byte == node.start_byte)
        if pushed:
            stack.extend(reversed(pushed))
    if _BRACE.search("".join(b.shape)):
        b.kinds.add("brace")
    src = source[node.start_byte:node.end_byte].decode("utf-8", "replace")
    pattern = "".join(b.parts)
    text = pattern if not b.kinds else src
    return WordValue(text, src, node.start_byte, node.end_byte, frozenset(b.kinds), b.glob, tuple(b.subs), pattern)


def adjoining(nodes: list[Node]) -> list[list[Node]]:
    """Nodes grouped into the shell words they make: nodes with nothing between them are one word.

    tree-sitter-bash splits some words in two: `/a/$X/b/$Y` after the second
    `$`, `x`id`` before the backtick, `a{$B,c}` after the `$`; Bash reads each
    as one word (`/proc/$PPID/task/$TID/environ` is one path).
    """
    groups: list[list[Node]] = []
    for node in nodes:
        if groups and groups[-1][-1].end_byte == node.start_byte:
            groups[-1].append(node)
        else:
            groups.append([node])
    return groups


def evaluate_all(nodes: list[Node], source: bytes, home: str, in_backticks: bool = False) -> WordValue:
    """The value of one word made of adjoining nodes (see `adjoining`)."""
    first = evaluate(nodes[0], source, home, in_backticks)
    if len(nodes) == 1:
        return first
    values = [first] + [evaluate(n, source, home, in_backticks) for n in nodes[1:]]
    kinds = frozenset().union(*(v.kinds for v in values))
    pattern = "".join(v.pattern for v in values)
    src = source[nodes[0].start_byte:nodes[-1].end_byte].decode("utf-8", "replace")
    return WordValue(pattern if not kinds else src, src, nodes[0].start_byte, nodes[-1].end_byte, kinds,
                     any(v.glob for v in values), tuple(n for v in values for n in v.substitutions), pattern)


def _piece(n: Node, source: bytes, b: _Builder, at_start: bool) -> list[Node] | None:
    """Adds one node's contribution; returns children still to visit."""
    t = n.type
    raw = source[n.start_byte:n.end_byte].decode("utf-8", "replace")
    if t == "concatenation":
        return list(n.children)
    if t == "string":
        _string(n, source, b)
    elif t in ("word", "number", "variable_name", "extglob_pattern", "regex", "test_operator"):
        _unquoted(raw, b, at_start)
    elif t == "raw_string":
        b.parts.append(raw[1:-1])
        b.shape.append("q" * len(raw))
    elif t in ("simple_expansion", "expansion"):
        _expansion(n, raw, b)
    elif t in SUBSTITUTIONS:
        b.kinds.add("process" if t == "process_substitution" else "substitution")
        b.subs.append(n)
        b.shape.append("q")
        b.parts.append(UNKNOWN)
    elif t == "arithmetic_expansion":
        inner = raw[3:-2] if raw.startswith("$((") else raw
        b.kinds.add("literal-arithmetic" if _LITERAL_ARITHMETIC.fullmatch(inner) else "arithmetic")
        b.subs.extend(find_substitutions(n))
        b.shape.append("q")
        b.parts.append(UNKNOWN)
    elif t == "ansi_c_string":
        b.kinds.add("ansi-c")
        b.shape.append("q")
        b.parts.append(UNKNOWN)
    elif t == "translated_string" or (t == "$" and not n.is_named):
        b.kinds.add("translated")
        b.parts.append(UNKNOWN)
    else:
        b.kinds.add("unparsed")
        b.subs.extend(find_substitutions(n))
        b.parts.append(UNKNOWN)
    return None


def _string(n: Node, source: bytes, b: _Builder) -> None:
    """A double-quoted string: literal gaps and content, expansions inside (at most one level deeper)."""
    b.shape.append("q")
    pos = n.start_byte + 1
    for child in n.children:
        if not child.is_named:
            continue
        if child.start_byte > pos:
            _quoted(source[pos:child.start_byte].decode("utf-8", "replace"), b)
        if child.type == "string_content":
            _quoted(source[child.start_byte:child.end_byte].decode("utf-8", "replace"), b)
        else:
            inner = evaluate(child, source, b.home, b.in_backticks)
            b.kinds |= inner.kinds
            b.subs.extend(inner.substitutions)
            b.parts.append(inner.pattern)
        pos = child.end_byte
    if n.end_byte - 1 > pos:
        _quoted(source[pos:n.end_byte - 1].decode("utf-8", "replace"), b)


def _quoted(text: str, b: _Builder) -> None:
    if "\\`" in text or (b.in_backticks and "\\" in text):
        b.kinds.add("unparsed")
    out, i = [], 0
    while i < len(text):
        if text[i] == "\\" and i + 1 < len(text) and text[i + 1] in _DQ_ESCAPES:
            if text[i + 1] != "\n":
                out.append(text[i + 1])
            i += 2
            continue
        out.append(text[i])
        i += 1
    b.parts.append("".join(out))


def _unquoted(raw: str, b: _Builder, at_start: bool) -> None:
    if "\\`" in raw or (b.in_backticks and "\\" in raw):
        b.kinds.add("unparsed")
    if at_start and raw.startswith("~"):
        raw = _tilde(raw, b)
    elif at_start and _ASSIGNMENT_WORD.match(raw):
        raw = _assignment_tildes(raw, b)
    elif not at_start and "~" in raw and _ASSIGNMENT_WORD.match("".join(b.parts)):
        b.kinds.add("tilde")  # `a='x':~/y`: Bash may expand it; not worth following
    out, shape, i = [], [], 0
    while i < len(raw):
        if raw[i] == "\\" and i + 1 < len(raw):
            if raw[i + 1] != "\n":
                out.append(raw[i + 1])
                shape.append("q")
            i += 2
            continue
        if _GLOB.match(raw[i]):
            b.glob = True
        out.append(raw[i])
        shape.append(raw[i])
        i += 1
    b.parts.append("".join(out))
    b.shape.append("".join(shape))


_ASSIGNMENT_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")


def _assignment_tildes(raw: str, b: _Builder) -> str:
    """`name=~/x:~/y`: Bash expands a tilde after the `=` and after each `:` of a word shaped like an assignment,
    even as an argument (`dd if=~/.ssh/id_rsa` reads the key)."""
    prefix = _ASSIGNMENT_WORD.match(raw)
    assert prefix is not None
    head, rest = raw[:prefix.end()], raw[prefix.end():]
    return head + ":".join(_tilde(part, b) if part.startswith("~") else part for part in rest.split(":"))


def tilde_word(text: str, home: str) -> str | None:
    """A word made by brace expansion, tilde-expanded as Bash does next: `~/x` in the home; None for `~user`."""
    if not text.startswith("~"):
        return text
    head, sep, rest = text.partition("/")
    return home + sep + rest if head == "~" else None


def _tilde(raw: str, b: _Builder) -> str:
    head, sep, rest = raw.partition("/")
    if head == "~":
        return b.home + sep + rest
    b.kinds.add("tilde")
    return raw


def _expansion(n: Node, raw: str, b: _Builder) -> None:
    name = raw[2:-1] if raw.startswith("${") else raw[1:]
    if name == "HOME":
        b.parts.append(b.home)
        b.shape.append("q")
        return
    simple = re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*|[0-9]|[@*#?$!-]", name) is not None
    b.kinds.add("variable" if simple else "expansion")
    b.parts.append(UNKNOWN)
    if name.endswith("@P"):
        b.kinds.add("prompt")
    elif _arithmetic_inside(name):
        b.kinds.add("arithmetic")
    b.subs.extend(find_substitutions(n))
    b.shape.append("q")


_PARAMETER = re.compile(r"[!#]?([A-Za-z_][A-Za-z0-9_]*|[0-9]+|[@*#?$!-])(?:\[([^\]]*)\])?(.*)", re.DOTALL)


def _arithmetic_inside(name: str) -> bool:
    """Whether `${name}` evaluates arithmetic on a run-time value: `${a[i]}`, `${x:off:len}`.

    Bash evaluates a variable's value as an expression there, and an
    expression may hold `a[$(cmd)]`: the value of `i` then runs `cmd`.
    """
    match = _PARAMETER.fullmatch(name)
    if match is None:
        return True
    subscript, rest = match.group(2), match.group(3)
    if subscript is not None and not re.fullmatch(r"\s*(?:[0-9]+|@|\*)\s*", subscript):
        return True
    return rest.startswith(":") and rest[1:2] not in ("-", "=", "?", "+") and \
        not re.fullmatch(r"[0-9\s:+-]*", rest)


def find_substitutions(node: Node) -> list[Node]:
    """Command and process substitutions anywhere under `node`, outermost only, in order."""
    found: list[Node] = []
    stack = list(reversed(node.children))
    while stack:
        n = stack.pop()
        if n.type in SUBSTITUTIONS:
            found.append(n)
        else:
            stack.extend(reversed(n.children))
    return found


def is_device(path: str) -> bool:
    """Paths that name no file: writing there creates or changes nothing on disk."""
    return path in ("/dev/null", "/dev/stdout", "/dev/stderr", "/dev/stdin", "/dev/tty", "/dev/zero",
                    "/dev/random", "/dev/urandom", "/dev/full") or path.startswith("/dev/fd/")


def resolve(text: str, cwd: Path | None) -> Path | None:
    """The absolute path a static word names from `cwd`; None when cwd is unknown."""
    if text.startswith("/"):
        return Path(text)
    return None if cwd is None else cwd / text


_BRACE_GROUP = re.compile(r"\{([^{}]*)\}")
_SEQUENCE = re.compile(r"(-?[0-9]+|[A-Za-z])\.\.(-?[0-9]+|[A-Za-z])(?:\.\.(-?[0-9]+))?")
MAX_BRACE_WORDS = 256


def brace_words(word: WordValue, home: str) -> list[str] | None:
    """The words a static brace expansion makes (`src/{a,b}.py`, `f{1..3}`), or None when it is not one.

    Only plain text is expanded (no quotes, escapes or expansions) and at most
    `MAX_BRACE_WORDS` words; anything else stays a run-time word.  Each word
    is then tilde-expanded, as Bash does after brace expansion:
    `{~/.ssh/id_rsa,/dev/null}` names the key.
    """
    if word.kinds != {"brace"} or any(c in word.source for c in "'\"\\$`"):
        return None
    done: list[str] = []
    todo = [word.source]
    while todo and len(done) + len(todo) <= MAX_BRACE_WORDS:
        text = todo.pop()
        match = next((m for m in _BRACE_GROUP.finditer(text) if _alternatives(m.group(1)) is not None), None)
        if match is None:
            done.append(text)
            continue
        alternatives = _alternatives(match.group(1)) or []
        todo += [text[:match.start()] + a + text[match.end():] for a in alternatives]
    if todo:
        return None
    words = [tilde_word(text, home) for text in done]
    return [w for w in words if w is not None] if None not in words else None


def _alternatives(inner: str) -> list[str] | None:
    sequence = _SEQUENCE.fullmatch(inner)
    if sequence is not None:
        first, last, step = sequence.group(1), sequence.group(2), int(sequence.group(3) or 1) or 1
        if first.lstrip("-").isdigit() != last.lstrip("-").isdigit():
            return None
        numeric = first.lstrip("-").isdigit()
        a, b = (int(first), int(last)) if numeric else (ord(first), ord(last))
        if abs(b - a) // abs(step) > MAX_BRACE_WORDS:
            return [""] * (MAX_BRACE_WORDS + 1)
        values = range(a, b + (1 if b >= a else -1), abs(step) if b >= a else -abs(step))
        return [str(v) if numeric else chr(v) for v in values]
    return inner.split(",") if "," in inner else None
