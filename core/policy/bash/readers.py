"""Commands that only read, and the options that would make them do more.

A command in `PLAIN` reads nothing named by its arguments, so a variable or
a substitution among them changes nothing (`echo $X` is still only output).
A command in `FILES` reads the files its operands name; a computed operand
could name any file, so it needs a person.  The others are read-only only
with some options left out (`sort -o`, `history -w`, `tree -o`; the filters
are in `core.policy.bash.filters`); with a word only known at run time, that
cannot be checked, so they ask.
"""

from __future__ import annotations

from collections.abc import Callable

from core.models.bash import Effect
from core.policy.bash.filters import judge_awk, judge_grep, judge_jq, judge_sed
from core.policy.bash.findings import Env, Judgement, read_list, read_target, write_target
from core.policy.bash.options import parse
from core.policy.bash.variables import dangerous_variable, named_at_run_time, risky_subscript
from core.policy.bash.words import SAFE_DYNAMIC, WordValue

PLAIN = frozenset({
    "echo", "true", "false", ":", "pwd", "id", "whoami", "uname", "sleep", "seq", "basename",
    "dirname", "realpath", "readlink", "which", "type", "wait", "test", "[", "tty", "nproc", "arch", "locale",
    "getconf", "groups", "logname", "users", "exit", "return", "break", "continue", "shift", "times", "umask",
    "jobs", "unset", "ulimit", "cal", "expr", "yes", "ps", "lsblk", "free", "uptime",
})
"""Read nothing from files named by their arguments."""
FILES = frozenset({
    "cat", "head", "tail", "wc", "ls", "stat", "du", "df", "cut", "tr", "diff", "cmp", "comm", "md5sum",
    "sha1sum", "sha224sum", "sha256sum", "sha384sum", "sha512sum", "b2sum", "cksum", "sum", "od", "hexdump",
    "nl", "tac", "rev", "column", "base64", "base32", "strings", "fold", "fmt", "expand", "unexpand", "paste",
    "join", "look", "numfmt", "pr", "tsort",
})
"""Read only the files their operands name."""


def judge_reader(name: str, args: list[WordValue], env: Env, j: Judgement, shown: str) -> bool:
    """Judges `name` if it is a read-only program; False when it is not one."""
    special = _SPECIAL.get(name)
    if special is not None:
        special(args, env, j, shown)
        return True
    if name in ("grep", "egrep", "fgrep", "rg"):
        judge_grep(name, args, env, j, shown)
        return True
    if name not in PLAIN and name not in FILES:
        return False
    for word in args:
        if word.dynamic and not word.kinds <= SAFE_DYNAMIC:
            j.raise_to("ask", f"{shown}: {word.source} is only known at run time ({word.why()})", word)
    if name in PLAIN:
        return True
    for index in parse(args).operands:
        read_target(args[index], env, j, shown)
    for word in args:
        if word.text.startswith("--") and "=" in word.text:
            read_target(word, env, j, shown)
    _listed_files(name, args, env, j, shown)
    return True


_CHECKSUMS = frozenset({"md5sum", "sha1sum", "sha224sum", "sha256sum", "sha384sum", "sha512sum", "b2sum", "cksum"})
_LIST_OPTIONS = ("--files0-from", "--files-from")


def _listed_files(name: str, args: list[WordValue], env: Env, j: Judgement, shown: str) -> None:
    """`wc --files0-from=F`, `du --files0-f F` (any unambiguous start), `sha256sum -c SUMS`: files named in a file."""
    for i, word in enumerate(args):
        option, eq, value = word.text.partition("=")
        if word.dynamic or not option.startswith("-") or option == "--":
            continue
        if option.startswith("--") and len(option) > 3 and any(o.startswith(option) for o in _LIST_OPTIONS):
            given = _value_word(value, args, i) if eq else (args[i + 1] if i + 1 < len(args) else None)
            read_list(given, env, j, shown)
        elif name in _CHECKSUMS and (("c" in option[1:] and not option.startswith("--")) or
                                     (len(option) > 3 and "--check".startswith(option))):
            read_list(None, env, j, shown)


def _sensitive(args: list[WordValue], j: Judgement, shown: str) -> bool:
    """Asks when any word is dynamic: a computed word could be the option that writes or runs."""
    dynamic = [w for w in args if w.dynamic]
    for word in dynamic:
        j.raise_to("ask", f"{shown}: {word.source} is only known at run time and could be an option", word)
    return not dynamic


