"""Commands that run other code: shells, interpreters, wrappers, `find -exec`, `eval`.

No rule may allow these: the code they run is a string, a file, stdin, or
a command line assembled later, so the words a rule matches are not what
runs.  Where the inner command is visible (`timeout 5 curl x`, `bash -c
'rm -rf ~'`, `find -exec rm {} ;`) it is handed back so that deny rules and
the outside-the-workspace check still see it.
"""

from __future__ import annotations

import re

from core.policy.bash.findings import Env, Judgement, read_list, read_target, write_target
from core.policy.bash.options import parse
from core.policy.bash.words import WordValue

SHELLS = frozenset({"sh", "bash", "rbash", "zsh", "dash", "ksh", "mksh", "ash", "yash", "posh", "fish", "csh",
                    "tcsh"})
_INLINE = {"python": "c", "pypy": "c", "perl": "eE", "ruby": "e", "node": "ep", "nodejs": "ep", "php": "rBRFE",
           "lua": "e", "luajit": "e", "Rscript": "e", "osascript": "e", "julia": "eE", "bun": "e", "tclsh": "",
           "pwsh": "cCeE", "powershell": "cCeE", "deno": ""}
_INLINE_LONG = ("--eval", "--print", "--command", "-Command", "-EncodedCommand")
_INTERPRETER = re.compile(r"(python|pypy)[0-9.]*|" + "|".join(k for k in _INLINE if k not in ("python", "pypy")))
_WRAPPERS = {
    "timeout": ("ks", ("--kill-after", "--signal"), 1), "sudo": ("ughpCDrtUT", ("--user", "--group"), 0),
    "doas": ("uC", (), 0), "setsid": ("", (), 0), "chroot": ("", ("--userspec", "--groups"), 1),
    "flock": ("wEc", ("--timeout", "--conflict-exit-code", "--command"), 1), "unshare": ("", (), 0),
    "nsenter": ("tSG", ("--target",), 0), "strace": ("eoOpPsSuIXa", (), 0), "ltrace": ("eoplsSuna", (), 0),
    "xargs": ("adEILnPs", ("--arg-file", "--delimiter", "--max-args", "--max-procs", "--max-lines",
                            "--max-chars", "--process-slot-var"), 0),
    "runuser": ("ugc", ("--user", "--group", "--command"), 0), "pkexec": ("", ("--user",), 0),
    "exec": ("a", (), 0), "coproc": ("", (), 0), "busybox": ("", (), 0),
}
"""program: (short options with a value, long ones, operands to skip before the inner command)."""
_WHY = {
    "eval": "runs its arguments as a new command line", "exec": "replaces the shell or rewires its descriptors",
    "source": "runs the commands in a file", ".": "runs the commands in a file",
    "xargs": "runs a command built from its input", "timeout": "runs another command",
    "sudo": "runs a command as another user", "doas": "runs a command as another user",
    "su": "runs a command as another user", "pkexec": "runs a command as another user",
    "runuser": "runs a command as another user", "alias": "changes what a command name runs",
    "enable": "loads or swaps builtins", "fc": "re-runs commands from history", "watch": "runs a command string",
    "parallel": "runs commands built from its input", "setsid": "runs a command outside the group Belay stops",
    "chroot": "runs a command in another root", "flock": "runs another command", "unshare": "runs another command",
    "nsenter": "runs a command in another namespace", "strace": "runs another command",
    "ltrace": "runs another command", "gdb": "runs and controls programs", "busybox": "is a shell and more",
    "script": "runs a shell", "expect": "runs a script", "at": "schedules a command", "batch": "schedules a command",
    "crontab": "schedules commands", "systemd-run": "runs a command as a service", "coproc": "runs a coprocess",
    "env": "runs another command with a changed environment", "trap": "runs its action later, on a signal or exit",
    "builtin": "runs a builtin", "command": "runs another command",
}
PRIVILEGE = frozenset({"sudo", "doas", "su", "pkexec", "runuser"})


