"""Variables whose value decides what later commands run, or how.

`PATH=/tmp/evil:$PATH ls` runs another `ls`; `BASH_ENV` is sourced by every
non-interactive bash; `LD_PRELOAD` injects a library; `PS4` is expanded
(substitutions included) under `set -x`; `GIT_*` points git at other
configs, hooks and programs.  Setting one of them, as a prefix, on its own,
with `export`, `declare`, `read`, `printf -v` or as a `for` variable, asks.
"""

from __future__ import annotations

import re

from core.policy.bash.words import WordValue

DANGEROUS = frozenset({
    "PATH", "BASH_ENV", "ENV", "PROMPT_COMMAND", "PS0", "PS1", "PS2", "PS3", "PS4", "IFS", "SHELLOPTS",
    "BASHOPTS", "CDPATH", "HOME", "GLOBIGNORE", "FUNCNEST", "BASH_XTRACEFD", "HISTFILE", "PAGER",
    "MANPAGER", "EDITOR", "VISUAL", "BROWSER", "LESSOPEN", "LESSCLOSE", "SSH_ASKPASS", "SUDO_ASKPASS",
    "PYTHONPATH", "PYTHONSTARTUP", "PYTHONHOME", "PYTHONINSPECT", "PYTHONUSERBASE", "PERL5LIB", "PERL5OPT",
    "PERLLIB", "RUBYOPT", "RUBYLIB", "NODE_OPTIONS", "NODE_PATH", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS",
    "JDK_JAVA_OPTIONS", "CLASSPATH", "TMPDIR", "XDG_CONFIG_HOME", "ZDOTDIR", "INPUTRC", "MAKEFLAGS",
    "CC", "CXX", "LD", "RUSTC_WRAPPER", "CARGO_HOME", "GOFLAGS", "EXINIT", "VIMINIT", "TERMINAL",
    # options read from the environment that make a reader run a program
    "TAR_OPTIONS", "RIPGREP_CONFIG_PATH", "GREP_OPTIONS", "RSYNC_RSH", "RSYNC_CONNECT_PROG", "CVS_RSH", "ZIPOPT",
    "UNZIP", "MANOPT", "FCEDIT", "BASH_LOADABLES_PATH", "SYSTEMD_PAGER", "LESS", "LESSKEYIN", "XZ_DEFAULTS",
    "XZ_OPT", "ZSTD_NBTHREADS", "GZIP", "BZIP2", "SHELL",
})
_PREFIXES = ("LD_", "DYLD_", "GIT_", "BASH_FUNC_", "NPM_CONFIG_", "PIP_", "UV_", "DOCKER_", "SSH_")


def dangerous_variable(name: str) -> bool:
    """Whether assigning `name` (as written, maybe `a[1]`) can change what runs."""
    base = name.split("[", 1)[0]
    upper = base.upper()
    return base in DANGEROUS or upper.startswith(_PREFIXES)


_LITERAL_SUBSCRIPT = re.compile(r"[^\[]*\[\s*(?:[0-9]+|@|\*|['\"]?[A-Za-z0-9_.-]*['\"]?)\s*\]")


def risky_subscript(name: str) -> bool:
    """Whether assigning `name` evaluates a run-time subscript: `a[i]=1` runs the code hidden in `i`.

    An indexed array's subscript is an arithmetic expression; a bare name in
    it is expanded and evaluated again, so a value like `a[$(cmd)]` runs `cmd`.
    Literal numbers (and, for associative arrays, plain literal keys) are safe.
    """
    if "[" not in name:
        return False
    return _LITERAL_SUBSCRIPT.fullmatch(name) is None or re.search(r"\[\s*[A-Za-z_]", name) is not None


_NAME_TESTS = frozenset({"-v", "-R"})


def named_at_run_time(words: list[WordValue], splits: bool, options: frozenset[str] = _NAME_TESTS
                      ) -> WordValue | None:
    """The first word Bash may resolve as a variable name whose subscript runs code, or None.

    `test -v NAME`, `[[ -R NAME ]]` and `wait -p NAME` look `NAME` up, and
    a subscript in it (`x[$(cmd)]`, or `x[i]` with `i` holding one) is
    arithmetic, which runs commands.  A name only known at run time may be
    one.  Where the shell splits words (`test`, `[`, `wait`; `splits`), an
    unquoted run-time word may itself become `-v NAME`, and a quoted one may
    still be the option, which makes the next word a name.
    """
    named = False
    for word in words:
        if splits and word.dynamic and not _one_quoted_word(word):
            return word
        if named and (word.dynamic or risky_subscript(word.text)):
            return word
        named = (splits and word.dynamic) or word.text in options or (
            word.text.startswith("-") and not word.text.startswith("--") and
            any(f"-{letter}" in options for letter in word.text[1:]))
    return None


def _one_quoted_word(word: WordValue) -> bool:
    """A word in one pair of double quotes: expanded, never split into several words."""
    return len(word.source) >= 2 and word.source[0] == word.source[-1] == '"' and word.source.count('"') == 2
