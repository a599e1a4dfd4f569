"""The walk's records: where a command sits, the working directory it starts in, and the flags drawn on the tree."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.policy.bash.nodes import Context, Cwd, Display, RawCommand, Source

from .harness import word


def _cd(*args: str) -> RawCommand:
    """A simple command; a word starting with `$` is a variable."""
    return RawCommand(words=[word(a)
                             for a in args])


def test_the_context_names_each_level_once_counts_repeats_and_cuts_deep_nesting() -> None:
    ctx: Context | None = None
    for label in ("pipeline", "command substitution", "", "subshell", "subshell", "subshell"):
        ctx = Context.push(ctx, label)
    assert Context.render(ctx) == "pipeline › command substitution › subshell ×3"
    for i in range(10):
        ctx = Context.push(ctx, f"level {i}")
    rendered = Context.render(ctx)
    assert rendered.startswith("… › ") and rendered.endswith("level 9")
    assert "pipeline" not in rendered
    assert Context.render(None) == ""


@pytest.mark.parametrize(("command", "where"), [
    (("cd", "src"), "ws/src"),
    (("cd", "-P", "src"), "ws/src"),
    (("pushd", "src"), "ws/src"),
    (("cd", ".."), "parent"),
    (("cd",), "home"),
    (("cd", "nowhere"), None),        # a cd that fails leaves the shell where it was: unknown from here on
    (("cd", "-"), None),
    (("popd",), None),
    (("cd", "$D"), None),
    (("ls", "src"), "ws"),            # not a cd: nothing moves
])
def test_the_working_directory_follows_a_static_cd_and_is_unknown_after_any_other(
        tmp_path: Path, ws: Path, home: Path, command: tuple[str, ...], where: str | None) -> None:
    cwd = Cwd(ws.resolve())
    cwd.follow(_cd(*command), str(home))
    expected = {"ws/src": ws / "src", "ws": ws, "parent": tmp_path, "home": home}.get(where or "")
    assert cwd.path == (expected.resolve() if expected is not None else None)


def test_an_unknown_directory_becomes_known_only_by_an_absolute_cd(ws: Path, home: Path) -> None:
    cwd = Cwd(None)
    cwd.follow(_cd("cd", "src"), str(home))
    assert cwd.path is None
    cwd.follow(_cd("cd", str(ws / "src")), str(home))
    assert cwd.path == (ws / "src").resolve()
    copy = cwd.copy()
    copy.follow(_cd("cd", ".."), str(home))      # a subshell's copy moves on its own
    assert cwd.path == (ws / "src").resolve() and copy.path == ws.resolve()


def test_a_flag_on_the_display_tree_never_goes_down_and_keeps_its_first_reason() -> None:
    display = Display()
    src = Source(b"ls; rm -rf ~")
    root = display.add_range("script", src, 0, 12, None)
    command = display.add_range("command", src, 4, 12, root)
    display.flag(command, "deny", "deletes outside the workspace")
    display.flag(command, "ask", "a later, milder finding")
    display.flag(command, "deny", "a second reason to refuse")
    display.flag(root, "ok", "allowed by Bash(ls:*)")
    rows = display.build()
    assert rows[command]["flag"] == "deny" and rows[command]["why"] == "deletes outside the workspace"
    assert rows[root]["flag"] == "ok" and rows[root]["why"] == "allowed by Bash(ls:*)"
    assert rows[root]["children"] == [command] and rows[command]["text"] == "rm -rf ~"


def test_text_run_by_bash_c_is_placed_at_its_string_and_a_long_label_is_cut() -> None:
    line = "bash -c 'rm -rf ~'"
    display = Display()
    nested = Source(b"rm -rf ~", span=(8, len(line)))
    index = display.add_range("command", nested, 0, 8, None)
    row = display.build()[index]
    assert (row["start"], row["end"], row["text"]) == (8, len(line), "rm -rf ~")
    long = Source(b"x" * 1000)
    index = display.add_range("command", long, 0, 1000, None)
    label = display.build()[index]["text"]
    assert isinstance(label, str) and label.endswith("…") and len(label) < 300
