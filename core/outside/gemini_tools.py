"""Gemini CLI's tools as Belay's: a call's name and arguments in the form Belay's tools model them.

Belay judges, shows and captures a call through its own tool of the same kind: `Write` plans the
new content (so the person approves a diff), `Edit` the replacement, `Bash` the command (parsed for
the policy), and read-only tools are known to change nothing.  Gemini CLI's tools do the same things
under other names and argument names (`write_file`, `replace` with `allow_multiple`,
`run_shell_command` with `dir_path`); this module says which of Belay's tools each one is and moves
the arguments over.  A tool not listed here (an MCP server's, a newer CLI's) keeps its own name and
arguments, and is judged as one that may change anything.

When the person edits the content of an approved write, Belay hands back its own tool's edited
arguments; `gemini_args` puts them back in the Gemini tool's form, as the hook's
`hookSpecificOutput.tool_input`.
"""

from __future__ import annotations

import functools
import os
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import ConfigDict

from core.errors import ErrorKind, ToolError
from core.paths import Workspace
from core.tools.base import Annotations, RunTool, ToolArgs, ToolContext, ToolOutput
from core.tools.names import ToolName

Args = dict[str, Any]


@dataclass(frozen=True)
class BelayCall:
    """A Gemini CLI call as Belay judges it."""

    tool: str
    """Belay's tool (Write, Edit, Bash, Read, ...) or the Gemini tool's own name when Belay has no model of it."""
    args: Args


SPAWNING = frozenset({ToolName.GEMINI_INVOKE_AGENT})
"""Gemini CLI's tool that runs a sub-agent: the sub-agent's calls come while it runs."""


def _path(args: Args, cwd: str, key: str = "file_path") -> str:
    """A path argument made absolute: Gemini CLI resolves a relative one against its working directory."""
    value = args.get(key)
    return os.path.normpath(os.path.join(cwd, value)) if isinstance(value, str) and value else ""


def _write(args: Args, cwd: str) -> Args:
    return {"file_path": _path(args, cwd), "content": args.get("content", "")}


def _edit(args: Args, cwd: str) -> Args:
    return {"file_path": _path(args, cwd), "old_string": args.get("old_string", ""),
            "new_string": args.get("new_string", ""), "replace_all": bool(args.get("allow_multiple", False))}


def _shell(args: Args, cwd: str) -> Args:
    """The command as it runs: in `dir_path` when the model gave one (else the project directory)."""
    command = str(args.get("command", ""))
    where = _path(args, cwd, "dir_path")
    if where and os.path.normpath(where) != os.path.normpath(cwd):
        command = f"cd {shlex.quote(where)} && {command}"
    shown: Args = {"command": command}
    if isinstance(args.get("description"), str):
        shown["description"] = args["description"]
    if args.get("is_background") is True:
        shown["run_in_background"] = True
    return shown


def _read(args: Args, cwd: str) -> Args:
    return {"file_path": _path(args, cwd)}  # a line range changes nothing Belay judges a read by


def _listing(args: Args, cwd: str) -> Args:
    return {"path": _path(args, cwd, "dir_path") or cwd}


def _glob(args: Args, cwd: str) -> Args:
    shown: Args = {"pattern": str(args.get("pattern", ""))}
    if args.get("dir_path"):
        shown["path"] = _path(args, cwd, "dir_path")
    return shown


def _grep(args: Args, cwd: str) -> Args:
    shown: Args = {"pattern": str(args.get("pattern", ""))}
    if args.get("dir_path"):
        shown["path"] = _path(args, cwd, "dir_path")
    if isinstance(args.get("include_pattern") or args.get("include"), str):
        shown["glob"] = args.get("include_pattern") or args.get("include")
    return shown


def _agent(args: Args, cwd: str) -> Args:
    name = str(args.get("agent_name", "sub-agent"))
    return {"description": name, "prompt": str(args.get("prompt", "")), "subagent_type": name}


def _same(args: Args, cwd: str) -> Args:
    return dict(args)


