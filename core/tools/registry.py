"""The tools a console (or a sub-agent) may call, by name, and the built-in file tools."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from core.errors import ErrorKind, ToolError
from core.tools.base import Tool
from core.tools.edit import Edit, MultiEdit
from core.tools.grep import Grep
from core.tools.listing import LS, Glob
from core.tools.notebook import NotebookEdit
from core.tools.notebook_read import NotebookRead
from core.tools.read import Read
from core.tools.write import Write


class ToolRegistry:
    """Tools by name, in the order they were registered (the order agents see them in)."""

    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        for tool in tools:
            self.register(tool)

    def register(self, tool: Tool) -> None:
        """Add a tool; a second tool with the same name is a programming error, not an override."""
        if tool.name in self._tools:
            raise ValueError(f"a tool named '{tool.name}' is already registered: {self._tools[tool.name]!r}")
        self._tools[tool.name] = tool

    def unregister(self, name: str) -> Tool | None:
        """Remove a tool (an MCP server no longer offers it); the removed tool, or None when there was none.

        Calls already running keep their tool object; new calls to `name` find no such tool."""
        return self._tools.pop(name, None)

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def names(self) -> list[str]:
        return list(self._tools)

    def subset(self, names: Iterable[str]) -> ToolRegistry:
        """A registry of only these tools, e.g. for a sub-agent; an unknown name is refused, not ignored."""
        wanted = list(names)
        unknown = [n for n in wanted if n not in self._tools]
        if unknown:
            raise ToolError(ErrorKind.UNKNOWN_TOOL, f"no tool named {', '.join(map(repr, unknown))}",
                            f"Available tools: {', '.join(self._tools)}.")
        return ToolRegistry(tool for name, tool in self._tools.items() if name in wanted)

    def __iter__(self) -> Iterator[Tool]:
        return iter(list(self._tools.values()))

    def __len__(self) -> int:
        return len(self._tools)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __repr__(self) -> str:
        return f"<ToolRegistry {', '.join(self._tools) or '(empty)'}>"


def file_tools() -> list[Tool]:
    """Fresh instances of the workspace file tools."""
    return [Read(), Write(), Edit(), MultiEdit(), NotebookRead(), NotebookEdit(), LS(), Glob(), Grep()]
