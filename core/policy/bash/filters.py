"""Text filters and searchers (grep, rg, jq, sed, awk): which words are patterns or programs, which are files.

They only read, unless a program or an option says otherwise: `sed`'s `e`
and `w` commands, `awk`'s `system()`, pipes, `print >` and gawk's `@load`
and indirect calls (`@f()` can name `system`), `rg --pre`.  Telling the
pattern from the files matters both ways: a pattern is not a path to judge
(`grep /api/ src` reads `src`, not `/api/`), and a file is (`rg -epat
~/.ssh/id_rsa` reads a secret), so each program's options that take a
value are listed.
"""

from __future__ import annotations

import re

from core.policy.bash.findings import Env, Judgement, read_target, write_target
from core.policy.bash.options import Parsed, parse
from core.policy.bash.words import SAFE_DYNAMIC, WordValue

_GREP_LONG = ("--regexp", "--file", "--after-context", "--before-context", "--context", "--max-count", "--devices",
              "--directories", "--label", "--include", "--exclude", "--exclude-from", "--exclude-dir",
              "--binary-files", "--group-separator")
_RG_LONG = ("--regexp", "--file", "--glob", "--iglob", "--type", "--type-not", "--type-add", "--type-clear",
            "--max-count", "--after-context", "--before-context", "--context", "--threads", "--max-columns",
            "--encoding", "--replace", "--max-depth", "--maxdepth", "--max-filesize", "--path-separator", "--colors",
            "--color", "--context-separator", "--field-match-separator", "--field-context-separator", "--sort",
            "--sortr", "--pre", "--pre-glob", "--engine", "--dfa-size-limit", "--regex-size-limit", "--ignore-file",
            "--hostname-bin", "--hyperlink-format", "--generate")
_RG_RUNS = ("--pre", "--pre-glob", "--hostname-bin", "--search-zip", "-z")
_PATTERN_OPTIONS = ("-e", "--regexp", "-f", "--file")
_FILE_OPTIONS = ("-f", "--file", "--exclude-from", "--ignore-file")


def judge_grep(name: str, args: list[WordValue], env: Env, j: Judgement, shown: str) -> None:
    """grep, egrep, fgrep and rg: the first operand is the pattern unless -e or -f gave one."""
    rg = name == "rg"
    for word in args:
        if word.dynamic and not word.kinds <= SAFE_DYNAMIC:
            j.raise_to("ask", f"{shown}: {word.source} is only known at run time ({word.why()})", word)
    p = parse(args, "ABCeEfgjmMrtTd" if rg else "ABCDdefm", _RG_LONG if rg else _GREP_LONG)
    for option, _, index in p.options:
        if rg and (option in _RG_RUNS or (option == "-z" and not args[index].text.startswith("--"))):
            j.raise_to("ask", f"{shown}: {option} runs other programs", args[index])
    _read_values(args, p, _FILE_OPTIONS, env, j, shown)
    files = p.operands if p.has(*_PATTERN_OPTIONS) else p.operands[1:]
    for index in files:
        read_target(args[index], env, j, shown)


def judge_jq(args: list[WordValue], env: Env, j: Judgement, shown: str) -> None:
    """jq FILTER FILES...: `--rawfile`/`--slurpfile NAME FILE` and `-f FILE` read files too."""
    files: list[WordValue] = []
    filter_seen, rest_are_args, i = False, False, 0
    while i < len(args):
        text = args[i].text
        if not rest_are_args and text in ("--arg", "--argjson", "--rawfile", "--slurpfile"):
            if text in ("--rawfile", "--slurpfile") and i + 2 < len(args):
                files.append(args[i + 2])
            i += 3
            continue
        if not rest_are_args and text in ("-f", "--from-file", "-L", "--indent"):
            if text in ("-f", "--from-file") and i + 1 < len(args):
                files.append(args[i + 1])
                filter_seen = True
            i += 2
            continue
        if text in ("--args", "--jsonargs"):
            rest_are_args = True
        elif args[i].dynamic or not text.startswith("-") or text == "-":
            if filter_seen and not rest_are_args:
                files.append(args[i])
            filter_seen = True
        i += 1
    for word in files:
        read_target(word, env, j, shown)


