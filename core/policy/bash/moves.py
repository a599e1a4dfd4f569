"""Which parts of a script may change the shell's working directory, for the walk's `cd` tracking.

A `cd` that runs moves every relative path after it; one that may not run
(after `&&` or `||`, in an `if`, `case` or loop body, in a function that
is called later or never) leaves the shell in one of several directories.
The walk then forgets the directory (`Cwd.path = None`), so a later
relative path cannot be placed and asks: `false && cd src; rm -rf
../victim` deletes a folder beside the workspace, not one inside it.
Subshells, substitutions and background jobs (`cd x &`) run in a child
shell, whose `cd` moves nothing outside it.
"""

from __future__ import annotations

from tree_sitter import Node

MOVERS = frozenset({"cd", "pushd", "popd"})
"""Builtins that change the directory of the shell that runs them."""
_WRAPPERS = frozenset({"builtin", "command", "time"})
"""Words before a builtin that still run it in the current shell."""
_CHILD_SHELLS = frozenset({"subshell", "command_substitution", "process_substitution"})
CONDITIONAL = frozenset({"if_statement", "case_statement", "while_statement", "for_statement",
                         "c_style_for_statement", "function_definition"})
"""Compounds whose parts may run once, many times, or never: a `cd` in them leaves the directory unknown."""


def moves(node: Node, data: bytes) -> bool:
    """Whether running `node` may change the current shell's directory (a `cd` in a child shell does not)."""
    return key(node) in moving(node, data)


def key(node: Node) -> tuple[int, int, str]:
    """A node's identity in `moving`'s answer (tree-sitter makes a new Python object at each visit)."""
    return node.start_byte, node.end_byte, node.type


def moving(root: Node, data: bytes) -> frozenset[tuple[int, int, str]]:
    """Every node under `root` (itself included) that may change the directory, found in one pass.

    One pass, children before parents, without recursion: asking each
    compound of a ten-thousand-deep nesting on its own would cost the square.
    """
    found: set[tuple[int, int, str]] = set()
    stack: list[tuple[Node, bool]] = [(root, False)]
    while stack:
        n, done = stack.pop()
        if not done:
            stack.append((n, True))
            stack.extend((c, False) for c in n.named_children)
        elif (n.type == "command" and _names_a_mover(n, data)) or any(
                key(c) in found and c.type not in _CHILD_SHELLS and not background for c, background in kids(n)):
            found.add(key(n))
    return frozenset(found)


def kids(node: Node) -> list[tuple[Node, bool]]:
    """The named children of `node` but comments, each with whether `&` follows it (Bash runs it in a child shell).

    Read from the parent's children in one pass: tree-sitter's `next_sibling`
    walks the parent again at each call, the square of a long script.
    """
    children = node.children
    return [(c, i + 1 < len(children) and children[i + 1].type == "&") for i, c in enumerate(children)
            if c.is_named and c.type != "comment"]


def _names_a_mover(command: Node, data: bytes) -> bool:
    skipped = ("variable_assignment", "file_redirect", "heredoc_redirect", "herestring_redirect")
    words = [_plain(c, data) for c in command.named_children if c.type not in skipped]
    while words and words[0] in _WRAPPERS:
        words = words[1:]
    return bool(words) and words[0] in MOVERS


def _plain(node: Node, data: bytes) -> str:
    """A word's text with quotes and backslashes dropped: enough to tell `\\cd` and `'cd'` for `cd`."""
    text = data[node.start_byte:node.end_byte].decode("utf-8", "replace")
    return text.replace("\\", "").replace("'", "").replace('"', "")
