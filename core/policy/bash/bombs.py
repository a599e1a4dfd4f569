"""Fork bombs: functions that call themselves in a new process.

`:(){ :|:& };:` defines a function `:` whose body runs two copies of
itself in a pipeline, in the background: every call starts two more
processes, and the machine stalls within seconds.  Word by word it is
harmless (`:` is the shell's no-op), so the bomb is found from the shape of
the script instead: a function that reaches itself again (directly or
through other functions of the same script) through a call that forks (a
pipeline stage, `&`, a subshell, a command or process substitution).
Recursion that does not fork only grows one shell's stack, which Bash
ends by itself; it is left to the other checks.

The sandbox's process limit (`core.process.limits`) contains a bomb the
analysis misses (one hidden in a script file, say); this check says why
before anything starts.
"""

from __future__ import annotations

from tree_sitter import Node

_FORKING = frozenset({"subshell", "command_substitution", "process_substitution"})


def forking_recursions(root: Node, data: bytes) -> set[str]:
    """The names of the functions defined in `root` that call themselves again in a new process."""
    calls: dict[str, list[tuple[str, bool]]] = {}
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type == "function_definition":
            name = node.child_by_field_name("name")
            body = node.child_by_field_name("body")
            if name is not None and body is not None:
                calls.setdefault(_text(name, data), []).extend(_calls(body, data))
        stack.extend(node.named_children)
    bombs: set[str] = set()
    for caller, edges in calls.items():
        for callee, forked in edges:
            if forked and callee in calls and _reaches(calls, callee, caller):
                bombs |= {caller, callee}
    return bombs


def _calls(body: Node, data: bytes) -> list[tuple[str, bool]]:
    """Each command name called in a function body, and whether the call runs in a new process."""
    found: list[tuple[str, bool]] = []
    stack: list[tuple[Node, bool]] = [(body, False)]
    while stack:
        node, forked = stack.pop()
        forked = forked or node.type in _FORKING or _backgrounded(node) or _a_stage(node)
        if node.type == "command":
            name = node.child_by_field_name("name")
            if name is not None:
                found.append((_text(name, data), forked))
        if node.type != "function_definition":  # a nested definition is collected on its own
            stack.extend((child, forked) for child in node.named_children)
    return found


def _backgrounded(node: Node) -> bool:
    sibling = node.next_sibling
    return sibling is not None and sibling.type == "&"


def _a_stage(node: Node) -> bool:
    parent = node.parent
    return parent is not None and parent.type == "pipeline" and parent.named_child_count > 1


def _reaches(calls: dict[str, list[tuple[str, bool]]], start: str, goal: str) -> bool:
    """Whether a call of `start` may call `goal` (through any chain of the script's functions)."""
    seen = {start}
    todo = [start]
    while todo:
        name = todo.pop()
        if name == goal:
            return True
        for callee, _ in calls.get(name, ()):
            if callee in calls and callee not in seen:
                seen.add(callee)
                todo.append(callee)
    return False


def _text(node: Node, data: bytes) -> str:
    return data[node.start_byte:node.end_byte].decode("utf-8", "replace")
