"""`analyse`: a Bash command line in, every simple command judged and a display tree out.

Nothing is capped: a chain of ten thousand commands is analysed to the
last one, because a cap that falls back to "ask" lets a deny rule be
outrun.  Strings that Bash runs as code (`bash -c`, `eval`, `trap`) and
commands a wrapper runs (`timeout`, `xargs`, `find -exec`) are parsed and
judged too, through one work queue rather than recursion.
"""

from __future__ import annotations

import os
from collections import deque
from pathlib import Path

from core.models.bash import LEVELS, BashAnalysis, Impact, Level
from core.policy.bash.chars import hidden_character
from core.policy.bash.findings import FLAG_OF, RANK, Env, Judgement
from core.policy.bash.judge import judge
from core.policy.bash.nodes import Context, Cwd, RawCommand, RawRedirect
from core.policy.bash.redirects import classify
from core.policy.bash.walk import Walker
from core.policy.bash.words import WordValue

MAX_IMPACT_REASONS = 12
MAX_TEXT = 2000
"""Longest command text or computed word kept in a `SimpleCommand` (see `_cut`)."""


def analyse(command: str, workspace: str | os.PathLike[str], home: str | None = None) -> BashAnalysis:
    """Parses and judges `command` as run by `bash -c` in the workspace root."""
    home = os.path.normpath(home or os.path.expanduser("~"))
    hidden = hidden_character(command)
    if hidden is not None:
        return BashAnalysis(command=command, workspace=os.path.realpath(workspace), hidden_character=hidden,
                            verdict_hint="deny", reason=hidden,
                            impact=Impact(level="high", reasons=(hidden,)))
    root = Path(os.path.realpath(workspace))
    walker = Walker(home)
    walker.add_source(command, None, None, Cwd(root))
    queue = deque(walker.run())
    commands: list[dict[str, object]] = []
    impacts: list[tuple[Level, str]] = []
    while queue:
        raw = queue.popleft()
        j = judge(raw, Env(root, home, raw.cwd_before))
        _bomb(walker, raw, j)
        commands.append(_simple(raw, j))
        impacts += _impact_of(j, raw)
        _flag(walker, raw, j)
        queue.extend(_inner(walker, raw, j))
    return _result(command, str(root), walker, commands, impacts)


def _bomb(walker: Walker, raw: RawCommand, j: Judgement) -> None:
    """A call of a function that calls itself in a new process is denied, whatever its name means alone."""
    name = raw.words[0] if raw.words else None
    if name is None or name.dynamic or name.text not in walker.bombs:
        return
    why = (f"{name.text} is a function that calls itself again in a new process (through a pipeline, `&`, a "
           "subshell or a substitution): a fork bomb, which starts processes until the machine stalls")
    j.raise_to("deny", why, name)
    j.hurt("high", why)


def _inner(walker: Walker, raw: RawCommand, j: Judgement) -> list[RawCommand]:
    """Commands run by a wrapper, and the commands in strings run as code, as new raw commands."""
    found: list[RawCommand] = []
    ctx = Context(raw.context, 1, None) if raw.context else None
    for label, words in j.inner:
        start, end = raw.src.span or (words[0].start, words[-1].end)
        text = " ".join(w.source for w in words)
        node = walker.display.add("command", raw.src, None, raw.node, start, end, text)
        found.append(RawCommand(words=list(words), start=start, end=end, text=text, node=node, src=raw.src,
                                context=Context.render(Context.push(ctx, f"run by {label}")),
                                cwd_before=raw.cwd_before, word_nodes=dict(raw.word_nodes)))
    for label, word in j.code:
        parent = _word_node(walker, raw, word)
        span = raw.src.span or (word.start, word.end)
        walker.add_source(word.text, parent, Context.push(ctx, f"run by {label}"), Cwd(raw.cwd_before), span)
        found += walker.run()
    return found


