"""What one simple command does, as the judge works it out, and where its paths lead.

A `Judgement` only ever gets more severe (read < edit < run < ask < deny):
each finding raises it and the first reason at the final level is the one
shown.  Paths are resolved against the tracked working directory with
symlinks followed, and compared with `os.path.commonpath`, never a prefix.
"""

from __future__ import annotations

import glob
import os
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path

from core.models.bash import Effect, Flag, Level
from core.paths import settled_realpath
from core.policy.bash.words import WordValue, brace_words, is_device
from core.policy.protected import proc_secret, protected_reason, secret_reason

RANK: dict[str, int] = {"read": 0, "edit": 1, "run": 2, "ask": 3, "deny": 4}
FLAG_OF: dict[str, Flag] = {"read": "ok", "edit": "ask", "run": "ask", "ask": "ask", "deny": "deny"}
_GLOB_CHARS = frozenset("*?[")
MAX_MATCHES = 2000
"""A pattern matching more files than this is not checked file by file: it asks."""


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
    beyond_files: bool = False
    """It needs a rule for more than reading a known path outside the workspace (see `SimpleCommand`)."""

    def raise_to(self, effect: Effect, why: str, word: WordValue | None = None, files: bool = False) -> None:
        """Makes the command at least `effect`; keeps the earlier reason when it is as severe.

        `files` marks a "run" that only reads a known path outside the
        workspace, which a `Read(...)` rule may allow; any other "run" needs a
        Bash rule or a person.
        """
        if effect == "run" and not files:
            self.beyond_files = True
        if RANK[effect] > RANK[self.effect]:
            self.effect, self.why = effect, why
        if word is not None and effect != "read":
            self.marks.append((word, FLAG_OF[effect], why))

    def hurt(self, level: Level, reason: str) -> None:
        self.impact.append((level, reason))


def resolve(text: str, env: Env, follow: bool = True) -> Path | None:
    """The real path a static word names, or None when it cannot be known before the command runs."""
    if text.startswith("/"):
        raw = Path(text)
    elif env.cwd is None:
        return None
    else:
        raw = env.cwd / text
    if not any(c in _GLOB_CHARS for c in text):
        return _real(raw) if follow else Path(os.path.normpath(raw))
    parts = raw.parts
    first = next(i for i, p in enumerate(parts) if any(c in _GLOB_CHARS for c in p))
    if parts[first].startswith(".") or ".." in parts[first + 1:]:
        return None  # `.*` can match `..`: the pattern may climb out
    base = _real(Path(*parts[:first]))
    return None if base is None else base / Path(*parts[first:])


def _real(path: Path | str) -> Path | None:
    """Where `path` leads, or None when a link on the way vanished while it was followed."""
    real = settled_realpath(path)
    return Path(real) if real is not None else None


def places(text: str, env: Env) -> list[Path] | None:
    """The real paths a static word may name: the path, or for a pattern, the pattern and what it matches now.

    A pattern is expanded because a match may be a symlink out of the
    workspace (`cat *` with `link -> ~/.ssh/id_rsa` among the files); one
    matching too many files to check cannot be placed, nor can a literal `~`
    (quoted, or in `--opt=~/x`), which Bash leaves alone but which some
    programs expand to the home folder themselves.
    """
    if text.startswith("~"):
        return None
    path = resolve(text, env)
    if path is None or not any(c in _GLOB_CHARS for c in text):
        return None if path is None else [path]
    matches = list(islice(glob.iglob(str(path)), MAX_MATCHES + 1))
    if len(matches) > MAX_MATCHES:
        return None
    real = [r for m in matches if (r := _real(m)) is not None]
    return [path, *real] if len(real) == len(matches) else None


def write_target(word: WordValue, env: Env, judgement: Judgement, verb: str, command: str) -> None:
    """Judges one path a command writes (verb "writes") or deletes (verb "deletes")."""
    if word.kinds == {"process"}:
        return  # a pipe into a command analysed on its own
    alternatives = brace_words(word, env.home)
    if alternatives is not None:
        for text in alternatives:
            write_target(WordValue(text, word.source, word.start, word.end), env, judgement, verb, command)
        return
    if word.dynamic:
        judgement.raise_to("ask", f"{command} {verb} a path only known at run time ({word.source})", word)
        return
    if is_device(word.text):
        return
    paths = places(word.text, env)
    if paths is None:
        judgement.raise_to("ask", f"{command} {verb} {word.source}, which cannot be placed before it runs", word)
        return
    outside = next((p for p in paths if not env.inside(p)), None)
    if outside is not None:
        judgement.raise_to("deny", f"{command} {verb} outside the workspace ({outside})", word)
        judgement.hurt("high", f"{verb} outside the workspace: {outside}")
        return
    for path in paths:
        _write_inside(path, word, env, judgement, verb, command)


