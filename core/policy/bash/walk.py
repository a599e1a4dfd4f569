"""Walking a Bash syntax tree to every simple command that would run, without recursion.

Commands are found wherever Bash would run them: lists, pipelines, subshells,
if/while/for/case bodies, functions, command and process substitutions
(also inside strings and heredoc bodies).  The walk keeps an explicit stack,
so a ten-thousand-command chain or a deeply nested substitution costs memory,
never Python stack.  Lists, pipelines and their redirections are regrouped
the way Bash groups them (`core.policy.bash.regroup`: tree-sitter hangs `> f` in
`cd .. && echo x > f` on the whole list).  It also tracks the working
directory through static `cd`s, scoped the way Bash scopes it (a subshell's
or pipeline stage's `cd` stays inside it; a `cd` that may fail makes it unknown).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import tree_sitter_bash
from tree_sitter import Language, Node, Parser

from core.policy.bash.bombs import forking_recursions
from core.policy.bash.environment import harmless_names
from core.policy.bash.moves import CONDITIONAL, kids, moving
from core.policy.bash.nodes import Context, Cwd, Display, RawCommand, Source
from core.policy.bash.redirects import collect
from core.policy.bash.regroup import GROUPED, Stage, regroup
from core.policy.bash.synthetic import assignment, build
from core.policy.bash.words import WordValue, adjoining, evaluate, evaluate_all

_LANGUAGE = Language(tree_sitter_bash.language())
_CONTAINERS = {"subshell": "subshell", "if_statement": "if", "elif_clause": "elif", "else_clause": "else",
               "case_statement": "case", "case_item": "case item", "do_group": "",
               "command_substitution": "command substitution", "process_substitution": "process substitution",
               "program": "", "ERROR": "unparsed"}
_SCOPED = {"subshell", "command_substitution", "process_substitution"}


@dataclass
class _Item:
    node: Node
    parent: int
    ctx: Context | None
    cwd: Cwd
    src: Source
    piped: bool = False
    backticks: bool = False
    redirects: list[Node] = field(default_factory=list)
    """Redirections that belong to this node although tree-sitter hung them on an enclosing one."""
    stages: list[Stage] | None = None
    """Set on a pipeline rebuilt by `regroup`: its stages, walked (and given their cwd) when it is reached."""
    forget: bool = False
    """A marker, not a node: the shell may or may not have changed directory by here (see `core.policy.bash.moves`)."""
    entered: bool = False
    """A conditional compound whose directory bookkeeping is done: walk it as usual."""


class Walker:
    """Collects simple commands and display nodes from one or more sources (the line, `bash -c` strings)."""

    def __init__(self, home: str) -> None:
        self.home = home
        self.display = Display()
        self.commands: list[RawCommand] = []
        self.errors: list[str] = []
        self.bombs: set[str] = set()
        """Functions defined by any source walked that call themselves in a new process (fork bombs)."""
        self._stack: list[_Item] = []
        self._parser = Parser(_LANGUAGE)

    def add_source(self, text: str, parent: int | None, ctx: Context | None, cwd: Cwd,
                   span: tuple[int, int] | None = None) -> None:
        """Parses `text` and queues its statements; `span` places nested text inside the outer line."""
        data = text.encode("utf-8", "surrogatepass")
        root = self._parser.parse(data).root_node
        src = Source(data, span, moving(root, data), harmless_names(root, data))
        if parent is None:
            parent = self.display.add("script", src, root, None)
        if root.has_error:
            self.errors.append(_syntax_error(root, data, ctx))
        self.bombs |= forking_recursions(root, data)
        self._push_children(root, _Item(root, parent, ctx, cwd, src))

    def run(self) -> list[RawCommand]:
        """Walks everything queued; returns the commands found by this run, in execution order."""
        first = len(self.commands)
        while self._stack:
            item = self._stack.pop()
            if item.forget:
                item.cwd.path = None
            elif item.node.type in CONDITIONAL and not item.entered:
                self._conditional(item)
            else:
                self._visit(item)
        return self.commands[first:]

    def _push(self, items: list[_Item]) -> None:
        self._stack.extend(reversed(items))

    def _child(self, item: _Item, node: Node, parent: int, ctx: Context | None, *, cwd: Cwd | None = None,
               piped: bool = False, backticks: bool = False, redirects: list[Node] | None = None,
               stages: list[Stage] | None = None) -> _Item:
        """An item below `item`: its source, and its working directory unless given `cwd`."""
        return _Item(node, parent, ctx, item.cwd if cwd is None else cwd, item.src, piped, backticks,
                     [] if redirects is None else redirects, stages)

    def _push_children(self, node: Node, item: _Item, parent: int | None = None, ctx: Context | None = None,
                       scoped: bool = False) -> None:
        parent = item.parent if parent is None else parent
        ctx = item.ctx if ctx is None else ctx
        cwd = item.cwd.copy() if scoped else item.cwd
        self._push([_Item(c, parent, ctx, cwd.copy() if background else cwd, item.src, backticks=item.backticks)
                    for c, background in kids(node)])

    def _visit(self, item: _Item) -> None:
        t = item.node.type
        if item.stages is not None:
            self._pipeline(item, item.stages)
        elif t == "redirected_statement" and item.node.child_by_field_name("body") is None:
            self._redirected(item, None, item.node.children_by_field_name("redirect") + item.redirects)
        elif item.redirects and t != "command":
            self._redirected(item, item.node, item.redirects)
        elif t in GROUPED:
            self._statement(item)
        elif t == "command":
            self._command(item)
        elif t in ("variable_assignment", "variable_assignments", "declaration_command", "unset_command",
                   "test_command", "for_statement", "c_style_for_statement"):
            self._synthetic(item)
        elif t == "compound_statement":
            self._compound(item)
        elif t in ("while_statement", "function_definition"):
            self._labelled(item, _label(item.node, item.src))
        elif t in _CONTAINERS:
            self._container(item, _CONTAINERS[t])
        elif t in ("word", "string", "concatenation", "simple_expansion", "expansion", "raw_string",
                   "extglob_pattern", "number"):
            self._push_substitutions(item, [evaluate(item.node, item.src.data, self.home, item.backticks)],
                                     item.parent)
        else:
            self.errors.append(f"Belay does not analyse this construct ({t}): "
                               f"{item.src.text(item.node)[:60]!r}")
            self._push_children(item.node, item)

    def _container(self, item: _Item, label: str) -> None:
        node = item.node
        if not label:
            self._push_children(node, item)
            return
        index = self.display.add(label, item.src, node, item.parent)
        ticks = node.type == "command_substitution" and bool(node.children) and node.children[0].type == "`"
        ctx = Context.push(item.ctx, label)
        cwd = item.cwd.copy() if node.type in _SCOPED else item.cwd
        self._push([_Item(c, index, ctx, cwd.copy() if background else cwd, item.src,
                          backticks=ticks or item.backticks) for c, background in kids(node)])

    def _conditional(self, item: _Item) -> None:
        """A compound that may run its parts once, often or never: a `cd` in it leaves the directory unknown.

        A function's body runs when it is called, from wherever the shell is
        then: it is walked in a copy of the directory, unknown when the
        script moves anywhere.
        """
        entered = _Item(**{**item.__dict__, "entered": True})
        body_moves = item.src.moves(item.node)
        if item.node.type == "function_definition":
            entered.cwd = Cwd(None if item.src.moves() else item.cwd.path)
            self._push([entered] + ([self._forget(item)] if body_moves else []))
        elif body_moves:
            self._push([self._forget(item), entered, self._forget(item)])
        else:
            self._push([entered])

    @staticmethod
    def _forget(item: _Item) -> _Item:
        return _Item(item.node, item.parent, item.ctx, item.cwd, item.src, forget=True)

    def _labelled(self, item: _Item, label: str) -> None:
        index = self.display.add(label, item.src, item.node, item.parent)
        self._push_children(item.node, item, index, Context.push(item.ctx, label.split(" ")[0]))

    def _statement(self, item: _Item) -> None:
        """A list, pipeline or redirected statement, grouped as Bash groups it (see `core.policy.bash.regroup`)."""
        operands = regroup(item.node)
        if len(operands) == 1:
            self._push([self._operand(item, operands[0], item.parent, piped=item.piped)])
            return
        index = self.display.add("list", item.src, item.node, item.parent)
        pushed: list[_Item] = []
        moved = maybe = False
        for k, stages in enumerate(operands):
            if stages[0].after == "||" and moved:
                pushed.append(self._forget(item))  # runs when what came before failed, maybe its `cd` too
            pushed.append(self._operand(item, stages, index))
            here = len(stages) == 1 and item.src.moves(stages[0].node)
            moved, maybe = moved or here, maybe or (here and k > 0)
        if maybe:
            pushed.append(self._forget(item))  # a `cd` after `&&` or `||` may not have run
        self._push(pushed)

    def _operand(self, item: _Item, stages: list[Stage], parent: int, piped: bool = False) -> _Item:
        """One operand of a list; its working directory is the list's, shared (a pipeline copies it later)."""
        if len(stages) > 1:
            return self._child(item, stages[0].node, parent, item.ctx, backticks=item.backticks, stages=stages)
        return self._child(item, stages[0].node, parent, item.ctx, piped=piped, backticks=item.backticks,
                           redirects=stages[0].redirects)

    def _pipeline(self, item: _Item, stages: list[Stage]) -> None:
        index = self.display.add_range("pipeline", item.src, stages[0].node.start_byte, stages[-1].end, item.parent)
        ctx = Context.push(item.ctx, "pipeline")
        self._push([self._child(item, s.node, index, ctx, cwd=item.cwd.copy(), piped=i > 0, backticks=item.backticks,
                                redirects=s.redirects) for i, s in enumerate(stages)])

    def _compound(self, item: _Item) -> None:
        if item.node.children and item.node.children[0].type == "((":
            self._synthetic(item)
        else:
            self._labelled(item, "group")

    def _redirected(self, item: _Item, body: Node | None, redirects: list[Node]) -> None:
        """Redirections of a compound (or of nothing): opened before its body runs, in the current directory."""
        self._emit(item, RawCommand(keyword="redirect", piped=item.piped), redirects)
        if body is not None:
            self._push([self._child(item, body, item.parent, item.ctx, piped=item.piped, backticks=item.backticks)])

    def _command(self, item: _Item) -> None:
        raw = RawCommand(piped=item.piped)
        redirects = list(item.redirects)
        words: list[Node] = []
        for i, child in enumerate(item.node.children):
            field_name = item.node.field_name_for_child(i)
            if child.type == "variable_assignment":
                raw.assignments.append(assignment(child, item.src.data, self.home, item.backticks))
            elif field_name == "name":
                words.append(child.named_children[0] if child.named_children else child)
            elif field_name == "argument":
                words.append(child)
            elif field_name == "redirect" or child.type.endswith("redirect"):
                redirects.append(child)
        raw.words += [evaluate_all(word, item.src.data, self.home, item.backticks) for word in adjoining(words)]
        self._emit(item, raw, redirects)

    def _synthetic(self, item: _Item) -> None:
        raw, bodies = build(item.node, item.src.data, self.home, item.backticks)
        raw.piped = item.piped
        index = self._emit(item, raw, [])
        label = raw.keyword or ""
        ctx = Context.push(item.ctx, label) if label in ("for", "select", "((") else item.ctx
        self._push([self._child(item, b, index if label != "redirect" else item.parent, ctx) for b in bodies])

    def _emit(self, item: _Item, raw: RawCommand, redirect_nodes: list[Node]) -> int:
        """Records a command with its redirects, display nodes, cwd, and queues what runs inside it."""
        statements: list[Node] = []
        if redirect_nodes:
            redirects, extra_words, statements = collect(redirect_nodes, item.src.data, self.home, item.backticks)
            raw.words.extend(extra_words)
            raw.redirects.extend(redirects)
        first = item.node.start_byte
        last = max([item.node.end_byte] + [r.end_byte for r in item.redirects])
        raw.start, raw.end = item.src.place(first, last)
        raw.text = item.src.data[first:last].decode("utf-8", "replace")
        raw.context = Context.render(item.ctx)
        raw.cwd_before = item.cwd.path
        raw.src = item.src
        raw.node = self.display.add_range("command", item.src, first, last, item.parent)
        self.commands.append(raw)
        self._queue_inside(item, raw)
        item.cwd.follow(raw, self.home)
        if statements:
            self._push([self._child(item, s, item.parent, item.ctx, backticks=item.backticks) for s in statements])
        return raw.node

    def _queue_inside(self, item: _Item, raw: RawCommand) -> None:
        """Queues the substitutions in its words, each under a display node for its word."""
        values = raw.words
        if raw.assignments or raw.redirects:
            values = values + [v for _, v in raw.assignments] + [r.target for r in raw.redirects if r.target]
        for value in values:
            if value.substitutions:
                self._push_substitutions(item, [value], self.word_node(raw, value))

    def word_node(self, raw: RawCommand, value: WordValue) -> int:
        """The display node of one word of `raw`, made the first time it is needed."""
        index = raw.word_nodes.get(id(value))
        if index is None:
            index = self.display.add("word", raw.src, None, raw.node, value.start, value.end, value.source)
            raw.word_nodes[id(value)] = index
        return index

    def _push_substitutions(self, item: _Item, values: list[WordValue], parent: int) -> None:
        subs = [s for v in values for s in v.substitutions]
        self._push([self._child(item, s, parent, item.ctx, cwd=item.cwd.copy(), backticks=item.backticks)
                    for s in subs])


def _label(node: Node, src: Source) -> str:
    if node.type == "while_statement":
        return "until" if node.children and node.children[0].type == "until" else "while"
    name = node.child_by_field_name("name")
    return f"function {src.text(name)}" if name is not None else "function"


def _syntax_error(root: Node, data: bytes, ctx: Context | None) -> str:
    stack = [root]
    while stack:
        n = stack.pop()
        if n.is_error or n.is_missing:
            line = data[:n.start_byte].count(b"\n") + 1
            what = f"expected {n.type!r}" if n.is_missing else \
                f"unexpected {data[n.start_byte:n.end_byte][:40].decode('utf-8', 'replace')!r}"
            where = f" in the text run by {Context.render(ctx)}" if ctx is not None else ""
            return f"Bash syntax Belay cannot parse{where}: {what} at line {line}"
        stack.extend(reversed(n.children))
    return "Bash syntax Belay cannot parse"
