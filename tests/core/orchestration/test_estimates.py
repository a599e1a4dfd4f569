"""How long a batch's calls are expected to take: the tool's own estimate until the journal has timed calls
like them, then the median of those."""

from __future__ import annotations

from typing import Any

from core.models.batches import BatchCall
from core.orchestration.estimates import UNKNOWN_S, estimates, likeness
from core.process.shells import ShellManager
from core.tools.bash import BashSettings
from core.tools.catalog import default_tools, shell_tools
from core.tools.registry import ToolRegistry

REGISTRY = ToolRegistry([*default_tools(), *shell_tools(BashSettings(), ShellManager(lambda event: None))])


def _call(id: str, tool: str, **args: Any) -> BatchCall:
    return BatchCall(id=id, tool=tool, args=args)


def test_calls_are_alike_by_a_commands_first_word_or_a_file_tools_path() -> None:
    assert likeness("Bash", {"command": "pytest -q tests/core"}) == "pytest"
    assert likeness("Bash", {"command": "  "}) is None
    assert likeness("Read", {"file_path": "/w/src/app.py"}) == "/w/src/app.py"
    assert likeness("Grep", {"pattern": "TODO", "path": "/w/src"}) == "/w/src"
    assert likeness("WebFetch", {"url": "https://example.com"}) is None


def test_without_history_each_tool_says_what_its_calls_usually_take() -> None:
    calls = [_call("cmd", "Bash", command="make"), _call("sub", "Task", description="d", prompt="p"),
             _call("read", "Read", file_path="/w/a.py"), _call("typo", "Raed", file_path="/w/a.py"),
             _call("bad", "Bash", command=3)]
    assert estimates(calls, REGISTRY, {}) == {"cmd": 1.0, "sub": 30.0, "read": 0.05, "typo": UNKNOWN_S, "bad": 1.0}


def test_the_journal_of_calls_alike_wins_then_of_the_same_tool_then_the_tools_own_guess() -> None:
    history = {"Bash": [({"command": "pytest -q"}, 40.0), ({"command": "pytest tests/x"}, 50.0),
                        ({"command": "pytest"}, 45.0), ({"command": "ls"}, 0.01), ({"command": "ls -la"}, 0.02)]}
    calls = [_call("tests", "Bash", command="pytest -x"), _call("list", "Bash", command="ls src"),
             _call("other", "Bash", command="make lint")]
    expected = estimates(calls, REGISTRY, history)
    assert expected["tests"] == 45.0  # three pytest runs: their median
    assert expected["list"] == 40.0 and expected["other"] == 40.0  # too few alike: the median of every Bash call
    assert estimates(calls, REGISTRY, {"Bash": history["Bash"][3:]}) == {"tests": 1.0, "list": 1.0, "other": 1.0}
