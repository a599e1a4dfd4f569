"""The names of the tools Belay runs and of the agents' own tools it judges: one enum, compared and dispatched on.

A member is its name as agents, journals and the wire spell it (a `StrEnum`: `ToolName.BASH == "Bash"`), so a
name read from a journal or a hook compares equal to its member and is stored as the same string.  A name not
here (an MCP server's `mcp__<server>__<tool>`, a tool of an agent's that Belay only shows) stays a plain string.
"""

from __future__ import annotations

from enum import StrEnum


class ToolName(StrEnum):
    """A tool's name: Belay's own tools (which Claude Code's tools of the same name share), the outside agents'
    tools Belay judges by name, and Codex's and Gemini CLI's own names for theirs."""

    # Belay's tools; Claude Code's tools of the same names are judged as them.
    READ = "Read"
    WRITE = "Write"
    EDIT = "Edit"
    MULTI_EDIT = "MultiEdit"
    NOTEBOOK_READ = "NotebookRead"
    NOTEBOOK_EDIT = "NotebookEdit"
    LS = "LS"
    GLOB = "Glob"
    GREP = "Grep"
    BASH = "Bash"
    BASH_OUTPUT = "BashOutput"
    KILL_SHELL = "KillShell"
    TASK = "Task"
    GIT_STATUS = "git_status"
    GIT_DIFF = "git_diff"
    GIT_COMMIT = "git_commit"
    # Claude Code's own tools, run by Claude Code and judged by Belay.
    AGENT = "Agent"
    TODO_WRITE = "TodoWrite"
    EXIT_PLAN_MODE = "ExitPlanMode"
    WEB_SEARCH = "WebSearch"
    WEB_FETCH = "WebFetch"
    # Codex CLI's tools Belay models (core.outside.codex, core.outside.codex_patch).
    APPLY_PATCH = "apply_patch"
    CODEX_SPAWN_AGENT = "spawn_agent"
    # Gemini CLI's tools Belay models, by the names its hooks give them (core.outside.gemini_tools).
    GEMINI_WRITE_FILE = "write_file"
    GEMINI_REPLACE = "replace"
    GEMINI_RUN_SHELL_COMMAND = "run_shell_command"
    GEMINI_READ_FILE = "read_file"
    GEMINI_READ_MANY_FILES = "read_many_files"
    GEMINI_LIST_DIRECTORY = "list_directory"
    GEMINI_GLOB = "glob"
    GEMINI_GREP_SEARCH = "grep_search"
    GEMINI_SEARCH_FILE_CONTENT = "search_file_content"
    GEMINI_WEB_FETCH = "web_fetch"
    GEMINI_GOOGLE_WEB_SEARCH = "google_web_search"
    GEMINI_WRITE_TODOS = "write_todos"
    GEMINI_INVOKE_AGENT = "invoke_agent"
