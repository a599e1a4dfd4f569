"""git: which invocations only read, which change history or reach the network, which can run commands.

`git -c core.fsmonitor=...` and `git -c alias.x='!...'` run arbitrary
programs on an ordinary `git status`; so do `--git-dir`/`-C` pointing at
another repository (its config is not the workspace's), `--upload-pack`,
`rebase --exec`, `submodule foreach`, `bisect run`.  Those ask whatever the
rules say.  A plain `git status` is read-only without any rule.
"""

from __future__ import annotations

from core.policy.bash.findings import Env, Judgement, read_target, resolve, write_target
from core.policy.bash.options import parse
from core.policy.bash.words import WordValue

_GLOBAL_VALUE = frozenset({"-C", "--namespace", "--super-prefix", "--list-cmds"})
_GLOBAL_FLAGS = frozenset({"--no-pager", "-P", "-p", "--paginate", "--bare", "--no-replace-objects",
                           "--literal-pathspecs", "--glob-pathspecs", "--noglob-pathspecs", "--icase-pathspecs",
                           "--no-optional-locks", "--no-lazy-fetch", "--no-advice", "--version", "--help", "-h",
                           "-v"})
_RUNS_CONFIG = frozenset({"-c", "--config-env", "--exec-path", "--git-dir", "--work-tree"})
READ = frozenset({"status", "log", "show", "diff", "rev-parse", "ls-files", "ls-tree", "blame", "annotate",
                  "describe", "shortlog", "cat-file", "show-ref", "rev-list", "merge-base", "name-rev",
                  "count-objects", "whatchanged", "show-branch", "for-each-ref", "cherry", "range-diff",
                  "version", "help", "check-ignore", "check-attr", "diff-tree", "diff-files", "diff-index",
                  "var", "grep"})
_OUTPUT = frozenset({"log", "show", "diff", "whatchanged", "range-diff", "diff-tree", "diff-files", "diff-index",
                     "format-patch", "archive"})
_RUNS_COMMANDS = {"clone": ("-u", "--upload-pack", "-c", "--config", "--template"),
                  "fetch": ("--upload-pack",), "pull": ("--upload-pack",), "ls-remote": ("--upload-pack",),
                  "push": ("--receive-pack", "--exec"), "rebase": ("-x", "--exec"), "archive": ("--exec",),
                  "difftool": ("-x", "--extcmd"), "grep": ("-O", "--open-files-in-pager")}
_NETWORK = frozenset({"push", "fetch", "pull", "clone", "ls-remote", "submodule", "request-pull", "send-email"})
_HISTORY = {"reset": ("--hard", "--merge", "--keep"), "commit": ("--amend",), "branch": ("-D",),
            "gc": ("--prune", "--aggressive"), "checkout": ("-f", "--force"), "clean": ("-f", "--force"),
            "push": ("-f", "--force", "--force-with-lease", "--force-if-includes", "--mirror", "--delete", "-d"),
            "update-ref": ("-d",), "stash": ("drop", "clear")}
_ALWAYS_HISTORY = frozenset({"rebase", "filter-branch", "filter-repo", "replace"})


def judge_git(args: list[WordValue], env: Env, j: Judgement, shown: str) -> None:
    """Judges `git ARGS`."""
    i = 0
    while i < len(args) and (args[i].dynamic or args[i].text.startswith("-")):
        word = args[i]
        name = word.text.partition("=")[0]
        if word.dynamic:
            j.raise_to("ask", f"{shown}: {word.source} is only known at run time", word)
            return
        if name in _RUNS_CONFIG:
            j.raise_to("ask", f"{shown}: {name} changes git's configuration or repository, which can run "
                              "commands (core.fsmonitor, alias.x=!cmd, hooks)", word)
            return
        if name == "-C" and "=" not in word.text:
            _directory(args[i + 1] if i + 1 < len(args) else word, env, j, shown)
            i += 2
            continue
        if name not in _GLOBAL_FLAGS and name not in _GLOBAL_VALUE:
            j.raise_to("ask", f"{shown}: unknown git option {name}", word)
            return
        i += 2 if name in _GLOBAL_VALUE and "=" not in word.text else 1
    if i >= len(args):
        return
    _subcommand(args[i].text, args[i + 1:], j, shown, env)