def _write_inside(path: Path, word: WordValue, env: Env, judgement: Judgement, verb: str, command: str) -> None:
    judgement.writes.append(str(path))
    reason = protected_reason(path)
    if reason is not None and judgement.protected is None:
        judgement.protected = reason
        judgement.marks.append((word, "ask", reason))
    if verb == "deletes" and path in (env.workspace, env.workspace / "*"):
        judgement.raise_to("ask", f"{command} deletes the whole workspace", word)
    judgement.raise_to("edit", f"{command} {verb} {path} in the workspace", word)


def read_target(word: WordValue, env: Env, judgement: Judgement, command: str) -> None:
    """Judges a path-like word a read-only command may read: secrets are refused, outside asks.

    A path that cannot be placed (computed at run time, or relative to a
    directory that is unknown) needs a person too: `X=~/.ssh/id_rsa; cat $X`
    reads a secret as surely as `cat ~/.ssh/id_rsa`.
    """
    if word.kinds == {"process"}:
        return  # a pipe from a command analysed on its own
    alternatives = brace_words(word, env.home)
    if alternatives is not None:
        for text in alternatives:
            read_target(WordValue(text, word.source, word.start, word.end), env, judgement, command)
        return
    if word.dynamic:
        reason = _unresolved_secret(word, env)
        if reason is not None:
            _secret_read(reason, word, judgement, command)
            return
        judgement.raise_to("run", f"{command} reads {word.source}, a path only known at run time ({word.why()})",
                           word)
        return
    for text in _path_texts(word):
        if is_device(text):
            continue
        paths = places(text, env)
        if paths is None:
            judgement.raise_to("run", f"{command} reads {text}, which cannot be placed before it runs", word)
            continue
        for path in paths:
            _read_one(path, text, word, env, judgement, command)


def _read_one(path: Path, text: str, word: WordValue, env: Env, judgement: Judgement, command: str) -> None:
    reason = secret_reason(path, env.home) or secret_reason(os.path.normpath(text), env.home)
    judgement.reads.append(str(path))
    if reason is not None:
        _secret_read(reason, word, judgement, command)
    elif not env.inside(path):
        judgement.raise_to("run", f"{command} reads {path}, outside the workspace", word, files=True)


def _secret_read(reason: str, word: WordValue, judgement: Judgement, command: str) -> None:
    judgement.raise_to("deny", f"{command} reads a secret: {reason}", word)
    judgement.hurt("high", f"reads a secret: {reason}")


def _unresolved_secret(word: WordValue, env: Env) -> str | None:
    """Why a path only known at run time is a secret whatever its run-time parts turn out to be, or None:
    `/proc/$PPID/environ` is some process's environment, `~/.ssh/$KEY` lies in a credential store."""
    pattern = _placed(word.pattern, env)
    return secret_reason(pattern, env.home, named=word.source) if pattern is not None else None


def _placed(pattern: str, env: Env) -> str | None:
    """A word's pattern as an absolute path, or None when it is no path or its directory is unknown."""
    if not pattern or pattern.startswith("-"):
        return None
    if not pattern.startswith("/"):
        return f"{env.cwd}/{pattern}" if env.cwd is not None else None
    return pattern


def process_secret(word: WordValue, env: Env, judgement: Judgement, command: str) -> None:
    """Denies a word that names a process's environment, memory or open files (`/proc/$PPID/environ`,
    `if=/proc/1/mem`, `@/proc/self/environ`), whatever program it is given to: `less`, `python3 x.py` or
    `curl -d @...` read it as surely as `cat`, and no program needs such a path for anything else."""
    pattern = word.pattern or ("" if word.dynamic else word.text)
    for text in (pattern, pattern.partition("=")[2], pattern[1:] if pattern.startswith("@") else ""):
        place = _placed(text, env)
        if place is not None and proc_secret(place):
            reason = secret_reason(place, env.home, named=word.source) or word.source
            _secret_read(reason, word, judgement, command)
            return


def _path_texts(word: WordValue) -> list[str]:
    """The parts of a static word that name a path: the word, or an option's `=value`."""
    if word.dynamic:
        return []
    text = word.text
    if text.startswith("-"):
        _, eq, value = text.partition("=")
        return [value] if eq and value else []
    return [text]


def read_list(word: WordValue | None, env: Env, judgement: Judgement, command: str) -> None:
    """A file that names the files a reader reads (`tar -T`, `file -f`, `wc --files0-from`, `md5sum -c`).

    The list itself is read (a secret is refused); the files it names are
    only known when the command runs, and any of them may be a secret, so
    the command needs a rule or a person.
    """
    if word is not None and word.text != "-":
        read_target(word, env, judgement, command)
    named = word.source if word is not None else "a list"
    judgement.raise_to("run", f"{command} reads the files named in {named}, which are only known when it runs",
                       word)
