"""What the interceptor tells an outside agent besides allow or deny: its input rewritten to write what the
person edited, a command that replays what a previewed command printed, and the timeline's line for a tool
Belay has no model of."""

from __future__ import annotations

import json
import re
import shlex
from typing import Any

from core.paths import Workspace
from core.tools.base import WritePlan
from core.tools.names import ToolName
from core.tools.nbpartial import notebook_edit_input


def edited_input(tool_name: str, tool_input: dict[str, Any], plan: WritePlan, edited: dict[str, str],
                  workspace: Workspace) -> dict[str, Any] | None:
    """The agent's input rewritten so that its own tool writes what the person edited (None: it cannot be)."""
    if len(plan.writes) != 1:
        return None
    write = plan.writes[0]
    content = edited.get(workspace.relative(write.path))
    if content is None:
        return None
    if tool_name == ToolName.WRITE:
        return {**tool_input, "content": content}
    if tool_name in (ToolName.EDIT, ToolName.MULTI_EDIT) and write.before:
        whole = write.before.decode("utf-8", errors="strict")
        if tool_name == ToolName.EDIT:
            return {**tool_input, "old_string": whole, "new_string": content, "replace_all": False}
        return {**tool_input, "edits": [{"old_string": whole, "new_string": content}]}
    if tool_name == ToolName.NOTEBOOK_EDIT:  # the one cell's source, as the person approved it (core.tools.nbpartial)
        return notebook_edit_input(tool_input, write, content)
    return None


REPLAYED_CHARS = 60_000
"""The most of a previewed command's output its replay carries (the agent's output is capped well below this
already; a command line has a limit of its own)."""


def replay(text: str, exit_code: object) -> str:
    """A shell command that prints `text` (what a previewed command printed, and what became of its changes)
    and exits with the command's exit code: the agent runs it in place of the command Belay already ran."""
    if len(text) > REPLAYED_CHARS:
        text = f"[... {len(text) - REPLAYED_CHARS:,} characters cut ...]\n{text[-REPLAYED_CHARS:]}"
    code = exit_code if isinstance(exit_code, int) and 0 <= exit_code < 256 else 1 if exit_code else 0
    if code:  # the agent reports a failed command's exit code itself: Belay's own line for it would say it twice
        text = re.sub(rf"(^|\n)Exit code {code}(?=\n\n\[Belay previewed)", "", text, count=1).lstrip("\n")
    return f"printf '%s\\n' {shlex.quote(text.replace(chr(0), ''))}; exit {code}"


SUMMARY_KEYS = ("description", "command", "file_path", "notebook_path", "path", "pattern", "url", "query", "prompt")


def line_for(tool_input: dict[str, Any]) -> str:
    """A line for the timeline from a tool Belay has no model of: its most telling argument."""
    for key in SUMMARY_KEYS:
        value = tool_input.get(key)
        if isinstance(value, str) and value.strip():
            return short(" ".join(value.split()), 100)
    return short(json.dumps(tool_input, ensure_ascii=False, default=str), 100)


def short(value: Any, limit: int = 120) -> str:
    text = value if isinstance(value, str) else repr(value) if value is not None else ""
    return text if len(text) <= limit else text[:limit] + "…"
