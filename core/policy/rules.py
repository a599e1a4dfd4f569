"""Permission rules in Claude Code's syntax: parsing, normalising and matching one rule.

    Bash                   every Bash command
    Bash(npm run test:*)   commands whose words start with `npm run test` (legacy prefix form)
    Bash(git * main)       `*` matches any run of characters over the command line;
                           a single trailing ` *` also matches nothing (`Bash(ls *)` covers `ls`)
    Bash(ls)               exactly `ls`
    Read(./src/**)         paths, gitignore-style: `**`, `*`, `?`, `[...]`; a pattern without `/`
                           matches a name at any depth; a matching directory covers its contents
      `//abs/path`  absolute     `~/x`  under the home directory
      `/x` and `./x` and `x/y`  relative to the workspace root
    Edit(...)              covers Edit, Write, MultiEdit, NotebookEdit;  Read(...) covers Read, Glob, Grep, LS
    WebFetch(domain:example.com)
    mcp__server            every tool of an MCP server;  mcp__server__tool  one tool

A Bash rule is matched against one simple command's words joined by spaces
(see `core.policy.bash`), never against the raw line, so `Bash(ls:*)` cannot
cover `ls; rm -rf ~`.  A malformed rule raises `ValueError` naming it.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal
from urllib.parse import urlsplit

from core.tools.names import ToolName

EDIT_TOOLS = frozenset({ToolName.EDIT, ToolName.WRITE, ToolName.MULTI_EDIT, ToolName.NOTEBOOK_EDIT})
READ_TOOLS = frozenset({ToolName.READ, ToolName.GLOB, ToolName.GREP, ToolName.LS, ToolName.NOTEBOOK_READ})
PATH_TOOLS = EDIT_TOOLS | READ_TOOLS
_FAMILIES: dict[str, frozenset[ToolName]] = {ToolName.EDIT: EDIT_TOOLS, ToolName.READ: READ_TOOLS}
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_.-]*")


@dataclass(frozen=True)
class Rule:
    """One parsed rule; `text` is its normalised form, the one stored and shown."""

    text: str
    tool: str
    specifier: str | None = None
    kind: Literal["tool", "server", "prefix", "glob", "exact", "path", "domain"] = "tool"
    words: tuple[str, ...] = ()
    """The prefix or exact words of a Bash rule."""
    regex: re.Pattern[str] | None = None
    """A Bash glob over the command line, or a path pattern relative to `base`."""
    base: Literal["absolute", "home", "workspace"] = "workspace"

    def covers_tool(self, tool: str) -> bool:
        """Whether the rule is about `tool` at all (a server rule covers its tools, Edit covers Write)."""
        if self.kind == "server":
            return tool.startswith(self.tool + "__")
        return tool == self.tool or tool in _FAMILIES.get(self.tool, ())

    def matches_command(self, argv: Sequence[str]) -> bool:
        """Whether a Bash rule covers one simple command given by its literal words."""
        if self.tool != ToolName.BASH:
            return False
        if self.kind == "tool":
            return True
        if self.kind == "prefix":
            return tuple(argv[:len(self.words)]) == self.words
        if self.kind == "exact":
            return tuple(argv) == self.words
        return self.regex is not None and self.regex.fullmatch(" ".join(argv)) is not None

    def matches_path(self, path: str, workspace: str, home: str) -> bool:
        """Whether a path rule covers an absolute, normalised `path`."""
        if self.kind == "tool":
            return True
        if self.kind != "path" or self.regex is None:
            return False
        base = {"absolute": "/", "home": home, "workspace": workspace}[self.base]
        base = os.path.normpath(base)
        if base != "/" and os.path.commonpath([base, path]) != base:
            return False
        rest = os.path.relpath(path, base) if path != base else ""
        return self.regex.fullmatch("" if rest == "." else rest) is not None

    def matches_url(self, url: str, subdomains: bool = True) -> bool:
        """Whether a WebFetch rule covers `url`: its host, and (for deny and ask rules) the host's subdomains."""
        if self.kind == "tool":
            return True
        host = (urlsplit(url).hostname or "").lower()
        return self.kind == "domain" and (host == self.words[0] or (subdomains and host.endswith("." + self.words[0])))


_GIT_GLOBAL_VALUE = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path", "--config-env",
                               "--super-prefix"})


def loose_forms(argv: Sequence[str]) -> list[tuple[str, ...]]:
    """Other spellings of the same command a deny or ask rule must also see.

    `/usr/bin/curl x` is `curl x`; `git -C . --no-pager push` is `git push`.
    """
    if not argv:
        return []
    forms: list[tuple[str, ...]] = []
    name = os.path.basename(argv[0]) if "/" in argv[0] else argv[0]
    if name != argv[0]:
        forms.append((name, *argv[1:]))
    if name == "git":
        i = 1
        while i < len(argv) and argv[i].startswith("-"):
            i += 2 if argv[i] in _GIT_GLOBAL_VALUE else 1
        if i > 1:
            forms.append(("git", *argv[i:]))
    return forms


