"""The judgement of one command only ever rises, and its paths are resolved with symlinks followed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from core.policy.bash.findings import Env, Judgement, places, read_target, resolve, write_target
from core.policy.bash.words import WordValue

from .harness import env_at


def _word(text: str) -> WordValue:
    return WordValue(text, text, 0, 0)


@pytest.fixture
def env(ws: Path, home: Path) -> Env:
    return env_at(ws, home)


def test_a_judgement_only_rises_and_keeps_the_first_reason_at_its_level() -> None:
    j = Judgement()
    j.raise_to("edit", "writes a")
    j.raise_to("run", "runs b")
    j.raise_to("edit", "writes c")
    j.raise_to("run", "runs d")
    assert (j.effect, j.why) == ("run", "runs b")
    j.raise_to("deny", "deletes e")
    j.raise_to("ask", "asks f")
    assert (j.effect, j.why) == ("deny", "deletes e")


def test_a_run_that_only_reads_a_known_file_outside_may_be_allowed_by_a_read_rule() -> None:
    reading = Judgement()
    reading.raise_to("run", "reads /etc/hostname, outside the workspace", files=True)
    running = Judgement()
    running.raise_to("run", "npm test: npm is not known to be read-only")
    assert reading.effect == running.effect == "run"
    assert not reading.beyond_files and running.beyond_files


def test_inside_compares_whole_path_components_not_string_prefixes(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    env = Env(root, str(tmp_path / "home"), root)
    assert env.inside(root) and env.inside(root / "src" / "app.py")
    assert not env.inside(tmp_path / "ws-evil" / "x")
    assert not env.inside(tmp_path)


def test_paths_are_resolved_from_the_tracked_directory_with_symlinks_followed(env: Env, ws: Path,
                                                                              outside: Path) -> None:
    os.symlink(outside, ws / "door")
    assert resolve("door/f", env) == outside.resolve() / "f"
    assert resolve("door/f", env, follow=False) == ws.resolve() / "door" / "f"
    assert resolve("src/../notes.txt", env) == ws.resolve() / "notes.txt"
    unknown = Env(env.workspace, env.home, None)
    assert resolve("notes.txt", unknown) is None            # after `cd $X`, a relative path cannot be placed
    assert resolve("/etc/hostname", unknown) == Path("/etc/hostname").resolve()
    assert resolve(".*", env) is None                       # `.*` matches `..`: the pattern may climb out
    assert resolve("src/*/../../x", env) is None


def test_a_path_whose_link_vanishes_while_it_is_followed_cannot_be_placed(env: Env, ws: Path, outside: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Another process swapping a link under the command: the policy cannot place the path, so never allows it."""
    os.symlink(outside, ws / "door")
    (outside / "f").write_text("x")

    def gone(path: object, *args: object, **kwargs: object) -> str:
        raise FileNotFoundError(2, "No such file or directory", path)

    monkeypatch.setattr(os, "readlink", gone)
    assert resolve("door/f", env) is None
    assert resolve("door/*", env) is None
    assert places("door/f", env) is None


def test_a_pattern_is_placed_at_every_file_it_matches_now(env: Env, ws: Path, home: Path) -> None:
    os.symlink(home / ".ssh" / "id_rsa", ws / "innocent.txt")
    found = places("*.txt", env)
    assert found is not None and (home / ".ssh" / "id_rsa").resolve() in found
    j = Judgement()
    read_target(_word("*.txt"), env, j, "cat *.txt")
    assert j.effect == "deny" and "reads a secret" in j.why


@pytest.mark.parametrize(("target", "verb", "effect", "why"), [
    ("notes.txt", "writes", "edit", "in the workspace"),
    (".git/hooks/pre-commit", "writes", "edit", "in the workspace"),   # an edit, flagged as protected
    ("../elsewhere", "writes", "deny", "writes outside the workspace"),
    ("{OUT}/secret.txt", "deletes", "deny", "deletes outside the workspace"),
    ("door/x", "writes", "deny", "writes outside the workspace"),     # through a symlink out
    ("/dev/null", "writes", "read", "only reads"),
    (".", "deletes", "ask", "deletes the whole workspace"),
    ("*", "deletes", "ask", "deletes the whole workspace"),
])
def test_a_written_path_is_an_edit_inside_refused_outside_and_flagged_when_protected(
        env: Env, ws: Path, outside: Path, target: str, verb: str, effect: str, why: str) -> None:
    if target.startswith("door/"):
        os.symlink(outside, ws / "door")
    j = Judgement()
    write_target(_word(target.replace("{OUT}", str(outside))), env, j, verb, "cmd")
    assert j.effect == effect and why in j.why, j.why
    if effect == "deny":
        assert any(level == "high" and "outside the workspace" in reason for level, reason in j.impact)
    assert (j.protected is not None and "protected directory" in j.protected) == target.startswith(".git/")