def is_runner(name: str) -> bool:
    return name in _WHY or name in SHELLS or _INTERPRETER.fullmatch(name) is not None or name == "find"


def judge_runner(name: str, args: list[WordValue], env: Env, j: Judgement, shown: str) -> None:
    """Judges a program that runs code; sets `j.inner`/`j.code` to what it runs, when visible."""
    if name == "find":
        _find(args, env, j, shown)
    elif name in SHELLS:
        _shell(name, args, j, shown)
    elif _INTERPRETER.fullmatch(name):
        _interpreter(name, args, j, shown)
    elif name == "env":
        _env(args, j, shown)
    elif name == "trap":
        _trap(args, j, shown)
    else:
        _wrapper(name, args, j, shown)
    if name in PRIVILEGE:
        j.hurt("high", f"runs with other privileges: {shown}")


def _wrapper(name: str, args: list[WordValue], j: Judgement, shown: str) -> None:
    j.raise_to("ask", f"{shown}: {name} {_WHY[name]}")
    if name in ("eval", "watch") and args and not any(a.dynamic for a in args):
        text = " ".join(a.text for a in args if not (name == "watch" and a.text.startswith("-")))
        j.code.append((name, WordValue(text, text, args[0].start, args[-1].end)))
    elif name == "su":
        p = parse(args, "cgGs", ("--command", "--group", "--shell"))
        j.code += [("su -c", _value_word(args, i, v)) for n, v, i in p.options if n in ("-c", "--command") and v]
    elif name in _WRAPPERS:
        short, long, skip = _WRAPPERS[name]
        p = parse(args, short, long, permute=False)
        inner = [args[i] for i in p.operands[skip:]]
        if name == "coproc":  # `coproc [NAME] { cmd; }`, which tree-sitter reads as words
            brace = next((k for k, w in enumerate(inner[:2]) if w.text == "{"), None)
            inner = inner[brace + 1:] if brace is not None else inner
        if name == "flock":
            j.code += [("flock -c", _value_word(args, i, v)) for n, v, i in p.options if n in ("-c", "--command")
                       and v]
        if inner:
            j.inner.append((name, inner))


def _value_word(args: list[WordValue], index: int, value: str) -> WordValue:
    word = args[index + 1] if args[index].text in ("-c", "--command") and index + 1 < len(args) else args[index]
    return WordValue(value, word.source, word.start, word.end, word.kinds)


def _env(args: list[WordValue], j: Judgement, shown: str) -> None:
    p = parse(args, "uCS", ("--unset", "--chdir", "--split-string"), permute=False)
    if p.has("-S", "--split-string"):
        j.raise_to("ask", f"{shown}: env -S splits a string into a command")
    rest = [args[i] for i in p.operands]
    while rest and "=" in rest[0].text and not rest[0].text.startswith("="):
        rest = rest[1:]
    if rest:
        j.raise_to("ask", f"{shown}: env {_WHY['env']}")
        j.inner.append(("env", rest))
    else:  # no command: it prints the environment
        j.raise_to("run", f"{shown} prints the environment, where API keys and tokens live")


def _trap(args: list[WordValue], j: Judgement, shown: str) -> None:
    p = parse(args, "", permute=False)
    if not p.operands or p.has("-l", "-p"):
        return
    action = args[p.operands[0]]
    if action.dynamic:
        j.raise_to("ask", f"{shown}: the trap action is only known at run time", action)
    elif action.text not in ("", "-") and len(p.operands) > 1:
        j.raise_to("ask", f"{shown}: trap {_WHY['trap']}", action)
        j.code.append(("trap", action))


def _shell(name: str, args: list[WordValue], j: Judgement, shown: str) -> None:
    p = parse(args, "oO", ("--rcfile", "--init-file"), permute=False)
    if p.has("-c") or any("c" in n[1:] for n, _, _ in p.options if not n.startswith("--")):
        j.raise_to("ask", f"{shown}: {name} -c runs a string as a script")
        if p.operands:
            j.code.append((f"{name} -c", args[p.operands[0]]))
    elif p.has("-s") or not p.operands or args[p.operands[0]].text == "-":
        j.raise_to("ask", f"{shown}: {name} reads commands from its input, which Belay cannot see")
    else:
        j.raise_to("run", f"{shown} runs the script {args[p.operands[0]].source}, which Belay does not analyse")


