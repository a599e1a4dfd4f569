"""Judging one simple command: what it would read, write, delete or run, and how bad that could be.

The order matters only for the reason shown; the effect is the most severe
finding.  Assignments and redirections are judged first (they apply
whatever the program is), transparent wrappers (`nohup`, `nice`, `time`,
`stdbuf`, `ionice`, `command`) are peeled off, and the program is judged by
its table: git, code runners, file writers, readers, network tools.
Anything unknown is "run": it needs a rule or a person.
"""

from __future__ import annotations

import re

from core.policy.bash.archives import judge_tar
from core.policy.bash.environment import declared, leaked, prints_environment
from core.policy.bash.findings import Env, Judgement, process_secret, read_target, resolve, write_target
from core.policy.bash.git import judge_git
from core.policy.bash.links import judge_links
from core.policy.bash.nodes import RawCommand
from core.policy.bash.options import parse
from core.policy.bash.readers import PLAIN, judge_reader
from core.policy.bash.redirects import classify
from core.policy.bash.runners import is_runner, judge_runner
from core.policy.bash.variables import dangerous_variable, named_at_run_time, risky_subscript
from core.policy.bash.words import CODE_KINDS, WordValue
from core.policy.bash.writers import SPECS, judge_writer

_TRANSPARENT = {"nohup": ("", ()), "time": ("", ()), "nice": ("n", ("--adjustment",)),
                "stdbuf": ("ioe", ("--input", "--output", "--error")), "ionice": ("cnpPu", ("--class",)),
                "command": ("", ()), "builtin": ("", ())}
NETWORK = frozenset({"curl", "wget", "nc", "ncat", "netcat", "socat", "ssh", "scp", "sftp", "rsync", "telnet",
                     "ftp", "http", "https", "aria2c", "ping", "dig", "nslookup", "host", "whois", "traceroute",
                     "mosh", "gh"})
_INSTALLERS = {"pip": ("install", "download", "wheel"), "pip3": ("install", "download", "wheel"),
               "uv": ("pip", "add", "sync", "tool", "run"), "poetry": ("add", "install", "update"),
               "npm": ("install", "i", "ci", "add", "update", "exec"), "npx": ("",),
               "pnpm": ("install", "i", "add", "update", "dlx"), "yarn": ("install", "add", "upgrade", "dlx", ""),
               "bun": ("install", "add", "i", "x"), "gem": ("install",), "cargo": ("install", "add", "fetch"),
               "go": ("get", "install"), "apt": ("install",), "apt-get": ("install",), "brew": ("install",),
               "docker": ("pull", "push", "run", "build")}
_SYSTEM = frozenset({"reboot", "shutdown", "halt", "poweroff", "mount", "umount", "systemctl", "mkfs", "fdisk",
                     "parted", "kill", "pkill", "killall", "service", "iptables", "useradd", "passwd"})
_SYSTEM_DIRS = ("/bin/", "/usr/bin/", "/usr/local/bin/", "/sbin/", "/usr/sbin/")
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\+?=")


def judge(raw: RawCommand, env: Env) -> Judgement:
    """What `raw` does when it starts in `env.cwd`.

    What it shows of the environment is judged last: printing a variable
    needs a rule or a person (as `printenv` does), which a rule can give,
    so it must not turn the command's run-time words into an ask.
    """
    shown = raw.text if len(raw.text) <= 120 else raw.text[:117] + "…"
    j = _judge(raw, env, shown)
    _environment(raw, j, shown)
    if raw.keyword is None:
        judge_links([w.text for w in raw.words[len(j.wrappers):]], env, j, shown)
    return j


def _judge(raw: RawCommand, env: Env, shown: str) -> Judgement:
    j = Judgement()
    _assignments(raw, j, shown)
    _redirects(raw, env, j, shown)
    for _, value in raw.assignments:
        process_secret(value, env, j, shown)
    if raw.keyword is not None:
        _keyword(raw, j, shown)
        return j
    words = _peel(raw.words, j)
    if not words:
        return j
    head, args = words[0], words[1:]
    if head.dynamic or head.glob:
        j.raise_to("ask", f"{shown}: the command name is only known at run time "
                          f"({head.why() or 'a file name pattern'})", head)
        return j
    _program(head, args, env, j, shown)
    if head.text not in PLAIN:  # `echo /proc/$PPID/environ` only prints the name
        for word in args:
            process_secret(word, env, j, shown)
    if j.effect in ("edit", "run"):
        for word in (w for w in args if w.dynamic):
            j.raise_to("ask", f"{shown}: {word.source} is only known at run time ({word.why()})", word)
    return j


