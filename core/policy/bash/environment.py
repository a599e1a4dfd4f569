"""The environment, where API keys and tokens live: what prints it, and which variables are harmless to show.

`env` and `printenv` need a rule or a person; so does every other way to
hand the agent the environment: a variable expanded into a command's words
(`echo $TOKEN`, and an error message quoting a word), bare `set`,
`declare -p`, `ps e`, jq's `env`/`$ENV`, awk's `ENVIRON`.  A variable is
harmless when it is one of a few well-known, non-secret ones (`SAFE`), or
set in the same script from harmless values (`x=1; echo $x`).
"""

from __future__ import annotations

import re

from tree_sitter import Node

from core.policy.bash.words import WordValue

SAFE = frozenset({
    "HOME", "PATH", "PWD", "OLDPWD", "USER", "LOGNAME", "SHELL", "HOSTNAME", "HOSTTYPE", "OSTYPE", "MACHTYPE",
    "LANG", "LANGUAGE", "TERM", "SHLVL", "UID", "EUID", "PPID", "RANDOM", "SRANDOM", "SECONDS", "LINENO", "BASH",
    "BASH_VERSION", "BASHPID", "BASH_SOURCE", "FUNCNAME", "TMPDIR", "COLUMNS", "LINES", "EPOCHSECONDS",
    "EPOCHREALTIME", "GROUPS", "OPTIND", "OPTARG", "REPLY", "PIPESTATUS", "IFS", "VIRTUAL_ENV",
    "?", "$", "!", "#", "@", "*", "-", "_", "0", "1", "2", "3", "4", "5", "6", "7", "8", "9",
})
"""Variables whose value is no secret: the shell's own, and the user's identity and locations."""
_REFERENCE = re.compile(r"\$(?:\{[#]?)?([A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!_-])")
_INDIRECT = "${!"
_ASSIGNERS = frozenset({"read", "mapfile", "readarray", "getopts"})
"""Builtins whose operands name variables set from input that is itself judged (a file read, a pipe)."""


def referenced(text: str) -> set[str]:
    """The variables a word's source expands; `${!x}` (indirect, or names by prefix) as the name "!"."""
    names = {m.group(1) for m in _REFERENCE.finditer(text)}
    return names | {"!"} if _INDIRECT in text else names


SCANNED = 4096
"""A word longer than this is not scanned for the variables it expands: it is taken to expand one not known to
be safe, and asked about.  (Each level of a 10,000-deep `$(...)` is a word holding all the levels below it:
scanning them all took time quadratic in the command's length.)"""


def leaked(words: list[WordValue], known: frozenset[str]) -> str | None:
    """The first variable that is neither `SAFE` nor `known` (set harmlessly by the script) in `words`."""
    for word in words:
        if word.dynamic and len(word.source) > SCANNED:
            return "… (a word too long to look into)"
        if word.dynamic:
            hidden = sorted(referenced(word.source) - SAFE - known)
            if hidden:
                return hidden[0]
    return None


def harmless_names(root: Node, data: bytes) -> frozenset[str]:
    """Variables the script sets only from harmless values (literals, `SAFE` ones, each other), in one pass.

    `x=$TOKEN; echo $x` prints the token: a name set from a secret is not harmless.
    """
    values: dict[str, list[str]] = {}
    stack = [root]
    while stack:
        node = stack.pop()
        for name, value in _assignments(node, data):
            values.setdefault(name, []).append(value)
        stack.extend(node.named_children)
    harmless = set(values)
    changed = True
    while changed:
        changed = False
        for name in list(harmless):
            if any(referenced(v) - SAFE - harmless for v in values[name]):
                harmless.discard(name)
                changed = True
    return frozenset(harmless)


def _assignments(node: Node, data: bytes) -> list[tuple[str, str]]:
    """(name, value source) for what `node` itself sets: `x=v`, `for x in v...`, `read x`."""
    text = data[node.start_byte:node.end_byte].decode("utf-8", "replace")
    if node.type == "variable_assignment":
        name, _, value = text.partition("=")
        return [(name.split("[", 1)[0].rstrip("+"), value)]
    if node.type == "for_statement":
        variable = node.child_by_field_name("variable")
        values = " ".join(data[v.start_byte:v.end_byte].decode("utf-8", "replace")
                          for v in node.children_by_field_name("value"))
        return [(data[variable.start_byte:variable.end_byte].decode("utf-8", "replace"), values)] if variable else []
    if node.type == "command":
        words = [data[c.start_byte:c.end_byte].decode("utf-8", "replace") for c in node.named_children]
        if words and words[0] in _ASSIGNERS:
            return [(w, "") for w in words[1:] if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", w)]
    return []


_PS_ENVIRONMENT = re.compile(r"[A-Za-z]*e[A-Za-z]*")


def prints_environment(name: str, args: list[WordValue]) -> str | None:
    """Why `name ARGS` prints the environment (or a variable not known harmless), or None."""
    texts = [a.text for a in args]
    if name == "set" and not args:
        return "set prints every variable"
    if name == "ps" and any(not t.startswith("-") and _PS_ENVIRONMENT.fullmatch(t) for t in texts):
        return "ps e prints each process's environment"
    if name == "jq" and any(re.search(r"\$ENV\b|(?<![\w$.])env\b", t) for t in texts):
        return "jq's env and $ENV are the environment"
    if name in ("awk", "gawk", "mawk", "nawk") and any("ENVIRON" in t for t in texts):
        return "awk's ENVIRON is the environment"
    return None


def declared(keyword: str, words: list[WordValue], known: frozenset[str]) -> str | None:
    """Why `declare`/`typeset`/`local`/`readonly` prints variables not known harmless, or None.

    Bare `declare` and `declare -p` print every variable; `declare -p NAME`
    prints NAME's value.
    """
    flags = "".join(w.text[1:] for w in words if w.text.startswith("-") and not w.dynamic)
    names = [w for w in words if not w.text.startswith(("-", "+")) or w.dynamic]
    if keyword in ("declare", "typeset") and not names and (not flags or "p" in flags or set(flags) <= {"x", "r"}):
        return f"{keyword} prints every variable"
    if "p" in flags:
        hidden = [w.source for w in names if w.dynamic or w.text.split("=")[0] not in SAFE | known]
        if hidden:
            return f"{keyword} -p prints the value of {hidden[0]}"
    return None