def _interpreter(name: str, args: list[WordValue], j: Judgement, shown: str) -> None:
    letters = _INLINE.get(re.sub(r"[0-9.]+$", "", name), "")
    for word in args:
        text = word.text
        if word.dynamic:
            continue
        if text.startswith(_INLINE_LONG) or (name == "deno" and text == "eval") or \
                (text.startswith("-") and not text.startswith("--") and any(c in letters for c in text[1:])):
            j.raise_to("ask", f"{shown}: {text.split('=')[0]} runs code given on the command line")
            return
    operands = [a for a in args if not a.text.startswith("-") or a.dynamic]
    if any(a.text in ("-m", "run") for a in args) or operands:
        j.raise_to("run", f"{shown} runs a program Belay does not analyse")
    elif all(a.text in ("--version", "-V", "--help", "-h") for a in args) and args:
        return
    else:
        j.raise_to("ask", f"{shown}: {name} reads a program from its input, which Belay cannot see")


_FIND_EXEC = ("-exec", "-execdir", "-ok", "-okdir")
_FIND_WRITE = ("-fprint", "-fprint0", "-fprintf", "-fls")


def _find_options(args: list[WordValue], j: Judgement, shown: str) -> int:
    """Skips find's leading options (`-H -L -P -D debug -O3`); following links may lead out of the workspace."""
    i = 0
    while i < len(args) and not args[i].dynamic and args[i].text in ("-H", "-L", "-P", "-D") or \
            (i < len(args) and not args[i].dynamic and args[i].text.startswith("-O") and args[i].text[2:].isdigit()):
        if args[i].text in ("-H", "-L"):
            j.raise_to("run", f"{shown}: {args[i].text} follows symbolic links, which may lead outside the "
                              "workspace", args[i])
        i += 2 if args[i].text == "-D" else 1
    return i


def _find(args: list[WordValue], env: Env, j: Judgement, shown: str) -> None:
    first = _find_options(args, j, shown)
    starts = []
    for word in args[first:]:
        if word.text.startswith(("-", "(", "!")) or word.dynamic:
            break
        starts.append(word)
    for word in starts or [WordValue(".", ".", 0, 0)]:
        read_target(word, env, j, shown)
    i = first + len(starts)
    while i < len(args):
        i = _find_primary(args, i, starts, env, j, shown) + 1


def _find_primary(args: list[WordValue], i: int, starts: list[WordValue], env: Env, j: Judgement, shown: str) -> int:
    """Judges the expression word at `i` (with the words it takes); returns the index of its last word."""
    word = args[i]
    if word.dynamic:
        j.raise_to("ask", f"{shown}: {word.source} is only known at run time and could be -exec", word)
    elif word.text in _FIND_EXEC:
        end = next((k for k in range(i + 1, len(args)) if args[k].text in (";", "+")), len(args))
        j.raise_to("ask", f"{shown}: {word.text} runs a command for each file", word)
        if end > i + 1:
            j.inner.append((f"find {word.text}", args[i + 1:end]))
        return end
    elif word.text == "-follow":
        j.raise_to("run", f"{shown}: -follow follows symbolic links, which may lead outside the workspace", word)
    elif word.text == "-files0-from" and i + 1 < len(args):
        read_list(args[i + 1], env, j, shown)
        return i + 1
    elif word.text == "-delete":
        j.raise_to("ask", f"{shown}: -delete removes every file it finds", word)
        for start in starts or [WordValue(".", ".", word.start, word.end)]:
            write_target(start, env, j, "deletes", shown)
        j.hurt("high", f"deletes recursively: {shown}")
    elif word.text in _FIND_WRITE:
        j.raise_to("ask", f"{shown}: {word.text} writes a file", word)
    return i
