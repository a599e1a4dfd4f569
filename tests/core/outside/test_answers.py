"""What the interceptor tells an outside agent besides allow or deny."""

from __future__ import annotations

import subprocess
from pathlib import Path

from core.outside.answers import line_for, replay


def test_a_replay_prints_the_commands_output_and_exits_with_its_code(tmp_path: Path) -> None:
    text = "it's done: $HOME `x` \\n\n\nExit code 3\n\n[Belay previewed this command's changes; applied: a.txt]"
    done = subprocess.run(["bash", "-c", replay(text, 3)], cwd=tmp_path, capture_output=True, text=True, check=False)
    assert done.returncode == 3
    assert done.stdout.startswith("it's done: $HOME `x` \\n\n")  # nothing in it is expanded by the agent's shell
    assert "Exit code 3" not in done.stdout  # the agent reports the code itself
    assert done.stdout.rstrip("\n").endswith("applied: a.txt]")


def test_a_tool_belay_has_no_model_of_is_shown_by_its_most_telling_argument() -> None:
    assert line_for({"url": "https://example.org/a", "prompt": "x"}) == "https://example.org/a"
    assert line_for({"n": 1}) == '{"n": 1}'