def _directory(word: WordValue, env: Env, j: Judgement, shown: str) -> None:
    path = None if word.dynamic else resolve(word.text, env)
    if path is None or not env.inside(path):
        j.raise_to("ask", f"{shown}: -C runs git in {word.source}, outside the workspace, whose configuration "
                          "could run commands", word)


def _subcommand(sub: str, rest: list[WordValue], j: Judgement, shown: str, env: Env) -> None:
    dynamic = [w for w in rest if w.dynamic]
    if dynamic:
        j.raise_to("ask", f"{shown}: {dynamic[0].source} is only known at run time", dynamic[0])
        return
    texts = [w.text for w in rest]
    names = _option_names(texts)
    _history_and_network(sub, texts, names, j, shown)
    if _runs_commands(sub, rest, names, j, shown):
        return
    if sub in _OUTPUT and ({"--output", "--output-directory"} & names or (sub == "format-patch" and "-o" in names)):
        j.raise_to("ask", f"{shown}: --output writes a file")
        return
    if sub in _OUTPUT and "--ext-diff" in names:
        j.raise_to("ask", f"{shown}: --ext-diff runs the external diff program git's configuration names")
        return
    if sub == "config":
        _config(rest, names, env, j, shown)
        return
    if sub == "remote" and (names & {"-v", "--verbose"} or texts[:1] == ["get-url"]):
        j.raise_to("run", f"{shown}: shows the remotes' URLs, which can hold a token (https://user:token@host), "
                          "rewritten by git's configuration (url.<token>.insteadOf) too")
        return
    if sub == "var" and {"-l"} & names:
        j.raise_to("run", f"{shown}: git var -l lists git's configuration, which can hold tokens")
        return
    if sub in READ or _reads_only(sub, rest, texts, names):
        _outside_reads(sub, rest, names, env, j, shown)
        return
    j.raise_to("run", f"{shown} changes the repository" if sub in _KNOWN_WRITERS else
               f"{shown} runs git {sub}, which Belay does not know to be read-only")
    if not j.impact:
        j.hurt("medium", f"changes the repository: {shown}")


_RISKY_LONG = frozenset({n for options in _RUNS_COMMANDS.values() for n in options if n.startswith("--")} |
                       {n for options in _HISTORY.values() for n in options if n.startswith("--")} |
                       {"--output", "--output-directory", "--ext-diff", "--contents", "--no-index", "--delete",
                        "--move", "--copy", "--force", "--set-upstream-to", "--unset-upstream", "--edit-description",
                        "--track", "--annotate", "--sign", "--message", "--file", "--edit", "--list", "--dry-run"})
"""Long options whose abbreviations must be read as them (git takes any unambiguous start of a long option)."""


def _option_names(texts: list[str]) -> set[str]:
    """The options git sees in `texts`, before a `--`: each letter of a short bundle (`-nO'cmd'` holds -O; a
    letter of a glued value counts too, which only ever asks more), and every risky long option a start names."""
    names: set[str] = set()
    for text in texts:
        if text == "--":
            break
        name = text.partition("=")[0]
        if name.startswith("--"):
            names.add(name)
            names |= {full for full in _RISKY_LONG if len(name) > 3 and full.startswith(name)}
        elif name.startswith("-") and len(name) > 1:
            names |= {name} | {f"-{letter}" for letter in text[1:]}
    return names


_KNOWN_WRITERS = frozenset({"add", "commit", "checkout", "switch", "restore", "merge", "rebase", "reset", "revert",
                            "cherry-pick", "stash", "tag", "branch", "rm", "mv", "clean", "init", "am", "apply",
                            "pull", "push", "fetch", "clone", "gc", "prune", "remote", "worktree", "submodule",
                            "notes", "reflog", "update-ref", "filter-branch", "replace", "bisect", "sparse-checkout"})


