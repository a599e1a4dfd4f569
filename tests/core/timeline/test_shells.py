"""The timeline's background shells: started, their output's end kept, how they ended."""

from __future__ import annotations

from core.events import ShellFinished, ShellOutput, ShellStarted
from core.ids import CallId, ShellId
from core.timeline.shells import LIVE_OUTPUT_CHARS
from core.timeline.tree import Timeline


def test_a_shell_keeps_the_end_of_its_output_and_how_it_ended() -> None:
    timeline = Timeline()
    shell = ShellId("sh1")
    assert timeline.apply(ShellStarted(shell_id=shell, call_id=CallId("c1"), command="make watch")) == []
    timeline.apply(ShellOutput(shell_id=shell, text="x" * LIVE_OUTPUT_CHARS))
    timeline.apply(ShellOutput(shell_id=shell, text="the end"))
    timeline.apply(ShellFinished(shell_id=shell, exit_code=2))
    node = timeline.shells["sh1"]
    assert node.output.endswith("the end") and len(node.output) == LIVE_OUTPUT_CHARS
    assert not node.running and node.exit_code == 2
    timeline.apply(ShellOutput(shell_id=ShellId("unknown"), text="ignored"))  # no such shell: let be
