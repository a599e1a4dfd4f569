"""What "Always allow" should add: the narrowest rule that would have allowed this call and its like.

For Bash it is a prefix rule on the first part that was not read-only,
as many words deep as the tool's subcommands go (`npm run test:*`,
`git commit:*`, `python -m pytest:*`).  Forms no rule can allow (code in
strings, computed words, protected paths) get no suggestion at all.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Sequence
from urllib.parse import urlsplit

from core.models.bash import BashAnalysis, SimpleCommand
from core.policy.protected import protected_reason
from core.policy.rules import EDIT_TOOLS
from core.policy.verdicts import PolicyRequest
from core.tools.names import ToolName

_SUBCOMMANDS = frozenset({"git", "cargo", "go", "docker", "kubectl", "pip", "pip3", "uv", "poetry", "gh", "dotnet",
                          "terraform", "brew", "apt", "apt-get", "systemctl", "make", "npm", "pnpm", "yarn", "bun",
                          "helm", "conda", "mvn", "gradle", "deno", "just", "tox", "nox", "hatch", "pdm"})
_RUNNERS = frozenset({"npm", "pnpm", "yarn", "bun"})
_PYTHON = re.compile(r"python[0-9.]*")


def suggest_for_bash(analysis: BashAnalysis) -> str | None:
    """`Bash(<first words>:*)` for the first part that needs a rule, or None."""
    if analysis.hidden_character or analysis.syntax_error:
        return None
    needing = [c for c in analysis.commands if c.effect != "read"]
    if any(c.effect in ("ask", "deny") or c.protected or not c.static for c in needing):
        return None
    named = [c for c in needing if c.argv and c.argv[0]]
    return f"Bash({shlex.join(_prefix(named[0]))}:*)" if named else None


def _prefix(command: SimpleCommand) -> list[str]:
    argv = list(command.argv)
    name = argv[0]
    if name in _RUNNERS and len(argv) > 2 and argv[1] == "run" and not argv[2].startswith("-"):
        return argv[:3]
    if _PYTHON.fullmatch(name) and len(argv) > 2 and argv[1] == "-m":
        return argv[:3]
    if name in _SUBCOMMANDS and len(argv) > 1 and not argv[1].startswith("-"):
        return argv[:2]
    return argv[:1]


def suggest_for_tool(request: PolicyRequest) -> str | None:
    """`Edit(./<top directory>/**)` for a write in the workspace, `WebFetch(domain:<host>)`, else the tool's name.

    None for a write that no rule may allow (a protected path, a place outside the workspace).
    """
    if request.tool == ToolName.WEB_FETCH:
        url = request.args.get("url")
        host = (urlsplit(url).hostname or "") if isinstance(url, str) else ""
        return f"WebFetch(domain:{host.lower()})" if host else "WebFetch"
    if request.tool not in EDIT_TOOLS:
        return request.tool
    return edit_rule_for(_written(request), str(request.workspace))


def edit_rule_for(paths: Sequence[str], workspace: str) -> str | None:
    """`Edit(./<top directory>/**)` (or `Edit(./<file>)`) covering every one of `paths` in the workspace; None
    when they are not under one top entry, or one is outside the workspace or protected."""
    workspace = os.path.realpath(workspace)
    if not paths:
        return None
    tops: list[str] = []
    for text in paths:
        if os.path.commonpath([workspace, text]) != workspace or text == workspace or protected_reason(text):
            return None
        parts = os.path.relpath(text, workspace).split(os.sep)
        tops.append(f"Edit(./{parts[0]}/**)" if len(parts) > 1 else f"Edit(./{parts[0]})")
    return tops[0] if len(set(tops)) == 1 else None


def _written(request: PolicyRequest) -> list[str]:
    """The absolute paths a file tool writes: the resolved ones, else the ones the agent named."""
    found = [os.path.normpath(p) for p in request.paths]
    for key in () if found else ("file_path", "notebook_path", "path"):
        value = request.args.get(key)
        if isinstance(value, str) and os.path.isabs(value) and "\0" not in value:
            found.append(os.path.normpath(value))
    return list(dict.fromkeys(found))