def parse_rule(text: str) -> Rule:
    """Parses a rule string; raises ValueError saying which rule and what is wrong."""
    if not isinstance(text, str):
        raise ValueError(f"invalid rule {text!r}: a rule is a string such as \"Bash(npm run test:*)\"")
    stripped = text.strip()
    if not stripped:
        raise ValueError("invalid rule '': the rule is empty")
    if "(" not in stripped:
        if ")" in stripped:
            raise ValueError(f"invalid rule {text!r}: ')' without '('")
        return _tool_rule(text, stripped)
    if not stripped.endswith(")"):
        raise ValueError(f"invalid rule {text!r}: missing ')' at the end")
    tool, spec = stripped[:stripped.index("(")].strip(), stripped[stripped.index("(") + 1:-1].strip()
    _check_name(text, tool)
    if not spec:
        raise ValueError(f"invalid rule {text!r}: empty parentheses; write {tool} to cover every call")
    if spec == "*":
        return _tool_rule(text, tool)
    if tool == ToolName.BASH:
        return _bash_rule(text, spec)
    if tool in PATH_TOOLS:
        return _path_rule(text, tool, spec)
    if tool == ToolName.WEB_FETCH and spec.startswith("domain:") and spec[7:].strip():
        host = spec[7:].strip().lower()
        return Rule(f"WebFetch(domain:{host})", tool, spec, "domain", (host,))
    raise ValueError(f"invalid rule {text!r}: {tool} takes no specifier (only Bash, file tools and "
                     "WebFetch(domain:...) do)")


def _check_name(text: str, tool: str) -> None:
    if not _NAME.fullmatch(tool):
        raise ValueError(f"invalid rule {text!r}: {tool!r} is not a tool name")


def _tool_rule(text: str, name: str) -> Rule:
    _check_name(text, name[:-1] if name.startswith("mcp__") and name.endswith("__*") else name)
    if name.startswith("mcp__"):
        parts = name.split("__")
        if len(parts) < 2 or not parts[1] or any(not p for p in parts[1:]):
            raise ValueError(f"invalid rule {text!r}: MCP rules are mcp__<server> or mcp__<server>__<tool>")
        if len(parts) == 2 or (len(parts) == 3 and parts[2] == "*"):
            return Rule(f"mcp__{parts[1]}", f"mcp__{parts[1]}", None, "server")
    return Rule(name, name)


def _bash_rule(text: str, spec: str) -> Rule:
    if ":*" in spec and not spec.endswith(":*"):
        raise ValueError(f"invalid rule {text!r}: ':*' is only allowed at the end (Bash(npm run test:*))")
    if spec.endswith(":*"):
        prefix = spec[:-2]
        if "*" in prefix:
            raise ValueError(f"invalid rule {text!r}: use either 'prefix:*' or '*' wildcards, not both")
        words = _words(text, prefix)
        return Rule(f"Bash({shlex.join(words)}:*)", ToolName.BASH, spec, "prefix", words)
    words = _words(text, spec)
    if "*" not in spec:
        return Rule(f"Bash({shlex.join(words)})", ToolName.BASH, spec, "exact", words)
    joined = " ".join(words)
    return Rule(f"Bash({' '.join(spec.split())})", ToolName.BASH, spec, "glob", words,
                re.compile(_command_glob(joined), re.DOTALL))


def _words(text: str, spec: str) -> tuple[str, ...]:
    try:
        words = tuple(shlex.split(spec))
    except ValueError as e:
        raise ValueError(f"invalid rule {text!r}: {e}") from None
    if not words:
        raise ValueError(f"invalid rule {text!r}: no command given")
    return words


def _command_glob(spec: str) -> str:
    if spec.endswith(" *") and spec.count("*") == 1:
        return re.escape(spec[:-2]) + "(?: .*)?"
    return ".*".join(re.escape(part) for part in spec.split("*"))


def _path_rule(text: str, tool: str, spec: str) -> Rule:
    if spec.startswith("//"):
        base, pattern = "absolute", spec[2:]
    elif spec == "~" or spec.startswith("~/"):
        base, pattern = "home", spec[2:]
    elif spec.startswith("~"):
        raise ValueError(f"invalid rule {text!r}: ~user paths are not supported; use //home/user/...")
    else:
        base, pattern = "workspace", spec[2:] if spec.startswith("./") else spec.lstrip("/")
    if ".." in pattern.split("/"):
        raise ValueError(f"invalid rule {text!r}: '..' cannot be matched (paths are compared resolved); "
                         "write the place as //absolute/path or ~/path")
    anchored = spec.startswith(("/", "./", "~")) or "/" in pattern.rstrip("/")
    try:
        body = glob_regex(pattern.rstrip("/")) if pattern.strip("/") else ""
        regex = body if anchored or not body else f"(?:.*/)?{body}"
        compiled = re.compile(f"{regex}(?:/.*)?" if regex else ".*", re.DOTALL)
    except (ValueError, re.error) as e:
        raise ValueError(f"invalid rule {text!r}: {e}") from None
    return Rule(f"{tool}({spec})", tool, spec, "path", regex=compiled, base=base)  # type: ignore[arg-type]


def glob_regex(pattern: str) -> str:
    """A gitignore-style glob as a regex over a relative path: `**` spans directories, `*` and `?` do not."""
    out, i = [], 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        elif pattern[i] == "[" and "]" in pattern[i + 2:]:
            end = pattern.index("]", i + 2)
            out.append(_char_class(pattern[i + 1:end]))
            i = end + 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return "".join(out)


def _char_class(inner: str) -> str:
    """`[abc]`, `[a-z]`, `[!x]` as a regex class; anything but a range dash is literal."""
    negated = inner.startswith("!") and len(inner) > 1
    body = inner[1:] if negated else inner
    if "--" in body:
        raise ValueError(f"'[{inner}]' is not a character class Belay reads (a range of dashes)")
    return "[" + ("^" if negated else "") + "".join(c if c == "-" else re.escape(c) for c in body) + "]"