_QUIET_KEYWORDS = frozenset({"[[", "for", "select", "declare", "typeset", "local", "readonly", "export", "unset"})
"""Statements that print none of their words (declare -p is judged by `declared`)."""


def _environment(raw: RawCommand, j: Judgement, shown: str) -> None:
    """A variable of the environment expanded where the agent may see it: `echo $TOKEN`, an error quoting it."""
    words = [] if raw.keyword in _QUIET_KEYWORDS else list(raw.words)
    name = leaked(words + [r.target for r in raw.redirects if r.target is not None], raw.src.known)
    if name is not None:
        j.raise_to("run", f"{shown}: expands ${name}, a variable of the environment, where API keys and tokens "
                          "live (only well-known ones like $HOME, or ones the command sets, are shown freely)")
    if raw.keyword in ("declare", "typeset", "local", "readonly"):
        why = declared(raw.keyword, raw.words[1:], raw.src.known)
    else:
        program = raw.words[len(j.wrappers):] if raw.keyword is None else []
        why = None if not program or program[0].dynamic else \
            prints_environment(program[0].text.rsplit("/", 1)[-1], program[1:])
    if why is not None:
        j.raise_to("run", f"{shown}: {why}, where API keys and tokens live")


def _assignments(raw: RawCommand, j: Judgement, shown: str) -> None:
    for name, value in raw.assignments:
        if dangerous_variable(name):
            j.raise_to("ask", f"{shown}: sets {name.split('[')[0]}, which changes what later commands run", value)
        elif "[" in value.text and ("$(" in value.text or "`" in value.text):
            j.raise_to("ask", f"{shown}: {name} holds code that arithmetic on it would run", value)
        elif risky_subscript(name):
            j.raise_to("ask", f"{shown}: the subscript of {name} is arithmetic on a run-time value, which can "
                              "run commands hidden in it", value)
        elif value.kinds & CODE_KINDS and raw.keyword != "for":
            j.raise_to("ask", f"{shown}: {value.source} is evaluated at run time ({value.why()}) and can run "
                              "commands hidden in a variable", value)


def _redirects(raw: RawCommand, env: Env, j: Judgement, shown: str) -> None:
    for redirect in raw.redirects:
        target = redirect.target
        if target is not None and target.kinds & CODE_KINDS:
            j.raise_to("ask", f"{shown}: {target.source[:60]!r} is expanded at run time in a way Belay cannot "
                              f"follow ({target.why()})", target)
        kind = classify(redirect)
        if kind == "write" and target is not None:
            write_target(target, env, j, "writes", shown)
        elif kind == "dynamic-write" and target is not None:
            j.raise_to("ask", f"{shown} writes to a file only known at run time ({target.source})", target)
        elif kind == "read" and target is not None:
            read_target(target, env, j, shown)


def _keyword(raw: RawCommand, j: Judgement, shown: str) -> None:
    keyword = raw.keyword
    flags = "".join(w.text[1:] for w in raw.words[1:] if w.text.startswith("-") and not w.text.startswith("--"))
    if keyword == "export" or (keyword in ("declare", "typeset", "local") and ("x" in flags or "n" in flags)):
        j.raise_to("ask", f"{shown}: {keyword} changes the environment every later command sees")
    if keyword in ("declare", "typeset", "local", "readonly") and "i" in flags:
        j.raise_to("ask", f"{shown}: -i makes every later assignment arithmetic, which can run commands "
                          "hidden in a value")
    if keyword == "unset" and "f" not in flags:
        named = next((w for w in raw.words[1:] if not w.text.startswith("-") and dangerous_variable(w.text)), None)
        if named is not None:
            j.raise_to("ask", f"{shown}: unsets {named.text}, which changes what later commands run (an empty "
                              "PATH finds programs in the working directory)", named)
    named = named_at_run_time(raw.words[1:], splits=keyword == "[") if keyword in ("[", "[[") else None
    if named is not None:
        j.raise_to("ask", f"{shown}: {named.source} may be a variable name with a subscript, which Bash evaluates "
                          "as arithmetic and which can run commands hidden in it", named)
    declares = keyword in ("declare", "typeset", "local", "readonly")
    for word in raw.words[1:]:
        if word.dynamic and (word.kinds & CODE_KINDS or (declares and not _ASSIGNMENT.match(word.source))):
            j.raise_to("ask", f"{shown}: {word.source} is evaluated at run time ({word.why()}); arithmetic can "
                              "run commands hidden in array subscripts", word)
        elif "[" in word.text and ("$(" in word.text or "`" in word.text or
                                   risky_subscript(word.text.split("=", 1)[0])):
            j.raise_to("ask", f"{shown}: {word.text} evaluates an array subscript at run time", word)