def _runs_commands(sub: str, rest: list[WordValue], names: set[str], j: Judgement, shown: str) -> bool:
    bad = [n for n in _RUNS_COMMANDS.get(sub, ()) if n in names]
    first = rest[0].text if rest else ""
    if bad or sub == "filter-branch" or (sub == "submodule" and first == "foreach") or \
            (sub == "bisect" and first == "run"):
        what = bad[0] if bad else (first if sub != "filter-branch" else "filter-branch")
        j.raise_to("ask", f"{shown}: {what} makes git run a command")
        return True
    return False


def _history_and_network(sub: str, texts: list[str], names: set[str], j: Judgement, shown: str) -> None:
    rewrites = sub in _ALWAYS_HISTORY or any(n in names or n in texts for n in _HISTORY.get(sub, ()))
    if sub == "push" and any(t.startswith(("+", ":")) for t in texts):
        rewrites = True
    if sub == "reflog" and texts[:1] in (["expire"], ["delete"]):
        rewrites = True
    if sub == "clean" and ("-n" in names or "--dry-run" in names):
        rewrites = False
    if rewrites:
        j.hurt("high", f"rewrites history or discards work: {shown}")
    if sub in _NETWORK or (sub == "remote" and texts[:1] in (["update"], ["show"], ["prune"])):
        j.hurt("medium", f"network: {shown}")


def _reads_only(sub: str, rest: list[WordValue], texts: list[str], names: set[str]) -> bool:
    """The subcommands that read in some forms and write in others."""
    first = texts[0] if texts else ""
    operands = parse(rest, "", ("--contains", "--no-contains", "--merged", "--no-merged", "--points-at",
                                "--sort", "--format", "--column")).operands
    if sub == "branch":
        writes = {"-d", "-D", "-m", "-M", "-c", "-C", "-f", "--delete", "--move", "--copy", "--force",
                  "--set-upstream-to", "-u", "--unset-upstream", "--edit-description", "--track"}
        return not (writes & names) and (not operands or bool({"-l", "--list"} & names))
    if sub == "tag":
        writes = {"-d", "--delete", "-a", "--annotate", "-s", "--sign", "-u", "-f", "--force", "-m", "--message",
                  "-F", "--file", "-e", "--edit"}
        return not (writes & names) and (not operands or bool({"-l", "--list"} & names))
    if sub == "remote":
        return set(texts) <= {"-v", "--verbose"} or first == "get-url"
    if sub in ("stash", "worktree", "notes"):
        return first in ("list", "show")
    if sub == "reflog":
        return first in ("", "show") or first.startswith("-")
    if sub == "submodule":
        return first in ("status", "summary", "")
    return sub == "clean" and bool({"-n", "--dry-run"} & names)


def _outside_reads(sub: str, rest: list[WordValue], names: set[str], env: Env, j: Judgement, shown: str) -> None:
    """Files a reading subcommand takes from anywhere: `diff --no-index A B`, `blame --contents F`."""
    if "--no-index" in names and sub in ("diff", "grep"):
        operands = parse(rest, "ABCefmO", ("--regexp", "--file", "--max-depth", "--threads")).operands
        for index in operands[1:] if sub == "grep" else operands:
            read_target(rest[index], env, j, shown)
    short, long = _FILE_OPTIONS.get(sub, ("", ()))
    for i, word in enumerate(rest):
        name, eq, value = word.text.partition("=")
        if name.startswith("--") and len(name) > 3 and any(option.startswith(name) for option in long):
            given = value if eq else (rest[i + 1].text if i + 1 < len(rest) else None)
        elif name.startswith("-") and not name.startswith("--") and short and short in name:
            glued = word.text[word.text.index(short) + 1:]
            given = glued or (rest[i + 1].text if i + 1 < len(rest) else None)
        else:
            continue
        if given is not None:
            read_target(WordValue(given, word.source, word.start, word.end, word.kinds), env, j, shown)


_FILE_OPTIONS = {"blame": ("S", ("--contents", "--ignore-revs-file")),
                 "annotate": ("S", ("--contents", "--ignore-revs-file")), "grep": ("f", ())}
"""Options of reading subcommands that read a file from anywhere (bundled, glued, or a start of the long name):
blame's revisions file quotes a bad line in its error, grep -f takes its patterns from a file."""


