"""Commands that write or delete files (rm, mv, cp, touch, tee, dd of=...): which paths they touch.

Each spec names the options that take a value (so `-m 755` is not read as
a path) and which operands are written.  Every written path is judged by
`judgement.write_target`: outside the workspace is denied, inside is an
edit, unknown is asked.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from core.policy.bash.findings import Env, Judgement, read_target, resolve, write_target
from core.policy.bash.options import Parsed, parse
from core.policy.bash.words import WordValue


def _all(args: list[WordValue], p: Parsed) -> list[WordValue]:
    return [args[i] for i in p.operands]


def _last(args: list[WordValue], p: Parsed) -> list[WordValue]:
    return [args[p.operands[-1]]] if len(p.operands) > 1 else []


def _after_first(args: list[WordValue], p: Parsed) -> list[WordValue]:
    return [args[i] for i in p.operands[1:]]


Targets = Callable[[list[WordValue], Parsed], list[WordValue]]
# program: (options taking a value (short), (long), verb, which operands are written)
SPECS: dict[str, tuple[str, tuple[str, ...], str, Targets]] = {
    "rm": ("", (), "deletes", _all),
    "rmdir": ("", (), "deletes", _all),
    "unlink": ("", (), "deletes", _all),
    "shred": ("ns", ("--iterations", "--size", "--random-source"), "deletes", _all),
    "touch": ("dtr", ("--date", "--reference", "--time"), "writes", _all),
    "mkdir": ("m", ("--mode", "--context"), "writes", _all),
    "mv": ("tS", ("--target-directory", "--suffix"), "writes", _all),
    "cp": ("tS", ("--target-directory", "--suffix"), "writes", _last),
    "ln": ("tS", ("--target-directory", "--suffix"), "writes", _last),
    "install": ("moOgtS", ("--mode", "--owner", "--group", "--target-directory", "--suffix"), "writes", _last),
    "chmod": ("", ("--reference",), "writes", _after_first),
    "chown": ("", ("--reference", "--from"), "writes", _after_first),
    "chgrp": ("", ("--reference",), "writes", _after_first),
    "truncate": ("sr", ("--size", "--reference"), "writes", _all),
    "tee": ("", (), "writes", _all),
}


def judge_writer(name: str, args: list[WordValue], env: Env, j: Judgement, shown: str) -> None:
    """Judges a known file-writing command `name` with arguments `args`."""
    if name == "dd":
        _dd(args, env, j, shown)
        return
    short, long, verb, pick = SPECS[name]
    p = parse(args, short, long)
    targets = pick(args, p)
    if name in ("chmod", "chown", "chgrp") and p.has("--reference"):
        targets = _all(args, p)
    if name in ("mv", "cp", "ln", "install") and (p.has("-t", "--target-directory") or
                                                   (name == "install" and p.has("-d", "--directory"))):
        targets = _all(args, p) if name in ("mv", "install") else []
        directory = next(((value, index) for name, value, index in p.options
                          if name in ("-t", "--target-directory") and value is not None), None)
        if directory is not None:
            targets.append(_directory_word(args, *directory))
    if name == "ln" and len(p.operands) == 1 and env.cwd is not None and not p.has("-t", "--target-directory"):
        source = args[p.operands[0]]
        targets = [WordValue(source.text.rstrip("/").rsplit("/", 1)[-1], source.source, source.start, source.end,
                             source.kinds)]
    for word in targets:
        write_target(word, env, j, verb, shown)
    if name in ("cp", "mv"):
        for i in p.operands:
            if all(args[i] is not t for t in targets):
                read_target(args[i], env, j, shown)
    if name == "ln":
        _link_sources(args, p, targets, env, j, shown)
    _impact(name, args, p, j, shown)


def _link_sources(args: list[WordValue], p: Parsed, targets: list[WordValue], env: Env, j: Judgement,
                  shown: str) -> None:
    """A link that leads out of the workspace is a door: later writes through it land outside.

    `ln -s ~ h && rm -rf h/` deletes the home directory although every path
    written looks inside the workspace, so a link to a place outside asks,
    whatever the mode and the rules.
    """
    symbolic = p.has("-s", "--symbolic")
    links = [t for t in targets if not t.dynamic]
    place = resolve(links[-1].text, env) if links else env.cwd
    if place is not None and links and not (p.has("-t", "--target-directory") or place.is_dir()):
        place = place.parent
    for index in p.operands:
        source = args[index]
        if source.dynamic or any(source is t for t in targets):
            continue
        base = Env(env.workspace, env.home, place if symbolic else env.cwd)
        path = resolve(source.text, base, follow=True)
        if path is not None and not env.inside(path):
            j.raise_to("ask", f"{shown} links to {path}, outside the workspace: writes through the link "
                              "would land there", source)


def _directory_word(args: list[WordValue], value: str, index: int) -> WordValue:
    """The target directory as a word: the next word when given apart (`-rt DIR`), else the attached text."""
    word = args[index]
    if index + 1 < len(args) and args[index + 1].text == value and not word.text.endswith(value):
        return args[index + 1]
    return WordValue(value, word.source, word.start, word.end, word.kinds)


def _dd(args: list[WordValue], env: Env, j: Judgement, shown: str) -> None:
    for word in args:
        key, eq, value = word.text.partition("=")
        if not eq or word.dynamic:
            if word.dynamic:
                j.raise_to("ask", f"{shown} has an operand only known at run time ({word.source})", word)
            continue
        part = WordValue(value, word.source, word.start, word.end)
        if key == "of":
            write_target(part, env, j, "writes", shown)
            j.hurt("medium", f"writes raw data: {shown}")
        elif key == "if":
            read_target(part, env, j, shown)


def _impact(name: str, args: list[WordValue], p: Parsed, j: Judgement, shown: str) -> None:
    if name in ("rm", "rmdir", "unlink", "shred"):
        forceful = p.has("-r", "-R", "-f", "--recursive", "--force") or name == "shred"
        j.hurt("high" if forceful else "medium", f"deletes{' recursively' if forceful else ''}: {shown}")
    elif name in ("chown", "chgrp"):
        j.hurt("high", f"changes ownership: {shown}")
        j.raise_to("run", f"{shown} changes file ownership")
    elif name == "chmod" and p.operands and _setuid(args[p.operands[0]].text):
        j.hurt("high", f"sets a setuid/setgid bit: {shown}")
        j.raise_to("ask", f"{shown} sets a setuid or setgid bit")
    else:
        j.hurt("medium", f"writes files: {shown}")


def _setuid(mode: str) -> bool:
    """Whether a chmod mode sets setuid or setgid: `u+s`, `+s`, `g=rxs`, `4755`, `2755`."""
    if mode.isdigit():
        return len(mode) == 4 and mode[0] in "234567"
    return re.search(r"[+=][rwxXtugo]*s", mode) is not None