def _flag(j: Judgement, word: WordValue, effect: Effect, why: str) -> None:
    j.raise_to(effect, why, word)


def _history(args: list[WordValue], env: Env, j: Judgement, shown: str) -> None:
    """history -w/-a FILE writes the history to FILE (or to $HISTFILE, outside the workspace)."""
    if not _sensitive(args, j, shown):
        return
    p = parse(args, "d", permute=False)
    files = [args[i] for i in p.operands]
    if p.has("-w", "-a"):
        for word in files[:1]:
            write_target(word, env, j, "writes", shown)
        if not files:
            j.raise_to("run", f"{shown} writes the history file, outside the workspace")
    elif p.has("-r", "-n"):
        for word in files[:1]:
            read_target(word, env, j, shown)


def _options_ask(bad: tuple[str, ...], reason: str, files_from: int = 0) -> Callable[..., None]:
    """A reader that asks when one of `bad` options is present (exact, `--x=...` or `-x...`)."""
    def judge(args: list[WordValue], env: Env, j: Judgement, shown: str) -> None:
        if not _sensitive(args, j, shown):
            return
        for word in args:
            if any(_names_option(word.text, b) for b in bad):
                _flag(j, word, "ask", f"{shown}: {word.text.split('=')[0]} {reason}")
        for index in parse(args).operands[files_from:]:
            read_target(args[index], env, j, shown)
    return judge


def _names_option(text: str, option: str) -> bool:
    """Whether `text` gives `option`: whole, with `=value`, as a letter of a short bundle (`-ao` holds -o; a
    letter of a glued value counts too, which only asks more), or by a start of a long one (`--fromf`)."""
    name = text.partition("=")[0]
    if len(option) == 2:
        return text.startswith("-") and not text.startswith("--") and option[1] in text[1:]
    return name == option or (name.startswith("--") and len(name) > 3 and option.startswith(name))


def _sort(args: list[WordValue], env: Env, j: Judgement, shown: str) -> None:
    if not _sensitive(args, j, shown):
        return
    p = parse(args, "kotST", ("--key", "--output", "--field-separator", "--buffer-size",
                              "--temporary-directory", "--compress-program", "--files0-from"))
    for name, value, index in p.options:
        if name == "--compress-program":
            _flag(j, args[index], "ask", f"{shown}: --compress-program runs a program")
        elif name == "--files0-from" and value is not None:
            read_list(_value_word(value, args, index), env, j, shown)
        elif name in ("-o", "--output") and value is not None:
            write_target(WordValue(value, args[index].source, args[index].start, args[index].end), env, j,
                         "writes", shown)
    for index in p.operands:
        read_target(args[index], env, j, shown)


def _value_word(value: str, args: list[WordValue], index: int) -> WordValue:
    """An option's value as a word: the next word when it was given apart, else the text after the name."""
    word = args[index]
    if index + 1 < len(args) and args[index + 1].text == value and not word.text.endswith(value):
        return args[index + 1]
    return WordValue(value, word.source, word.start, word.end, word.kinds)


def _file(args: list[WordValue], env: Env, j: Judgement, shown: str) -> None:
    """file: `-f LIST` reads the files LIST names; `-m`/`-C` load or compile magic files."""
    if not _sensitive(args, j, shown):
        return
    p = parse(args, "fmFeP", ("--files-from", "--magic-file", "--separator", "--exclude", "--parameter",
                              "--exclude-quiet"))
    for option, value, index in p.options:
        if option in ("-C", "--compile", "-m", "--magic-file"):
            _flag(j, args[index], "ask", f"{shown}: {option} compiles or loads magic files")
        elif option in ("-f", "--files-from"):
            read_list(_value_word(value, args, index) if value is not None else None, env, j, shown)
    for index in p.operands:
        read_target(args[index], env, j, shown)


def _date(args: list[WordValue], env: Env, j: Judgement, shown: str) -> None:
    """date reads the dates in `-f FILE` (and prints what it cannot parse: the file's lines); `-s` sets the clock."""
    p = parse(args, "dfrs", ("--date", "--file", "--reference", "--set"))
    for name, value, index in p.options:
        if name in ("-s", "--set"):
            j.raise_to("run", f"{shown} sets the system clock")
        elif name in ("-f", "--file") and value is not None:
            read_target(_value_word(value, args, index), env, j, shown)


