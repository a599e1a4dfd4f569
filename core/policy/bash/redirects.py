"""Redirections of a command: what each opens, and the heredoc bodies Bash expands.

Tree-sitter-bash attaches a word that follows a redirection target
(`echo a > f b`) as a second destination; it is an argument of the command,
and is returned as one.  A heredoc's line may continue with a pipeline
(`cat <<EOF | sh`): that pipeline is returned as a statement to walk.
"""

from __future__ import annotations

from tree_sitter import Node

from core.policy.bash.environment import referenced
from core.policy.bash.nodes import RawRedirect
from core.policy.bash.words import (
    CODE_KINDS,
    WordValue,
    adjoining,
    evaluate,
    evaluate_all,
    find_substitutions,
    is_device,
)

WRITE_OPS = frozenset({">", ">>", ">|", "&>", "&>>"})
_HEREDOC_PARTS = frozenset({"heredoc_start", "heredoc_body", "heredoc_end", "file_redirect"})


def collect(nodes: list[Node], data: bytes, home: str,
            backticks: bool) -> tuple[list[RawRedirect], list[WordValue], list[Node]]:
    """(redirects, extra argument words, statements to walk) for a command's redirect nodes."""
    redirects: list[RawRedirect] = []
    words: list[WordValue] = []
    statements: list[Node] = []
    todo = list(reversed(nodes))
    while todo:
        node = todo.pop()
        if node.type == "file_redirect":
            redirects.append(_file(node, data, home, backticks, words))
        elif node.type == "heredoc_redirect":
            redirects.append(_heredoc(node, data, home))
            todo.extend(reversed([c for c in node.named_children if c.type == "file_redirect"]))
            statements += [c for c in node.named_children if c.type not in _HEREDOC_PARTS]
        elif node.type == "herestring_redirect":
            target = node.named_children[0] if node.named_children else None
            value = evaluate(target, data, home, backticks) if target is not None else None
            redirects.append(RawRedirect("<<<", value, node.start_byte, node.end_byte))
    return redirects, words, statements


def _file(node: Node, data: bytes, home: str, backticks: bool, words: list[WordValue]) -> RawRedirect:
    destinations = node.children_by_field_name("destination")
    descriptor = node.child_by_field_name("descriptor")
    op_start = descriptor.end_byte if descriptor is not None else node.start_byte
    op_end = destinations[0].start_byte if destinations else node.end_byte
    op = data[op_start:op_end].decode("utf-8", "replace").strip()
    fd = data[descriptor.start_byte:descriptor.end_byte].decode() if descriptor is not None else ""
    values = [evaluate_all(word, data, home, backticks) for word in adjoining(destinations)]
    target = values[0] if values else None
    words.extend(values[1:])
    return RawRedirect(fd + op, target, node.start_byte, node.end_byte)


def _heredoc(node: Node, data: bytes, home: str) -> RawRedirect:
    """A heredoc as a pseudo-target whose substitutions are the ones its (unquoted) body expands."""
    op = next((c.type for c in node.children if not c.is_named), "<<")
    start = next((c for c in node.children if c.type == "heredoc_start"), None)
    body = next((c for c in node.children if c.type == "heredoc_body"), None)
    delimiter = data[start.start_byte:start.end_byte].decode("utf-8", "replace") if start is not None else ""
    text = data[body.start_byte:body.end_byte].decode("utf-8", "replace") if body is not None else ""
    begin, end = (body.start_byte, body.end_byte) if body is not None else (node.start_byte, node.end_byte)
    value = WordValue("<heredoc>", text, begin, end)
    if body is not None and not any(q in delimiter for q in "'\"\\"):
        value.substitutions = tuple(find_substitutions(body))
        value.kinds = _body_kinds(body, data, home) | ({"variable"} if referenced(text) else set())
    return RawRedirect(op, value, node.start_byte, node.end_byte)


def _body_kinds(body: Node, data: bytes, home: str) -> frozenset[str]:
    """What makes an unquoted heredoc body run code when Bash expands it.

    tree-sitter leaves a `<<-` body as plain text: any `$` or backtick in it
    is then unanalysed.  Otherwise backticks, arithmetic and `${x@P}` are.
    """
    text = data[body.start_byte:body.end_byte].decode("utf-8", "replace")
    if not body.named_children:
        return frozenset({"unparsed"}) if "$" in text or "`" in text else frozenset()
    kinds: set[str] = set()
    for child in body.named_children:
        if child.type == "heredoc_content" and "`" in data[child.start_byte:child.end_byte].decode("utf-8", "replace"):
            kinds.add("unparsed")
        elif child.type in ("expansion", "arithmetic_expansion"):
            kinds |= evaluate(child, data, home).kinds & CODE_KINDS
    return frozenset(kinds)


def classify(redirect: RawRedirect) -> str:
    """'write' (opens a file for writing), 'read', 'dynamic-write', or 'none' (dup, close, heredoc, device)."""
    op = redirect.op.lstrip("0123456789")
    target = redirect.target
    if op in ("<<", "<<-", "<<<") or target is None:
        return "none"
    if op in (">&", "<&") and (target.text.isdigit() or target.text == "-"):
        return "none"
    writes = op in WRITE_OPS or op == ">&"
    if target.dynamic:
        return "dynamic-write" if writes else "read"
    if not writes:
        return "read"
    return "none" if is_device(target.text) else "write"
