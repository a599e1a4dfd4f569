"""tar: which archive it writes or reads, which directory it extracts into, and the options that run programs.

`tar czf /tmp/x.tgz src` writes outside the workspace; `tar czf x.tgz
~/.ssh` reads a credential store into the workspace; `tar xf x.tar -C /`
extracts over the system; `--checkpoint-action=exec=...` and friends run
commands.  Old-style bundled letters (`tar czf ARCHIVE`) take their values
from the following words in order, as tar reads them.
"""

from __future__ import annotations

from core.policy.bash.findings import Env, Judgement, read_list, read_target, resolve, write_target
from core.policy.bash.options import Parsed, parse
from core.policy.bash.words import WordValue

_RUNS_LONG = ("--checkpoint-action", "--to-command", "--use-compress-program", "--info-script",
              "--new-volume-script", "--rsh-command", "--rmt-command")
_RUNS = (*_RUNS_LONG, "-I", "-F")
_VALUE_SHORT = "fCbHKLNTVgXIF"
_VALUE_LONG = ("--file", "--directory", "--blocking-factor", "--format", "--starting-file", "--tape-length",
               "--newer", "--after-date", "--files-from", "--label", "--listed-incremental", "--exclude-from",
               "--use-compress-program", "--info-script", "--new-volume-script", "--index-file", "--owner",
               "--group", "--mode", "--mtime", "--transform", "--xform", "--exclude", "--suffix", *_RUNS_LONG)
_MODES = {"c": "create", "--create": "create", "r": "append", "--append": "append", "u": "append",
          "--update": "append", "A": "append", "--catenate": "append", "--concatenate": "append",
          "--delete": "append", "x": "extract", "--extract": "extract", "--get": "extract", "t": "list",
          "--list": "list", "d": "list", "--diff": "list", "--compare": "list"}


def judge_tar(args: list[WordValue], env: Env, j: Judgement, shown: str) -> None:
    """Judges `tar ARGS`."""
    dynamic = next((w for w in args if w.dynamic), None)
    if dynamic is not None:
        j.raise_to("ask", f"{shown}: {dynamic.source} is only known at run time and can make tar run a command",
                   dynamic)
        return
    words = _unbundle(args)
    p = parse(words, _VALUE_SHORT, _VALUE_LONG)
    runs = next(((name, index) for name, _, index in p.options if name in _RUNS), None)
    if runs is not None:  # bundled (`-cIsh`), abbreviated (`--to-com=sh`) or whole
        j.raise_to("ask", f"{shown}: {runs[0]} can make tar run a command", words[runs[1]])
        return
    mode = next((_MODES[n.lstrip("-") if len(n) == 2 else n] for n, _, _ in p.options
                 if (n.lstrip("-") if len(n) == 2 else n) in _MODES), "list")
    where = _directory(words, p, env, j, shown)
    _archive(words, p, mode, env, j, shown)
    for word in _values(words, p, "-g", "--listed-incremental", "--index-file"):
        write_target(word, env, j, "writes", shown)
    for word in _values(words, p, "-X", "--exclude-from"):
        read_target(word, env, j, shown)
    for word in _values(words, p, "-T", "--files-from"):
        read_list(word, env, j, shown)
    if mode in ("create", "append"):
        for index in p.operands:
            read_target(words[index], where, j, shown)
    if p.has("--remove-files"):
        for index in p.operands:
            write_target(words[index], where, j, "deletes", shown)
        j.hurt("high", f"deletes the files it archives: {shown}")
    if mode == "extract":
        _extract(words, p, where, j, shown)


def _archive(words: list[WordValue], p: Parsed, mode: str, env: Env, j: Judgement, shown: str) -> None:
    """The archive itself (`-f`): written when creating or appending, read otherwise, remote when `host:`."""
    for word in _values(words, p, "-f", "--file"):
        if word.text == "-":
            continue
        if _remote(word.text) and not p.has("--force-local"):
            j.raise_to("run", f"{shown}: {word.text} is an archive on another host, reached through a remote "
                              "shell", word)
        elif mode in ("create", "append"):
            write_target(word, env, j, "writes", shown)
            j.hurt("medium", f"writes an archive: {shown}")
        else:
            read_target(word, env, j, shown)


def _extract(words: list[WordValue], p: Parsed, where: Env, j: Judgement, shown: str) -> None:
    if p.has("-P", "--absolute-names"):
        j.raise_to("ask", f"{shown}: -P extracts absolute names anywhere on the disk")
    if not p.has("-O", "--to-stdout"):
        write_target(WordValue(".", ".", 0, 0), where, j, "writes", shown)
        j.raise_to("run", f"{shown} extracts files Belay cannot see (they may land in .git or other protected "
                          "places)")
        j.hurt("medium", f"extracts files: {shown}")


def _directory(words: list[WordValue], p: Parsed, env: Env, j: Judgement, shown: str) -> Env:
    """The environment tar works in after `-C DIR` (an unknown directory when DIR cannot be placed)."""
    directories = _values(words, p, "-C", "--directory")
    if not directories:
        return env
    path = resolve(directories[-1].text, env) if not directories[-1].dynamic else None
    return Env(env.workspace, env.home, path)


def _values(words: list[WordValue], p: Parsed, *names: str) -> list[WordValue]:
    """The values of the options `names`, as words placed where the option is."""
    found = []
    for option, value, index in p.options:
        if option in names and value is not None:
            word = words[index]
            found.append(WordValue(value, word.source, word.start, word.end, word.kinds))
    return found


def _remote(archive: str) -> bool:
    """`host:path` or `user@host:path`: tar reaches it with rsh/ssh (a colon before any slash)."""
    return ":" in archive.split("/", 1)[0]


def _unbundle(args: list[WordValue]) -> list[WordValue]:
    """`czf ARCHIVE DIR` (old style, no dash) as `-c -z -f ARCHIVE DIR`."""
    if not args or args[0].dynamic or args[0].text.startswith("-"):
        return list(args)
    first, rest = args[0], list(args[1:])
    words: list[WordValue] = []
    for letter in first.text:
        words.append(WordValue(f"-{letter}", first.source, first.start, first.end))
        if letter in _VALUE_SHORT and rest:
            words.append(rest.pop(0))
    return words + rest
