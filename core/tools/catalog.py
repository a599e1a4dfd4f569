"""The tools a console offers by default."""

from __future__ import annotations

from core.process.shells import ShellManager
from core.tools.base import Tool
from core.tools.bash import BashOutputTool, BashSettings, BashTool, KillShellTool
from core.tools.git import GitCommit, GitDiff, GitStatus
from core.tools.registry import file_tools
from core.tools.task import TaskTool


def default_tools() -> list[Tool]:
    """The file tools, the git tools and Task: everything that needs nothing from the console."""
    return [*file_tools(), *git_tools(), TaskTool()]


def git_tools() -> list[Tool]:
    """git_status, git_diff and git_commit on the workspace's own repository."""
    return [GitStatus(), GitDiff(), GitCommit()]


def shell_tools(settings: BashSettings, shells: ShellManager) -> list[Tool]:
    """Bash and its background-shell companions, sharing the console's shells."""
    return [BashTool(settings, shells), BashOutputTool(shells), KillShellTool(shells)]