def judge_sed(args: list[WordValue], env: Env, j: Judgement, shown: str) -> None:
    if not _static(args, j, shown):
        return
    p = parse(args, "efl", ("--expression", "--file", "--line-length"))
    in_place = p.has("-i") or any(n.startswith("--in-place") or (len(n) > 3 and "--in-place".startswith(n))
                                  for n, _, _ in p.options)  # sed takes any unambiguous start: --in-pl
    if p.has("-f", "--file"):
        j.raise_to("ask", f"{shown} reads its script from a file Belay does not check for w or e commands")
    scripts = p.values("-e", "--expression") or ([args[p.operands[0]].text] if p.operands else [])
    files = p.operands if p.has("-e", "--expression", "-f", "--file") else p.operands[1:]
    for script in scripts:
        if not _plain_sed(script):
            j.raise_to("ask", f"{shown}: the sed script may write files or run commands (w, e, r)")
    for index in files:
        if in_place:
            write_target(args[index], env, j, "writes", shown)
        else:
            read_target(args[index], env, j, shown)
    if in_place:
        j.hurt("medium", f"edits files in place: {shown}")


_SED_S = re.compile(r"s(.)(?:\\.|(?!\1).)*\1(?:\\.|(?!\1).)*\1[gpiImM0-9]*")
_SED_Y = re.compile(r"y(.)(?:\\.|(?!\1).)*\1(?:\\.|(?!\1).)*\1")
_SED_ADDRESS = re.compile(r"/(?:\\.|[^/])*/[IM]*|\\(.)(?:\\.|(?!\1).)*\1[IM]*")
_SED_PLAIN = re.compile(r"[\d\s,;$!{}+~pPdDnNqQ=lhHgGxz]*")


def _plain_sed(script: str) -> bool:
    """Whether a sed script only prints and transforms (no w/W/e/r/R and no s///e or s///w)."""
    rest = _SED_ADDRESS.sub(" ", _SED_Y.sub(" ", _SED_S.sub(" ", script)))
    return _SED_PLAIN.fullmatch(rest) is not None


_AWK_RISKS = re.compile(r"system|getline|\||@")
"""What lets an awk program run commands, read other files, or call a function by name (gawk's `@f()`)."""


def judge_awk(args: list[WordValue], env: Env, j: Judgement, shown: str) -> None:
    if not _static(args, j, shown):
        return
    p = parse(args, "FvfEileW", ("--field-separator", "--assign", "--file", "--exec", "--include", "--load",
                                 "--source"), permute=False)
    if p.has("-f", "--file", "-E", "--exec", "-i", "--include", "-l", "--load", "-W"):
        j.raise_to("ask", f"{shown} runs an awk program from a file or extension Belay does not check")
        return
    programs, operands = p.values("-e", "--source"), p.operands
    if not programs:
        programs, operands = [args[i].text for i in operands[:1]], operands[1:]
    if any(_AWK_RISKS.search(program) or ("print" in program and ">" in program) for program in programs):
        j.raise_to("ask", f"{shown}: the awk program can run commands, write or read other files "
                          "(system, getline, |, >, @)")
    for index in operands:
        if "=" not in args[index].text:
            read_target(args[index], env, j, shown)


def _static(args: list[WordValue], j: Judgement, shown: str) -> bool:
    """Asks when any word is dynamic: a computed word could be the option or script that writes or runs."""
    dynamic = [w for w in args if w.dynamic]
    for word in dynamic:
        j.raise_to("ask", f"{shown}: {word.source} is only known at run time and could be an option", word)
    return not dynamic


def _read_values(args: list[WordValue], p: Parsed, names: tuple[str, ...], env: Env, j: Judgement,
                 shown: str) -> None:
    """Judges the values of options that name a file read (`-f FILE`, `--file=FILE`)."""
    for option, value, index in p.options:
        if option in names and value:
            attached = args[index].text != option and args[index].text.endswith(value)
            word = args[index] if attached or index + 1 >= len(args) else args[index + 1]
            read_target(WordValue(value, word.source, word.start, word.end, word.kinds), env, j, shown)
