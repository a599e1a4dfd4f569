"""`belay mcp-serve`'s results as a client receives them: the tool's output is the result, its facts are `_meta`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import mcp.types as mt
import pytest

from core import Hub, config_dir, install_token, state_root
from gui.terminal.mcp_serve import BridgeError, ConsoleLink, as_call_result, as_mcp_tool
from tests.conftest import run


def _wire(answer: dict[str, Any]) -> dict[str, Any]:
    """The tools/call result as JSON on the wire, as a client (Claude Code) parses it."""
    return as_call_result(answer).model_dump(mode="json", by_alias=True, exclude_none=True)


@pytest.mark.parametrize(("text", "data"), [
    ("     1\tfirst line\n     2\tthe marker line\n", {"path": "/ws/a.txt", "lines": 2, "total_lines": 2}),
    ("the marker line from the command\n", {"exit_code": 0, "output_bytes": 33}),
    ("a.txt:2:the marker line", {"matches": 1}),
], ids=["Read", "Bash", "Grep content"])
def test_a_done_call_answers_with_its_output_and_no_structured_summary(text: str, data: dict[str, Any]) -> None:
    wire = _wire({"status": "done", "text": text, "data": data, "call_id": "c1"})
    assert "structuredContent" not in wire  # a client that prefers it would show the model only the summary
    assert wire["content"] == [{"type": "text", "text": text}] and wire["isError"] is False
    assert wire["_meta"] == {"belay/call_id": "c1", "belay/data": data}


def test_a_call_that_did_not_run_says_why_and_carries_no_empty_meta() -> None:
    wire = _wire({"status": "denied", "text": "", "data": {}, "call_id": None,
                  "error": {"message": "denied by the person", "suggestion": "ask before writing secrets"}})
    assert wire["isError"] is True and "_meta" not in wire and "structuredContent" not in wire
    assert wire["content"][0]["text"] == "The call ended denied.\ndenied by the person\nask before writing secrets"


def test_served_tools_declare_no_output_schema() -> None:
    """An outputSchema would oblige every result to carry a structuredContent that validates against it."""
    tool = as_mcp_tool({"name": "Read", "description": "Reads a file", "annotations": {"read_only": True},
                        "input_schema": {"type": "object", "properties": {"file_path": {"type": "string"}}}})
    assert isinstance(tool, mt.Tool) and tool.output_schema is None
    assert tool.annotations is not None and tool.annotations.read_only_hint is True


@pytest.mark.parametrize("answer", ["supervise", "refuse"])
def test_a_project_without_a_console_is_asked_about_through_the_console_for_every_workspace(
        tmp_path: Path, answer: str) -> None:
    project = tmp_path / "side"
    project.mkdir()
    asked: list[tuple[Path, str]] = []

    async def ask(directory: Path, who: str) -> Any:
        asked.append((directory, who))
        return answer

    async def scenario() -> None:
        hub = Hub(ask=ask)
        assert await hub.start()
        try:
            link = ConsoleLink(project, state_root(), install_token(config_dir()))
            if answer == "refuse":
                with pytest.raises(BridgeError, match="you chose not to supervise"):
                    await link.ask("tools")
                assert hub.consoles == {}
            else:
                tools = (await link.ask("tools"))["tools"]
                assert "Read" in {t["name"] for t in tools}
                assert project.resolve() in hub.consoles  # its own console, socket and journal from now on
            assert asked == [(project.resolve(), "An MCP client (mcp-serve)")]
        finally:
            await hub.close()

    run(scenario())


def test_without_any_console_the_client_is_told_how_to_start_one(tmp_path: Path) -> None:
    link = ConsoleLink(tmp_path, state_root(), "token")
    with pytest.raises(BridgeError, match="no Belay console is running"):
        run(link.ask("tools"))
