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

from core.policy_types import PolicyRequest
from core.rules import EDIT_TOOLS
from core.shell import BashAnalysis, SimpleCommand

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
    if not needing or any(c.effect in ("ask", "deny") or c.protected or not c.static for c in needing):
        return None
    return f"Bash({shlex.join(_prefix(needing[0]))}:*)"


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
    """`Edit(./<top directory>/**)` for a write in the workspace, else the tool's name."""
    if request.tool not in EDIT_TOOLS:
        return request.tool
    workspace = os.path.realpath(request.workspace)
    for path in request.paths:
        text = os.path.normpath(path)
        if os.path.commonpath([workspace, text]) != workspace or text == workspace:
            return None
        parts = os.path.relpath(text, workspace).split(os.sep)
        return f"Edit(./{parts[0]}/**)" if len(parts) > 1 else f"Edit(./{parts[0]})"
    return "Edit"
