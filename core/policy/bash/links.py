"""Recursive readers over a folder that holds a symlink leaving the workspace.

A cloned repository may hold `keys -> ~/.ssh`: `grep -R KEY .` then prints
the private key, though every path the command names is inside the
workspace.  Belay's own Grep, Glob and LS never follow such a link; a
command may, so for the commands that read every file below a folder
(`core.policy.folders.reads_folders`, plus `ls -RL` and `du -L`) the folder
is looked through, without following links: a link to a secret is refused,
a link leaving the workspace needs a rule or a person, and a folder too
large to look through in time asks too.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from core.policy.bash.findings import Env, Judgement
from core.policy.folders import reads_folders
from core.policy.protected import secret_reason

MAX_ENTRIES = 100_000
"""Entries looked at below the folders of one command before giving up (and asking)."""


def judge_links(argv: Sequence[str], env: Env, j: Judgement, shown: str) -> None:
    """Raises `j` when a folder `argv` reads recursively holds a link that leaves the workspace."""
    if j.effect == "deny" or not _recursive(argv):
        return
    folders = [p for p in j.reads if os.path.isdir(p)]
    if not folders and not j.reads and env.cwd is not None:
        folders = [str(env.cwd)]  # `grep -r KEY`, `rg KEY`: the working directory
    seen = 0
    for folder in folders:
        for link in _links_below(folder):
            seen += 1
            if seen > MAX_ENTRIES:
                j.raise_to("run", f"{shown} reads everything below {folder}, too much to look through for links "
                                  "leaving the workspace before it runs")
                return
            if link is not None and _judge_link(link, env, j, shown):
                return


def _judge_link(link: str, env: Env, j: Judgement, shown: str) -> bool:
    """Judges one link; True once the command is refused (nothing worse can be found)."""
    target = os.path.realpath(link)
    reason = secret_reason(target, env.home)
    if reason is not None:
        j.raise_to("deny", f"{shown} reads through {link}, a link to a secret: {reason}")
        j.hurt("high", f"reads a secret through a link: {reason}")
        return True
    if not env.inside(target):
        j.raise_to("run", f"{shown} reads through {link}, a link to {target}, outside the workspace")
    return False


def _links_below(folder: str) -> list[str | None]:
    """Every entry below `folder`: the symlinks as paths, the rest as None (they count towards the limit)."""
    found: list[str | None] = []
    stack = [folder]
    while stack and len(found) <= MAX_ENTRIES:
        try:
            entries = list(os.scandir(stack.pop()))
        except OSError:
            continue
        for entry in entries:
            if entry.is_symlink():
                found.append(entry.path)
            else:
                found.append(None)
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
    return found


def _recursive(argv: Sequence[str]) -> bool:
    """Whether the command reads every file below the folders it names, links included or not."""
    if reads_folders(argv):
        return True
    name = Path(argv[0]).name if argv else ""
    shorts = "".join(a[1:] for a in argv[1:] if a.startswith("-") and not a.startswith("--"))
    follows = "L" in shorts or "--dereference" in argv
    return (name == "ls" and ("R" in shorts or "--recursive" in argv) and follows) or (name == "du" and follows)
