"""What one simple command does, as the judge works it out, and where its paths lead.

A `Judgement` only ever gets more severe (read < edit < run < ask < deny):
each finding raises it and the first reason at the final level is the one
shown.  Paths are resolved against the tracked working directory with
symlinks followed, and compared with `os.path.commonpath`, never a prefix.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from core.protected import protected_reason, secret_reason
from core.shell.models import Effect, Flag, Level
from core.shell.words import WordValue, is_device

RANK: dict[str, int] = {"read": 0, "edit": 1, "run": 2, "ask": 3, "deny": 4}
FLAG_OF: dict[str, Flag] = {"read": "ok", "edit": "ask", "run": "ask", "ask": "ask", "deny": "deny"}
_GLOB_CHARS = frozenset("*?[")


@dataclass(frozen=True)
class Env:
    """What the judge needs to know about where the command runs."""

    workspace: Path
    """The workspace root, real path."""
    home: str
    cwd: Path | None
    """The working directory when the command starts (None: unknown after `cd $X`)."""

    def inside(self, path: str | os.PathLike[str]) -> bool:
        root = str(self.workspace)
        return os.path.commonpath([root, os.fspath(path)]) == root


@dataclass
class Judgement:
    effect: Effect = "read"
    why: str = "only reads"
    writes: list[str] = field(default_factory=list)
    reads: list[str] = field(default_factory=list)
    protected: str | None = None
    impact: list[tuple[Level, str]] = field(default_factory=list)
    marks: list[tuple[WordValue, Flag, str]] = field(default_factory=list)
    inner: list[tuple[str, list[WordValue]]] = field(default_factory=list)
    """Commands a wrapper runs, given as words: (label, words)."""
    code: list[tuple[str, WordValue]] = field(default_factory=list)
    """Words whose text Bash runs as code (`bash -c`, `eval`, `trap`): (label, word)."""
    wrappers: list[WordValue] = field(default_factory=list)

    def raise_to(self, effect: Effect, why: str, word: WordValue | None = None) -> None:
        """Makes the command at least `effect`; keeps the earlier reason when it is as severe."""
        if RANK[effect] > RANK[self.effect]:
            self.effect, self.why = effect, why
        if word is not None and effect != "read":
            self.marks.append((word, FLAG_OF[effect], why))

    def hurt(self, level: Level, reason: str) -> None:
        self.impact.append((level, reason))


def resolve(text: str, env: Env, follow: bool = True) -> Path | None:
    """The real path a static word names, or None when it cannot be known before the command runs."""
    if not text.startswith("/") and env.cwd is None:
        return None
    raw = Path(text) if text.startswith("/") else env.cwd / text  # type: ignore[operator]
    if not any(c in _GLOB_CHARS for c in text):
        return Path(os.path.realpath(raw)) if follow else Path(os.path.normpath(raw))
    parts = raw.parts
    first = next(i for i, p in enumerate(parts) if any(c in _GLOB_CHARS for c in p))
    if parts[first].startswith(".") or ".." in parts[first + 1:]:
        return None  # `.*` can match `..`: the pattern may climb out
    return Path(os.path.realpath(Path(*parts[:first]))) / Path(*parts[first:])


def write_target(word: WordValue, env: Env, judgement: Judgement, verb: str, command: str) -> None:
    """Judges one path a command writes (verb "writes") or deletes (verb "deletes")."""
    if word.dynamic:
        judgement.raise_to("ask", f"{command} {verb} a path only known at run time ({word.source})", word)
        return
    if is_device(word.text):
        return
    path = resolve(word.text, env)
    if path is None:
        judgement.raise_to("ask", f"{command} {verb} {word.source}, which cannot be placed before it runs", word)
        return
    if not env.inside(path):
        judgement.raise_to("deny", f"{command} {verb} outside the workspace ({path})", word)
        judgement.hurt("high", f"{verb} outside the workspace: {path}")
        return
    judgement.writes.append(str(path))
    reason = protected_reason(path)
    if reason is not None and judgement.protected is None:
        judgement.protected = reason
        judgement.marks.append((word, "ask", reason))
    if verb == "deletes" and path == env.workspace:
        judgement.raise_to("ask", f"{command} deletes the whole workspace", word)
    judgement.raise_to("edit", f"{command} {verb} {path} in the workspace", word)


def read_target(word: WordValue, env: Env, judgement: Judgement, command: str) -> None:
    """Judges a path-like word a read-only command may read: secrets are refused, outside asks."""
    for text in _path_texts(word):
        if is_device(text):
            continue
        path = resolve(text, env)
        if path is None:
            continue
        reason = secret_reason(path, env.home) or secret_reason(os.path.normpath(text), env.home)
        if reason is not None:
            judgement.raise_to("deny", f"{command} reads a secret: {reason}", word)
        elif not env.inside(path):
            judgement.raise_to("run", f"{command} reads {path}, outside the workspace", word)
        else:
            judgement.reads.append(str(path))


def _path_texts(word: WordValue) -> list[str]:
    """The parts of a static word that name a path: the word, or an option's `=value`."""
    if word.dynamic:
        return []
    text = word.text
    if text.startswith("-"):
        _, eq, value = text.partition("=")
        return [value] if eq and value else []
    return [text]
