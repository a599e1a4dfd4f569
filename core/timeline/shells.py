"""The timeline's background shells: a command left running by a call, its output's end, how it ended.

The part of `core.timeline.tree.Timeline` that takes in `ShellStarted`, `ShellOutput` and `ShellFinished`;
shells are no rows of the tree (the window's shells panel lists them).
"""

from __future__ import annotations

from core.events import ShellFinished, ShellOutput, ShellStarted
from core.timeline.nodes import Inserted, ShellNode, Updated

LIVE_OUTPUT_CHARS = 64_000
"""The most of a running call's or a shell's output kept: its end."""


def tail(text: str) -> str:
    return text if len(text) <= LIVE_OUTPUT_CHARS else text[-LIVE_OUTPUT_CHARS:]


class Shells:
    """The shells of a timeline, by id."""

    def __init__(self) -> None:
        self.shells: dict[str, ShellNode] = {}

    def _on_shell_started(self, e: ShellStarted) -> list[Inserted | Updated]:
        self.shells[e.shell_id] = ShellNode(e.shell_id, e.call_id, e.command)
        return []

    def _on_shell_output(self, e: ShellOutput) -> list[Inserted | Updated]:
        shell = self.shells.get(e.shell_id)
        if shell is not None:
            shell.output = tail(shell.output + e.text)
        return []

    def _on_shell_finished(self, e: ShellFinished) -> list[Inserted | Updated]:
        shell = self.shells.get(e.shell_id)
        if shell is not None:
            shell.running, shell.exit_code = False, e.exit_code
        return []