TOOLS: dict[str, tuple[ToolName, Callable[[Args, str], Args]]] = {
    ToolName.GEMINI_WRITE_FILE: (ToolName.WRITE, _write),
    ToolName.GEMINI_REPLACE: (ToolName.EDIT, _edit),
    ToolName.GEMINI_RUN_SHELL_COMMAND: (ToolName.BASH, _shell),
    ToolName.GEMINI_READ_FILE: (ToolName.READ, _read),
    # several files: judged as Read by name, shown as Gemini gave them
    ToolName.GEMINI_READ_MANY_FILES: (ToolName.READ, _same),
    ToolName.GEMINI_LIST_DIRECTORY: (ToolName.LS, _listing),
    ToolName.GEMINI_GLOB: (ToolName.GLOB, _glob),
    ToolName.GEMINI_GREP_SEARCH: (ToolName.GREP, _grep),
    ToolName.GEMINI_SEARCH_FILE_CONTENT: (ToolName.GREP, _grep),
    ToolName.GEMINI_WEB_FETCH: (ToolName.WEB_FETCH, _same),
    ToolName.GEMINI_GOOGLE_WEB_SEARCH: (ToolName.WEB_SEARCH, _same),
    ToolName.GEMINI_WRITE_TODOS: (ToolName.TODO_WRITE, _same),
    ToolName.GEMINI_INVOKE_AGENT: (ToolName.AGENT, _agent),
}
"""Gemini CLI 0.61's built-in tools that Belay models, by the name the CLI gives them in its hooks."""


OWN_HARMLESS = frozenset({"update_topic", "enter_plan_mode", "exit_plan_mode", "activate_skill", "ask_user",
                          "list_background_processes", "read_background_output", "complete_task",
                          "get_internal_docs"})
"""Gemini CLI's own tools that change nothing in the workspace (its topic line, its mode, a skill's
instructions read, a background command's output read): judged read-only, so they neither ask the
person nor take the one-author lock a command holds."""


class _OwnArgs(ToolArgs):
    model_config = ConfigDict(extra="allow", strict=False)


class _OwnTool(RunTool[_OwnArgs]):
    """One of Gemini CLI's harmless tools, as far as Belay judges it: read-only, any arguments.  Gemini
    CLI runs it; Belay never does."""

    description = "A Gemini CLI tool that changes nothing in the workspace."
    Args = _OwnArgs
    annotations = Annotations(read_only=True, destructive=False, idempotent=True)

    def summary(self, args: _OwnArgs, workspace: Workspace) -> str:
        extra = args.model_extra or {}
        return next((str(v)[:100] for k in ("title", "name", "reason", "pid") if (v := extra.get(k))), "")

    async def run(self, args: _OwnArgs, ctx: ToolContext) -> ToolOutput:
        raise ToolError(ErrorKind.INVALID_ARGS, f"{self.name} is Gemini CLI's own tool; Belay does not run it")


@functools.cache
def own_tool(name: str) -> RunTool[Any] | None:
    """Belay's model of one of Gemini CLI's harmless tools (None: not one of them)."""
    if name not in OWN_HARMLESS:
        return None
    tool: RunTool[Any] = type(f"GeminiOwnTool_{name}", (_OwnTool,), {"name": name})()
    return tool


def takes_the_lock(call: BelayCall, read_only: bool) -> bool:
    """Whether Belay runs the call under the one-author lock until it reports back: anything that may
    change files other than a write to named files (Write, Edit hold just their file)."""
    return not read_only and call.tool not in (ToolName.WRITE, ToolName.EDIT)


def belay_call(tool_name: str, args: Args, cwd: str) -> BelayCall:
    """The call as Belay judges it; an unknown tool as it is."""
    known = TOOLS.get(tool_name)
    if known is None:
        return BelayCall(tool_name, dict(args))
    return BelayCall(known[0], known[1](args, cwd))


def gemini_args(tool_name: str, original: Args, edited: Args) -> Args | None:
    """The Gemini tool's full arguments that make it write what the person edited, or run its command inside
    Belay's sandbox (None: it cannot).

    Gemini CLI builds the call anew from exactly these arguments, so every argument is given, not
    just the changed ones."""
    if tool_name == ToolName.GEMINI_WRITE_FILE and isinstance(edited.get("content"), str):
        return {**original, "content": edited["content"]}
    replaced = all(isinstance(edited.get(k), str) for k in ("old_string", "new_string"))
    if tool_name == ToolName.GEMINI_REPLACE and replaced:
        return {**original, "old_string": edited["old_string"], "new_string": edited["new_string"],
                "allow_multiple": bool(edited.get("replace_all", False))}
    if tool_name == ToolName.GEMINI_RUN_SHELL_COMMAND and isinstance(edited.get("command"), str):
        return {**original, "command": edited["command"]}  # the command inside Belay's wall (core.outside.wall)
    return None
