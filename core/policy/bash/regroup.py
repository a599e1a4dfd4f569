"""Grouping `&&`/`||` lists, pipelines and their redirections the way Bash groups them.

tree-sitter-bash hangs a redirection that follows the last command of a list
or pipeline on the whole list (`cd .. && echo x > f` parses as
`(cd .. && echo x) > f`), and then nests the wrong way round (`a && b > f | c`
parses as `(a && b > f) | c`).  Bash binds a redirection to the command it
follows and `|` tighter than `&&` and `||`.  The grouping decides the
working directory a path is resolved in (`cd ..` runs before `> f` is
opened) and which commands share the shell's state, so a statement is
flattened here to its commands, operators and redirections in source order,
and grouped again with Bash's precedence.  No recursion: a ten-thousand-deep
list costs a list, not stack.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tree_sitter import Node

GROUPED = frozenset({"list", "pipeline", "negated_command", "redirected_statement"})
"""Node types this module takes apart; everything else is a unit (a command, a subshell, a loop...)."""
_NEW_OPERAND = frozenset({"&&", "||"})


@dataclass
class Stage:
    """One unit of a pipeline and the redirections that belong to it but sit on an enclosing node."""

    node: Node
    redirects: list[Node] = field(default_factory=list)
    after: str = ""
    """The operator (`&&`, `||`) before the operand this stage starts; "" for the first and later stages."""

    @property
    def end(self) -> int:
        """Where it ends in the source, redirections included."""
        return max([self.node.end_byte] + [r.end_byte for r in self.redirects])


def regroup(node: Node) -> list[list[Stage]]:
    """The operands of the `&&`/`||` list `node` amounts to, each a pipeline of one or more stages."""
    operands: list[list[Stage]] = [[]]
    stack: list[Node | list[Node]] = [node]
    operator = ""
    while stack:
        item = stack.pop()
        if isinstance(item, list):
            _attach(operands, item)
        elif not item.is_named:
            if item.type in _NEW_OPERAND and operands[-1]:
                operands.append([])
                operator = item.type
        elif item.type == "redirected_statement" and (body := item.child_by_field_name("body")) is not None:
            stack.append(item.children_by_field_name("redirect"))
            stack.append(body)
        elif item.type in ("list", "pipeline", "negated_command"):
            stack.extend(reversed([c for c in item.children if c.type != "comment"]))
        elif item.type != "comment":
            operands[-1].append(Stage(item, after=operator if not operands[-1] else ""))
    return [op for op in operands if op]


def _attach(operands: list[list[Stage]], redirects: list[Node]) -> None:
    """Redirections follow the unit they belong to: the last one seen."""
    if redirects and operands[-1]:
        operands[-1][-1].redirects.extend(redirects)
