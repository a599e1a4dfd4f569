"""Which workspace paths git would ignore: their changes are reported, their contents not stored.

Git's own rules, read the way git reads them: every `.gitignore` of the
workspace (patterns relative to its directory, a deeper file deciding before
a shallower one, the last matching line of a file winning, `!` re-including),
then `.git/info/exclude`, then Belay's own `extra` patterns.  A path inside an
excluded directory is excluded whatever follows, because git never looks
inside that directory (and so never reads the `.gitignore` files there).

pathspec translates each line to a regular expression (`GitIgnoreSpecPattern`);
the precedence is applied here, path by path, because pathspec's
`GitIgnoreSpec` lets a `!` re-include a file inside an excluded directory,
which git does not.  Its expressions also match everything under a matching
directory (the `ps_d` group marks where); parent directories are decided on
their own, so `_Rule.hits` counts only matches of the path itself.

Speed: `ignored` runs for every file of every walk.  What applies to a
directory (its chain of pattern files, deepest first, and whether it is
excluded) is worked out once and cached; in each file of the chain, the lines
are tried all at once by one combined expression (`_last_of`), so a file costs
about two microseconds.

Blocking (reads files at `load`): call it off the loop thread.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from pathspec.patterns.gitignore import GitIgnorePatternError
from pathspec.patterns.gitignore.spec import GitIgnoreSpecPattern

IGNORE_FILE = ".gitignore"
EXCLUDE_FILE = ".git/info/exclude"
MAX_IGNORE_FILE_BYTES = 1 << 20  # larger is not an ignore file anyone wrote by hand; skipped
_DIR_MARK = "ps_d"  # pathspec's group for "matched as a directory, the rest is inside it"
_ANY_DEPTH = "^(?:.+/)?"  # how pathspec starts a pattern that matches at any depth
_UNESCAPED_TRAILING_SPACES = re.compile(r"((?:\\.|[^\\])*?) *")  # git drops them; "\ " is a kept space


@dataclass(frozen=True, slots=True)
class _Rule:
    """One pattern line."""

    line: int  # of two lines of a file that match, the later wins
    regex: re.Pattern[str]
    ignores: bool  # False for a `!` line
    by_name: bool  # no "/" but a leading "**/" or a trailing one: git matches it against the last name only

    def hits(self, target: str, is_dir: bool) -> bool:
        """Whether the line matches the path itself (`target` ends in "/" for a directory), not just a parent."""
        m = self.regex.search(target)
        if m is None:
            return False
        if _DIR_MARK in self.regex.groupindex and m.group(_DIR_MARK) is not None:
            # The mark ends the match: at the very end it is the directory itself, earlier a parent.
            # The one unanchored marked expression ("/**/": any directory) is retried at the end.
            return m.end() == len(target) or (is_dir and self.regex.search(target, len(target) - 1) is not None)
        # Unmarked: "foo/**" is `^foo/`, matching what is inside foo but not the directory foo itself.
        return not is_dir or m.end() < len(target)


def _last_of(rules: Sequence[_Rule], strip: str = "") -> re.Pattern[str] | None:
    """One expression for several lines, whose match is named after the last line that matches.

    Alternatives are tried in order, so the last line comes first; all are anchored at the start (an
    unanchored one behind `.*?`); group names may not repeat, so the directory mark is dropped.
    """
    branches = []
    for rule in sorted(rules, key=lambda r: -r.line):
        body = rule.regex.pattern.replace(f"(?P<{_DIR_MARK}>", "(?:")
        body = "^" + body.removeprefix(strip) if strip and body.startswith(strip) else body
        branches.append(f"(?P<r{rule.line}>{body if body.startswith('^') else f'^.*?(?:{body})'})")
    return re.compile("|".join(branches)) if branches else None


class _PatternFile:
    """The rules of one ignore file, for paths under `base` ("" for the root).

    Most lines name no directory ("*.log", "node_modules/"); those are tried all at once on the last
    name of the path, and the few others, all at once on the whole path, then one by one only when one
    of them matches (it may match a parent directory only, which does not count).
    """

    def __init__(self, base: str, rules: Sequence[_Rule]) -> None:
        self.cut = len(base) + 1 if base else 0
        self.named = {f"r{rule.line}": rule for rule in rules}  # the group of its branch in `_last_of`
        self.by_path = sorted((r for r in rules if not r.by_name), key=lambda r: -r.line)
        self.last_by_name = _last_of([r for r in rules if r.by_name], strip=_ANY_DEPTH)
        self.any_by_path = _last_of(self.by_path)

    def verdict(self, rel: str, name: str, is_dir: bool) -> bool | None:
        """True (ignored), False (re-included by `!`) or None (no line of this file speaks of `rel`).

        `name` is the last name of `rel`, with a "/" after it for a directory.
        """
        found: _Rule | None = None
        if self.last_by_name is not None and (m := self.last_by_name.match(name)) and m.lastgroup:
            found = self.named[m.lastgroup]
        if self.any_by_path is not None:
            target = rel[self.cut:] + "/" if is_dir else rel[self.cut:]
            if self.any_by_path.match(target):
                floor = found.line if found is not None else -1
                found = next((r for r in self.by_path if r.line > floor and r.hits(target, is_dir)), found)
        return None if found is None else found.ignores


@dataclass(frozen=True, slots=True)
class _Dir:
    """What holds for the entries of one directory."""

    excluded: bool  # the directory or one of its parents is ignored: so is everything inside
    chain: tuple[_PatternFile, ...]  # the files that decide for its entries, first to speak wins


def _decide(chain: tuple[_PatternFile, ...], rel: str, is_dir: bool) -> bool:
    """The first file of the chain that speaks of the path decides; if none does, it is not ignored."""
    name = rel.rpartition("/")[2] + "/" if is_dir else rel.rpartition("/")[2]
    for patterns in chain:
        verdict = patterns.verdict(rel, name, is_dir)
        if verdict is not None:
            return verdict
    return False


def _pattern(line: str) -> str:
    """A line as pathspec should see it: without a CRLF's CR or git's trailing spaces, one fold undone."""
    line = line.removesuffix("\r")
    m = _UNESCAPED_TRAILING_SPACES.fullmatch(line)
    text = m.group(1) if m else line  # no match: it ends in a lone backslash, and git keeps it all
    # pathspec folds "foo/**/" into "foo/", which matches foo itself; git matches only directories inside it.
    return text + "*/" if text.endswith("/**/") else text


class IgnoreRules:
    """A workspace's ignore rules, as git applies them, answering per path."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.sources: tuple[str, ...] = ()  # the ignore files read, relative to the root, for display
        self.problems: tuple[str, ...] = ()  # files and lines skipped, and why, in words
        self._files: dict[str, _PatternFile] = {}  # directory -> its .gitignore
        self._tail: tuple[_PatternFile, ...] = ()  # info/exclude, then the extra patterns
        self._dirs: dict[str, _Dir] = {"": _Dir(False, ())}  # directory -> what holds inside it
        self._sources: list[str] = []
        self._problems: list[str] = []
        self._real_root = os.path.realpath(root)

    @classmethod
    def load(cls, root: Path, extra: Sequence[str] = ()) -> IgnoreRules:
        """The rules in force under `root` now; unreadable files are listed in `problems`, never raised."""
        rules = cls(root)
        tail = (rules._compile("", rules._read(EXCLUDE_FILE), EXCLUDE_FILE), rules._compile("", extra, "settings"))
        rules._tail = tuple(t for t in tail if t is not None)
        rules._walk()
        rules.sources, rules.problems = tuple(rules._sources), tuple(rules._problems)
        return rules

    def ignored(self, rel: str, is_dir: bool = False) -> bool:
        """Whether a "/"-separated workspace-relative path is ignored, itself or through a parent directory."""
        parent = rel.rpartition("/")[0]
        state = self._dirs.get(parent) or self._dir(parent)
        return state.excluded or _decide(state.chain, rel, is_dir)

    def prunes(self, rel_dir: str) -> bool:
        """Whether everything under this directory is ignored (a walk may skip asking per file)."""
        return bool(rel_dir) and (self._dirs.get(rel_dir) or self._dir(rel_dir)).excluded

    def reload_needed(self, rel_paths: Iterable[str]) -> bool:
        """Whether any of these changed paths is an ignore file, so the rules should be loaded again."""
        return any(p == EXCLUDE_FILE or p.rpartition("/")[2] == IGNORE_FILE for p in rel_paths)

    def _dir(self, rel_dir: str) -> _Dir:
        """The state of a directory, worked out from its nearest known parent down, and cached."""
        missing, known = [], rel_dir
        while known not in self._dirs:
            missing.append(known)
            known = known.rpartition("/")[0]
        for d in reversed(missing):
            parent = self._dirs[d.rpartition("/")[0]]
            excluded = parent.excluded or _decide(parent.chain, d, is_dir=True)
            own = self._files.get(d)  # never read for an excluded directory
            self._dirs[d] = _Dir(excluded, parent.chain if own is None else (own, *parent.chain))
        return self._dirs[rel_dir]

    def _walk(self) -> None:
        """Reads every .gitignore git would read: not in .git, not in excluded directories, no links followed."""
        stack = [""]
        while stack:
            rel_dir = stack.pop()
            try:
                with os.scandir(os.path.join(self.root, rel_dir)) as it:
                    entries = sorted((e.name, e.is_dir(follow_symlinks=False)) for e in it)
            except OSError as e:
                self._problems.append(f"{rel_dir or 'the workspace'}: not listed: {e.strerror}")
                entries = []
            if any(name == IGNORE_FILE for name, _ in entries):
                rel_file = f"{rel_dir}/{IGNORE_FILE}" if rel_dir else IGNORE_FILE
                own = self._compile(rel_dir, self._read(rel_file), rel_file)
                if own is not None:
                    self._files[rel_dir] = own
            if rel_dir:
                state = self._dir(rel_dir)
            else:  # the root's own file comes first, then the tail
                state = self._dirs[""] = _Dir(False, tuple(f for f in (self._files.get(""), *self._tail) if f))
            for name, is_dir in reversed(entries):
                child = f"{rel_dir}/{name}" if rel_dir else name
                if is_dir and name != ".git" and not _decide(state.chain, child, is_dir=True):
                    stack.append(child)

    def _read(self, rel_file: str) -> list[str] | None:
        """The lines of one ignore file, or None (and a problem when it exists but cannot be used)."""
        path = os.path.join(self.root, rel_file)
        if os.path.commonpath([self._real_root, os.path.realpath(os.path.dirname(path))]) != self._real_root:
            self._skip(rel_file, "it is outside the workspace")
            return None
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as e:
            link = e.errno == errno.ELOOP
            self._skip(rel_file, "it is a symbolic link (git does not follow it either)" if link else e.strerror)
            return None
        try:
            with os.fdopen(fd, "rb") as f:
                if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                    self._skip(rel_file, "it is not a regular file")
                    return None
                data = f.read(MAX_IGNORE_FILE_BYTES + 1)
        except OSError as e:
            self._skip(rel_file, e.strerror)
            return None
        if len(data) > MAX_IGNORE_FILE_BYTES:
            self._skip(rel_file, f"it is larger than {MAX_IGNORE_FILE_BYTES} bytes")
            return None
        try:
            text = data.decode("utf-8-sig")  # git skips a byte-order mark too
        except UnicodeDecodeError:
            self._skip(rel_file, "it is not UTF-8 text")
            return None
        self._sources.append(rel_file)
        return text.split("\n")  # git splits on LF only, then drops a CR before it

    def _skip(self, rel_file: str, why: str | None) -> None:
        self._problems.append(f"{rel_file}: not read: {why}")

    def _compile(self, base: str, lines: Sequence[str] | None, origin: str) -> _PatternFile | None:
        rules = []
        for number, line in enumerate(lines or (), 1):
            text = _pattern(line)
            try:
                pattern = GitIgnoreSpecPattern(text)
            except (GitIgnorePatternError, re.error):  # e.g. "!" alone, or a range like [z-a]
                self._problems.append(f"{origin}, line {number}: {line.strip()!r} can never match, skipped")
                continue
            if pattern.include is not None and pattern.regex is not None:  # blank lines and comments are None
                body = (text[1:] if text.startswith("!") else text).removeprefix("**/").removesuffix("/")
                rules.append(_Rule(number, pattern.regex, pattern.include, "/" not in body))
        return _PatternFile(base, rules) if rules else None

    def __repr__(self) -> str:
        return (f"<IgnoreRules {self.root} sources={len(self._sources)} directories={len(self._dirs)} "
                f"problems={len(self._problems)}>")
