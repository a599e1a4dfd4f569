"""The tools a console offers by default."""

from __future__ import annotations

from core.tools.base import Tool
from core.tools.registry import file_tools
from core.tools.task import TaskTool


def default_tools() -> list[Tool]:
    return [*file_tools(), TaskTool()]
