"""Commands that read whole folders, and the Read deny rules that cover something inside them.

`grep -r KEY .` names only the workspace, yet prints the lines of a denied
`.env` below it.  A deny rule on a path is matched against the paths a
command names, so for the commands that read every file below a folder
(recursive grep, ripgrep, archivers and recursive copies) the folder is
looked into: when a file or folder below it is covered by a Read deny
rule, the command is asked about, naming that file.  The look is bounded:
a folder too large to look through in time is asked about too.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence

from core.policy.rules import Rule

MAX_ENTRIES = 20_000
"""Entries looked at below one folder before giving up (and asking)."""
_ALWAYS = frozenset({"rg", "ag", "ack", "ack-grep", "tar", "zip", "7z", "rsync", "scp", "bsdtar"})
"""Commands that read every file below a folder they are given."""
_GREPS = frozenset({"grep", "egrep", "fgrep", "zgrep"})
_COPIES = frozenset({"cp", "mv"})
_SEARCHES_HERE = frozenset({"rg", "ag", "ack", "ack-grep"})
"""Searchers that read the working directory when given no path."""


def reads_folders(argv: Sequence[str]) -> bool:
    """Whether the command reads every file below the folders it names (`grep -r`, `rg`, `tar c`, `cp -r`)."""
    if not argv:
        return False
    name = os.path.basename(argv[0])
    options = [a for a in argv[1:] if a.startswith("-") and a != "-"]
    if name in _ALWAYS:
        return True
    if name in _GREPS:
        return any(o in ("--recursive", "--dereference-recursive", "--directories=recurse") or
                   (not o.startswith("--") and ("r" in o or "R" in o)) for o in options) or \
            "recurse" in argv[1:]
    if name in _COPIES:
        return any(o in ("--recursive", "--archive") or (not o.startswith("--") and any(c in o for c in "rRa"))
                   for o in options)
    return False


def searches_here(argv: Sequence[str]) -> bool:
    """Whether the command, given no path, searches its working directory (ripgrep and its kin)."""
    return bool(argv) and os.path.basename(argv[0]) in _SEARCHES_HERE


def denied_below(folder: str, denies: Iterable[tuple[str, Rule]], workspace: str, home: str) -> str | None:
    """Why reading everything below `folder` touches what a Read deny rule covers, or None.

    `denies` are (shown rule, rule) pairs of Read deny rules.  A rule that
    covers the folder itself is found by the caller's path match; this
    looks below it.
    """
    rules = [(shown, rule) for shown, rule in denies if rule.kind == "path"]
    if not rules or not os.path.isdir(folder):
        return None
    seen = 0
    for top, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if d != ".git")  # git's own objects: no rule is written for them
        for name in (*dirs, *sorted(files)):
            seen += 1
            if seen > MAX_ENTRIES:
                return (f"{folder} holds more than {MAX_ENTRIES:,} entries, too many to check against the Read "
                        "deny rules before it is read")
            path = os.path.join(top, name)
            hit = next((shown for shown, rule in rules if rule.matches_path(path, workspace, home)), None)
            if hit is not None:
                return f"it reads everything below {folder}, including {path}, which matches the deny rule {hit}"
    return None
