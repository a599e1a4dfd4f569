"""Statements that are syntax rather than a program, turned into commands the judge understands.

`X=1`, `export X=1`, `declare -x`, `unset`, `[[ ... ]]`, `(( ... ))`,
`for X in ...` all change or test shell state; each becomes a `RawCommand`
with a keyword, so that setting `PATH` in a `for` loop is caught the same
way as `PATH=... cmd`, and arithmetic (which can run commands hidden in
array subscripts) is flagged.
"""

from __future__ import annotations

from tree_sitter import Node

from core.policy.bash.nodes import RawCommand
from core.policy.bash.words import WordValue, evaluate, find_substitutions

_ARITHMETIC_TESTS = frozenset({"-eq", "-ne", "-lt", "-le", "-gt", "-ge"})
_OPERAND_CONTAINERS = frozenset({"binary_expression", "unary_expression", "parenthesized_expression",
                                 "negated_expression", "ternary_expression", "postfix_expression"})


def build(node: Node, data: bytes, home: str, backticks: bool) -> tuple[RawCommand, list[Node]]:
    """The command a statement amounts to, and the bodies (loops) still to walk."""
    t = node.type
    if t in ("variable_assignment", "variable_assignments"):
        items = [node] if t == "variable_assignment" else [c for c in node.named_children
                                                           if c.type == "variable_assignment"]
        return RawCommand(keyword="assign", assignments=[assignment(c, data, home, backticks) for c in items]), []
    if t in ("declaration_command", "unset_command"):
        return _declaration(node, data, home, backticks), []
    if t == "test_command":
        return _test(node, data, home, backticks), []
    if t == "for_statement":
        return _for(node, data, home, backticks)
    return _arithmetic(node, data)


def assignment(node: Node, data: bytes, home: str, backticks: bool) -> tuple[str, WordValue]:
    """(name as written, value) of `NAME=value`; substitutions in a subscript ride on the value."""
    name = node.child_by_field_name("name")
    value = node.child_by_field_name("value")
    name_text = data[name.start_byte:name.end_byte].decode("utf-8", "replace") if name is not None else ""
    word = evaluate(value, data, home, backticks) if value is not None else \
        WordValue("", "", node.end_byte, node.end_byte)
    if name is not None and name.type == "subscript":
        word.substitutions = tuple(find_substitutions(name)) + word.substitutions
    return name_text, word


def _literal(text: str, start: int, end: int) -> WordValue:
    return WordValue(text, text, start, end)


def _declaration(node: Node, data: bytes, home: str, backticks: bool) -> RawCommand:
    keyword = node.children[0].type if node.children else "declare"
    raw = RawCommand(keyword=keyword, words=[_literal(keyword, node.start_byte, node.start_byte + len(keyword))])
    for child in node.named_children:
        if child.type == "variable_assignment":
            name, value = assignment(child, data, home, backticks)
            raw.assignments.append((name, value))
            word = WordValue(f"{name}={value.text}", data[child.start_byte:child.end_byte].decode("utf-8", "replace"),
                             child.start_byte, child.end_byte, value.kinds, value.glob)
            raw.words.append(word)
        else:
            raw.words.append(evaluate(child, data, home, backticks))
    return raw


def _test(node: Node, data: bytes, home: str, backticks: bool) -> RawCommand:
    opener = node.children[0].type if node.children else "[["
    raw = RawCommand(keyword=opener, words=[_literal(opener, node.start_byte, node.start_byte + len(opener))])
    stack = list(reversed(node.named_children))
    while stack:
        n = stack.pop()
        if n.type in _OPERAND_CONTAINERS:
            operator = n.child_by_field_name("operator")
            risky = operator is not None and data[operator.start_byte:operator.end_byte].decode() in \
                _ARITHMETIC_TESTS and opener == "[["
            for child in reversed(n.named_children):
                if risky and child.type not in ("number", "test_operator"):
                    word = evaluate(child, data, home, backticks)
                    word.kinds = word.kinds | {"arithmetic"}
                    raw.words.append(word)
                else:
                    stack.append(child)
            continue
        raw.words.append(evaluate(n, data, home, backticks))
    return raw


def _for(node: Node, data: bytes, home: str, backticks: bool) -> tuple[RawCommand, list[Node]]:
    keyword = node.children[0].type if node.children else "for"
    raw = RawCommand(keyword=keyword, words=[_literal(keyword, node.start_byte, node.start_byte + len(keyword))])
    variable = node.child_by_field_name("variable")
    if variable is not None:
        name = data[variable.start_byte:variable.end_byte].decode("utf-8", "replace")
        raw.assignments.append((name, WordValue(f"${name}", "", variable.end_byte, variable.end_byte,
                                                frozenset({"variable"}))))
    raw.words += [evaluate(v, data, home, backticks) for v in node.children_by_field_name("value")]
    body = node.child_by_field_name("body")
    return raw, [body] if body is not None else []


def _arithmetic(node: Node, data: bytes) -> tuple[RawCommand, list[Node]]:
    """`(( ... ))` or the header of `for (( ... ))`: one word holding the arithmetic."""
    body = node.child_by_field_name("body") if node.type == "c_style_for_statement" else None
    header_end = body.start_byte if body is not None else node.end_byte
    text = data[node.start_byte:header_end].decode("utf-8", "replace")
    inner = text.replace("for", "", 1) if body is not None else text
    literal = all(c.isdigit() or c in " \t\n+-*/%()<>=!&|^~;" for c in inner)
    word = WordValue(text, text, node.start_byte, header_end, frozenset() if literal else frozenset({"arithmetic"}))
    word.substitutions = tuple(find_substitutions(node) if body is None else
                               [s for c in node.children if c != body for s in find_substitutions(c)])
    raw = RawCommand(keyword="((", words=[_literal("((", node.start_byte, node.start_byte + 2), word])
    return raw, [body] if body is not None else []