def _simple(raw: RawCommand, j: Judgement) -> dict[str, object]:
    """`SimpleCommand` fields; the whole analysis is validated at once at the end."""
    argv_words = raw.words[len(j.wrappers):]
    return dict(argv=tuple(_cut(w.text) if w.dynamic else w.text for w in argv_words),
                dynamic=tuple(i for i, w in enumerate(argv_words) if w.dynamic or (i == 0 and w.glob)),
                wrappers=tuple(w.text for w in j.wrappers),
                assignments=tuple(f"{name}={value.source}" for name, value in raw.assignments),
                redirects=tuple(_redirect(r) for r in raw.redirects),
                text=_cut(raw.text), start=raw.start, end=raw.end, context=raw.context, effect=j.effect, why=j.why,
                writes=tuple(j.writes), reads=tuple(j.reads), protected=j.protected, node=raw.node,
                beyond_files=j.beyond_files)


def _cut(text: str) -> str:
    """Text kept in the result; the offsets still say where the whole of it is.

    A command nested ten thousand `$(` deep holds all its inner commands in
    its text: kept whole, the result would grow with the square of the line.
    """
    return text if len(text) <= MAX_TEXT else text[:MAX_TEXT - 1] + "…"


def _redirect(r: RawRedirect) -> dict[str, object]:
    target = r.target
    return dict(op=r.op, target=target.text if target is not None else "",
                dynamic=bool(target is not None and target.dynamic),
                writes_file=classify(r) in ("write", "dynamic-write"), start=r.start, end=r.end)


def _flag(walker: Walker, raw: RawCommand, j: Judgement) -> None:
    flag = FLAG_OF[j.effect] if j.protected is None or j.effect == "deny" else "ask"
    why = j.why if j.protected is None or j.effect == "deny" else j.protected
    walker.display.flag(raw.node, flag, why)
    for word, word_flag, reason in j.marks:
        walker.display.flag(_word_node(walker, raw, word), word_flag, reason)


def _word_node(walker: Walker, raw: RawCommand, word: WordValue) -> int:
    """The display node of a word of `raw`; the command's own node for a word derived from one."""
    values = list(raw.words) + [v for _, v in raw.assignments] + [r.target for r in raw.redirects if r.target]
    if any(v is word for v in values):
        return walker.word_node(raw, word)
    return raw.node


def _impact_of(j: Judgement, raw: RawCommand) -> list[tuple[Level, str]]:
    found = list(j.impact)
    if j.protected is not None:
        found.append(("high", f"writes a protected path: {j.protected}"))
    if j.effect == "edit" and not found:
        found.append(("medium", f"writes in the workspace: {raw.text[:120]}"))
    if j.effect in ("run", "ask") and not found:
        found.append(("medium", j.why))
    return found


def _result(command: str, workspace: str, walker: Walker, commands: list[dict[str, object]],
            impacts: list[tuple[Level, str]]) -> BashAnalysis:
    worst = max(commands, key=lambda c: (RANK[str(c["effect"])], c["protected"] is not None), default=None)
    if worst is not None and worst["effect"] == "deny":
        hint, reason = "deny", worst["why"]
    elif walker.errors:
        hint, reason = "ask", walker.errors[0]
    elif worst is not None and worst["protected"] is not None:
        hint, reason = "ask", worst["protected"]
    elif worst is not None and worst["effect"] != "read":
        hint, reason = "ask", worst["why"]
    else:
        hint, reason = "allow", "only reads" if len(commands) < 2 else f"all {len(commands)} commands only read"
    return BashAnalysis.model_validate(dict(
        command=command, workspace=workspace, nodes=walker.display.build(), commands=commands, verdict_hint=hint,
        reason=reason,
        syntax_error=walker.errors[0] if walker.errors else None, impact=_summarise(impacts)))


def _summarise(impacts: list[tuple[Level, str]]) -> Impact:
    if not impacts:
        return Impact(level="low", reasons=("only reads",))
    ordered = sorted(dict.fromkeys(impacts), key=lambda item: -LEVELS.index(item[0]))
    reasons = [reason for _, reason in ordered[:MAX_IMPACT_REASONS]]
    if len(ordered) > MAX_IMPACT_REASONS:
        reasons.append(f"and {len(ordered) - MAX_IMPACT_REASONS} more")
    return Impact(level=ordered[0][0], reasons=tuple(reasons))
