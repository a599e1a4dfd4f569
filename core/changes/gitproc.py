"""How Belay runs git for itself (merges, git state, describing commits): a fixed binary and a neutral environment.

Belay runs git on content an agent may control (a repository's config could name programs to run, a
pager, a fetch).  So it runs only `/usr/bin/git`, never whatever `git` is first on PATH, with every
GIT_* variable removed, no system or global config, no lazy fetch of missing objects, no optional locks
and the C locale, so its output is the same everywhere.  Every run also gets `NO_PROGRAMS`: the
repository's hooks, fsmonitor, pager and automatic gc (with its `pre-auto-gc` hook) are switched off on
the command line, where they beat the repository's config.
"""

from __future__ import annotations

import os

GIT = "/usr/bin/git"
"""The git Belay runs; when it is missing, callers fall back to what they can do without it."""

NO_PROGRAMS = ("-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false", "-c", "core.pager=cat",
               "-c", "protocol.allow=never", "-c", "gc.auto=0", "-c", "maintenance.auto=false")
"""Options (before the git command) so that no program the repository's config names runs in Belay's process.

Hooks are looked up under /dev/null, where no file can ever be (git finds none, and there is no
directory for anyone to write one into).  Diff and filter drivers are not listed: none of the commands
Belay runs for itself diffs or reads work-tree files (the git tools, which do, override each filter).
"""


def git_env() -> dict[str, str]:
    """The caller's environment without git settings that could change what git does or prints."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull, GIT_NO_LAZY_FETCH="1",
               GIT_OPTIONAL_LOCKS="0", GIT_PAGER="cat", LC_ALL="C")
    return env