def _peel(words: list[WordValue], j: Judgement) -> list[WordValue]:
    """Removes transparent wrappers (`nice -n 5 nohup cmd` is judged as `cmd`) and remembers them."""
    while words and not words[0].dynamic and words[0].text in _TRANSPARENT:
        name = words[0].text
        short, long = _TRANSPARENT[name]
        p = parse(words[1:], short, long, permute=False)
        if name == "command" and p.has("-v", "-V"):
            return []
        first = p.operands[0] + 1 if p.operands else len(words)
        j.wrappers.extend(words[:first])
        words = words[first:]
    return words


def _program(head: WordValue, args: list[WordValue], env: Env, j: Judgement, shown: str) -> None:
    name = head.text.rsplit("/", 1)[-1] if "/" in head.text else head.text
    if "/" in head.text and not head.text.startswith(_SYSTEM_DIRS):
        path = resolve(head.text, env)
        where = "in the workspace" if path is not None and env.inside(path) else "outside the system directories"
        j.raise_to("run", f"{shown} runs {head.text}, a program {where}")
        return
    if name == "git":
        judge_git(args, env, j, shown)
    elif name in ("cd", "pushd", "popd"):
        _cd(name, args, env, j, shown)
    elif name in ("set", "shopt"):
        return
    elif name == "let":
        _let(args, j, shown)
    elif is_runner(name):
        judge_runner(name, args, env, j, shown)
    elif name in SPECS or name == "dd":
        judge_writer(name, args, env, j, shown)
    elif judge_reader(name, args, env, j, shown):
        return
    elif name in ("tar", "gtar", "bsdtar"):
        judge_tar(args, env, j, shown)
    elif name in NETWORK:
        _network(name, args, env, j, shown)
    else:
        _other(name, args, j, shown)


def _let(args: list[WordValue], j: Judgement, shown: str) -> None:
    """let evaluates each word as arithmetic: a name in it is expanded and evaluated again, and a subscript
    (`a[$(cmd)]`, written or held in a variable) runs commands; only literal numbers are harmless."""
    for word in args:
        if word.dynamic or not _LITERAL_ARITHMETIC.fullmatch(word.text):
            j.raise_to("ask", f"{shown}: let evaluates {word.source} as arithmetic, which can run commands hidden "
                              "in array subscripts", word)


_LITERAL_ARITHMETIC = re.compile(r"[0-9\s+\-*/%()<>=!&|^~]*")


def _cd(name: str, args: list[WordValue], env: Env, j: Judgement, shown: str) -> None:
    operands = [a for a in args if a.dynamic or not (a.text.startswith("-") and len(a.text) > 1)]
    if name == "popd" or (operands and (operands[0].dynamic or operands[0].text == "-")):
        j.raise_to("ask", f"{shown} changes to a directory only known at run time")
        return
    path = resolve(operands[0].text if operands else env.home, env)
    if path is None or not env.inside(path):
        j.raise_to("run", f"{shown} changes to {path or operands[0].text}, outside the workspace")


def _network(name: str, args: list[WordValue], env: Env, j: Judgement, shown: str) -> None:
    j.raise_to("run", f"{shown} reaches the network")
    j.hurt("medium", f"network: {shown}")
    if name in ("curl", "wget"):
        p = parse(args, "oOPKd" if name == "wget" else "oKdHXTue",
                  ("--output", "--output-document", "--directory-prefix", "--config", "--data"))
        for option, value, index in p.options:
            if value and option in ("-o", "--output", "--output-document") or (name == "wget" and option == "-O"):
                write_target(WordValue(value or "", args[index].source, args[index].start, args[index].end),
                             env, j, "writes", shown)
        for word in args:
            if word.text.startswith("file://"):
                read_target(WordValue(word.text[7:], word.source, word.start, word.end), env, j, shown)


def _other(name: str, args: list[WordValue], j: Judgement, shown: str) -> None:
    sub = next((a.text for a in args if not a.text.startswith("-")), "")
    if name in _INSTALLERS and (sub in _INSTALLERS[name] or "" in _INSTALLERS[name]):
        j.hurt("medium", f"installs or runs packages from the network: {shown}")
    if name in _SYSTEM or name.startswith("mkfs"):
        j.hurt("high", f"changes the system: {shown}")
    j.raise_to("run", f"{shown}: {name} is not known to be read-only")