def _second_operand_written(value_short: str) -> Callable[..., None]:
    """uniq IN OUT, xxd IN OUT: the second operand is a file written."""
    def judge(args: list[WordValue], env: Env, j: Judgement, shown: str) -> None:
        if not _sensitive(args, j, shown):
            return
        operands = parse(args, value_short).operands
        for index in operands[:1]:
            read_target(args[index], env, j, shown)
        for index in operands[1:2]:
            write_target(args[index], env, j, "writes", shown)
    return judge


def _printf(args: list[WordValue], env: Env, j: Judgement, shown: str) -> None:
    """printf -v NAME assigns a variable; the builtin takes options only before the format."""
    if args and args[0].dynamic:
        j.raise_to("ask", f"{shown}: {args[0].source} is only known at run time and could be -v", args[0])
    for word in args:
        if word.dynamic and not word.kinds <= SAFE_DYNAMIC:
            j.raise_to("ask", f"{shown}: {word.source} is only known at run time ({word.why()})", word)
    _dangerous_names(parse(args, "v", permute=False).values("-v"), j, shown)
    _run_time_name(args, j, shown, splits=False, options=frozenset({"-v"}))


def _run_time_name(args: list[WordValue], j: Judgement, shown: str, splits: bool,
                   options: frozenset[str] = frozenset({"-v", "-R"})) -> None:
    """Asks when a word may be a variable name whose subscript runs code (see `named_at_run_time`)."""
    word = named_at_run_time(args, splits, options)
    if word is not None:
        j.raise_to("ask", f"{shown}: {word.source} may be a variable name with a subscript, which Bash evaluates "
                          "as arithmetic and which can run commands hidden in it", word)


def _names_looked_up(options: frozenset[str]) -> Callable[..., None]:
    """test -v NAME, [ -R NAME ], wait -p NAME: a read-only builtin that looks a variable up by name."""
    def judge(args: list[WordValue], env: Env, j: Judgement, shown: str) -> None:
        for word in args:
            if word.dynamic and not word.kinds <= SAFE_DYNAMIC:
                j.raise_to("ask", f"{shown}: {word.source} is only known at run time ({word.why()})", word)
        _run_time_name(args, j, shown, splits=True, options=options)
    return judge


def _assigner(value_short: str) -> Callable[..., None]:
    """read NAME..., mapfile NAME: each operand names a variable to set."""
    def judge(args: list[WordValue], env: Env, j: Judgement, shown: str) -> None:
        if not _sensitive(args, j, shown):
            return
        p = parse(args, value_short, permute=False)
        if p.has("-C"):
            j.raise_to("ask", f"{shown} runs a callback (-C)")
        _dangerous_names(p.values("-a") + [args[i].text for i in p.operands], j, shown)
    return judge


def _dangerous_names(names: list[str], j: Judgement, shown: str) -> None:
    for name in names:
        if dangerous_variable(name) or risky_subscript(name):
            j.raise_to("ask", f"{shown} sets {name}, which changes what later commands run")


def _hostname(args: list[WordValue], env: Env, j: Judgement, shown: str) -> None:
    """hostname: read-only with no operand, a system change with one (or with a file or a name to set)."""
    if any(a.text in ("-s", "--set", "-F", "--file") or a.text.startswith("--set=") for a in args) or \
            parse(args).operands:
        j.raise_to("run", f"{shown} sets the host name")


def _printenv(args: list[WordValue], env: Env, j: Judgement, shown: str) -> None:
    """printenv hands the agent the environment: API keys and tokens live there (a rule may allow it)."""
    j.raise_to("run", f"{shown} prints the environment, where API keys and tokens live")


_SPECIAL: dict[str, Callable[[list[WordValue], Env, Judgement, str], None]] = {
    "printenv": _printenv,
    "tree": _options_ask(("-o", "--fromfile"), "writes or reads a file list"),
    "file": _file,
    "sort": _sort,
    "uniq": _second_operand_written("fsw"),
    "xxd": _second_operand_written("cglos"),
    "sed": judge_sed, "jq": judge_jq, "history": _history,
    "awk": judge_awk, "gawk": judge_awk, "mawk": judge_awk, "nawk": judge_awk,
    "printf": _printf, "read": _assigner("adinNptu"), "mapfile": _assigner("dnOsuCc"),
    "readarray": _assigner("dnOsuCc"), "getopts": _assigner(""),
    "hash": _options_ask(("-p",), "maps a command name to another program"),
    "date": _date,
    "test": _names_looked_up(frozenset({"-v", "-R"})), "[": _names_looked_up(frozenset({"-v", "-R"})),
    "wait": _names_looked_up(frozenset({"-p"})),
    "hostname": _hostname,
}