_CONFIG_READS = frozenset({"--get", "--get-all", "--get-regexp", "--get-urlmatch", "--list", "-l", "--get-color",
                           "--get-colorbool"})
_CONFIG_WRITES = frozenset({"--add", "--replace-all", "--unset", "--unset-all", "--rename-section",
                            "--remove-section", "--edit", "-e"})


def _config(rest: list[WordValue], names: set[str], env: Env, j: Judgement, shown: str) -> None:
    """`git config`: a read with at most a name, a write otherwise; where it writes decides the verdict."""
    p = parse(rest, "ft", ("--file", "--blob", "--type", "--default", "--comment", "--value"))
    operands = [rest[i].text for i in p.operands]
    first = operands[0] if operands else ""
    writes = bool(_CONFIG_WRITES & names) or first in ("set", "unset", "rename-section", "remove-section", "edit")
    reads = bool(_CONFIG_READS & names) or first in ("get", "list") or (not writes and len(operands) <= 1)
    files = [WordValue(v, shown, 0, 0) for v in p.values("-f", "--file")]
    if reads and not writes:
        for word in files:
            read_target(word, env, j, shown)
        own_file = p.has("-f", "--file", "--blob") and not p.has("--includes")
        shown_values = None if own_file else _config_values_shown(p.options, operands)
        if shown_values is not None:
            j.raise_to("run", f"{shown}: {shown_values}; git's configuration (~/.gitconfig included) can hold tokens "
                              "(url.<token>.insteadOf, credential helpers, http.extraHeader)")
        return
    if files:
        for word in files:
            write_target(word, env, j, "writes", shown)
        j.hurt("medium", f"changes git configuration: {shown}")
    elif {"--global", "--system"} & names:
        j.raise_to("deny", f"{shown} writes git configuration outside the workspace")
        j.hurt("high", f"writes outside the workspace: {shown}")
        return
    else:
        j.protected = j.protected or ".git/config is protected: git runs programs named in its configuration"
        j.hurt("medium", f"changes git configuration: {shown}")
    j.raise_to("run", f"{shown} changes git configuration")


_CONFIG_QUIET = frozenset({"--get", "--global", "--system", "--local", "--worktree", "--show-origin", "--show-scope",
                           "--null", "-z", "--name-only", "--type", "--default", "--bool", "--int", "--bool-or-int",
                           "--path", "--expiry-date", "--includes", "--no-includes", "--file", "-f", "--blob",
                           "--get-color", "--get-colorbool", "-t"})
"""Options of a `git config` read that show one named value at most (any other, or a prefix of one, may list)."""
_QUIET_SECTIONS = frozenset({"core", "init", "pull", "push", "color", "merge", "alias", "log", "rebase", "commit",
                             "tag", "advice", "help", "format", "gc", "status", "pager", "column", "grep", "rerere",
                             "diff", "fetch", "branch", "user", "safe", "feature", "index", "pack", "blame", "am",
                             "apply", "checkout", "clean", "describe", "difftool", "mergetool", "stash", "worktree"})
"""Sections holding settings, not secrets; `url`, `http`, `credential`, `remote` (its URLs), `sendemail`... are not."""
_SECRET_WORDS = ("pass", "token", "secret", "auth", "cred", "header", "key", "cookie")


def _config_values_shown(options: list[tuple[str, str | None, int]], operands: list[str]) -> str | None:
    """Why a `git config` read may show a secret: it lists (`-l`, `--get-regexp`, `get --all`) or names a key
    outside the sections known to hold only settings; None for `git config user.name` and the like."""
    unknown = next((name for name, _, _ in options if name not in _CONFIG_QUIET), None)
    if unknown is not None:
        return f"{unknown} may list several values"
    keys = operands[1:] if operands[:1] in (["get"], ["list"]) else operands
    if operands[:1] == ["list"] or not keys:
        return "it lists every value"
    section, _, rest = keys[0].lower().partition(".")
    variable = rest.rsplit(".", 1)[-1]
    if section not in _QUIET_SECTIONS or any(word in variable for word in _SECRET_WORDS):
        return f"it shows {keys[0]}, which may hold a secret"
    return None
