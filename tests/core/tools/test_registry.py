"""The tool registry: tools by name in the order agents see them, subsets for sub-agents, MCP tools coming and going."""

from __future__ import annotations

import pytest

from core.errors import ErrorKind, ToolError
from core.tools.edit import Edit
from core.tools.grep import Grep
from core.tools.read import Read
from core.tools.registry import ToolRegistry, file_tools
from core.tools.write import Write


def test_tools_keep_the_order_they_were_registered_in_and_a_second_tool_of_a_name_is_refused() -> None:
    read = Read()
    registry = ToolRegistry([Write(), read])
    registry.register(Grep())
    assert registry.names() == ["Write", "Read", "Grep"]
    assert [tool.name for tool in registry] == ["Write", "Read", "Grep"]
    assert len(registry) == 3 and "Read" in registry and "Edit" not in registry

    with pytest.raises(ValueError, match="a tool named 'Read' is already registered: <Read Read>"):
        registry.register(Read())
    assert registry.get("Read") is read  # the first one stays
    assert registry.names() == ["Write", "Read", "Grep"]


def test_a_subset_for_a_sub_agent_keeps_the_order_and_refuses_names_it_does_not_know() -> None:
    registry = ToolRegistry(file_tools())
    sub = registry.subset(["Grep", "Read", "Grep"])
    assert sub.names() == ["Read", "Grep"]
    assert sub.get("Read") is registry.get("Read")  # the same tools, not copies
    sub.unregister("Read")
    assert "Read" in registry  # the parent is untouched

    with pytest.raises(ToolError) as refused:
        registry.subset(["Read", "Bash", "WebFetch"])
    assert refused.value.kind == ErrorKind.UNKNOWN_TOOL
    assert refused.value.info.message == "no tool named 'Bash', 'WebFetch'"
    assert refused.value.info.suggestion == f"Available tools: {', '.join(registry.names())}."


def test_an_unregistered_tool_is_handed_back_and_no_longer_found() -> None:
    edit = Edit()
    registry = ToolRegistry([Read(), edit, Grep()])
    assert registry.unregister("Edit") is edit
    assert registry.get("Edit") is None and "Edit" not in registry
    assert registry.unregister("Edit") is None  # gone already: no error
    assert repr(registry) == "<ToolRegistry Read, Grep>"
    for tool in registry:  # a server going away while the tools are being listed
        registry.unregister(tool.name)
    assert len(registry) == 0 and repr(registry) == "<ToolRegistry (empty)>"
    registry.register(Edit())  # the name is free again
    assert registry.names() == ["Edit"]
