"""Undo through the console: per call, per file, merged with later edits, resolved by a person, redone.

Real consoles on real temporary workspaces: the agent's changes come from
the real Write/Edit tools and real Bash commands, the person's later edits
are plain file writes, and every assertion is about what ends up on disk
or in the report a person reads.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from core import BelayError, Console, RunStatus
from core.policy.trust import trust
from core.undo.report import Resolution
from tests.conftest import run

LINES = "".join(f"line {i}\n" for i in range(1, 21))


@asynccontextmanager
async def allowing(workspace: Path, *rules: str) -> AsyncIterator[Console]:
    async with Console(workspace) as console:
        console.register_approver("test")
        for rule in rules:
            await console.add_rule(rule, "allow", "session")
        if any(rule.startswith("Bash(") for rule in rules):
            console.set_mode("bypass")  # `sh -c '...'` is always asked otherwise; the policy is tested elsewhere
        yield console


async def _bash(console: Console, command: str) -> str:
    agent = await console.start_agent("agent", "scripted")
    outcome = await console.call(agent, "Bash", {"command": command})
    assert outcome.status == RunStatus.DONE, outcome.text
    return outcome.call_id


async def _write(console: Console, path: Path, content: str) -> str:
    agent = await console.start_agent("agent", "scripted")
    outcome = await console.call(agent, "Write", {"file_path": str(path), "content": content})
    assert outcome.status == RunStatus.DONE, outcome.text
    return outcome.call_id


def test_undo_of_an_early_edit_keeps_the_persons_later_edit_elsewhere_in_the_file(tmp_path: Path) -> None:
    target = tmp_path / "notes.txt"
    target.write_text(LINES)

    async def scenario() -> None:
        async with allowing(tmp_path, "Write") as console:
            call = await _write(console, target, LINES.replace("line 2\n", "line 2 by the agent\n"))
            target.write_text(target.read_text().replace("line 19\n", "line 19 by the person\n"))
            report = await console.undo(call)
            assert report.ok and report.merged == ("notes.txt",), report.message
            assert "Merged with later edits (kept): notes.txt" in report.message

    run(scenario())
    assert target.read_text() == LINES.replace("line 19\n", "line 19 by the person\n")


def test_overlapping_later_edits_refuse_the_undo_until_the_person_resolves_them(tmp_path: Path) -> None:
    target = tmp_path / "notes.txt"
    target.write_text(LINES)
    agent_version = LINES.replace("line 5\n", "line 5 by the agent\n")
    person_version = agent_version.replace("line 5 by the agent\n", "line 5 by the agent, then the person\n")

    async def scenario() -> None:
        async with allowing(tmp_path, "Write") as console:
            call = await _write(console, target, agent_version)
            target.write_text(person_version)
            refused = await console.undo(call)
            assert not refused.ok and refused.conflicts == ("notes.txt",)
            assert target.read_text() == person_version  # nothing written
            preview = await console.undo_preview(call)
            [conflict] = preview.conflicts
            assert (conflict.now, conflict.after_call, conflict.before_call) == (person_version, agent_version, LINES)
            assert conflict.merged is not None and "<<<<<<<" in conflict.merged
            mine = LINES.replace("line 5\n", "line 5 as the person settled it\n")
            merged = await console.undo(call, resolutions={"notes.txt": Resolution(
                action="merge", content=mine, seen_digest=conflict.now_digest)})
            assert merged.ok, merged.message
            assert target.read_text() == mine

    run(scenario())


def test_a_resolution_made_on_an_older_version_of_the_file_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "notes.txt"
    target.write_text(LINES)

    async def scenario() -> None:
        async with allowing(tmp_path, "Write") as console:
            call = await _write(console, target, LINES.replace("line 5\n", "agent\n"))
            target.write_text(LINES.replace("line 5\n", "person\n"))
            [conflict] = (await console.undo_preview(call)).conflicts
            target.write_text(LINES.replace("line 5\n", "person, again\n"))
            report = await console.undo(call, resolutions={"notes.txt": Resolution(
                action="overwrite", seen_digest=conflict.now_digest)})
            assert not report.ok and "changed again" in report.message

    run(scenario())
    assert target.read_text() == LINES.replace("line 5\n", "person, again\n")


def test_skip_leaves_a_conflicting_file_and_restores_the_rest(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a\n")
    (tmp_path / "b.bin").write_bytes(b"\x00\x01")

    async def scenario() -> None:
        async with allowing(tmp_path, "Bash(sh:*)") as console:
            call = await _bash(console, "sh -c 'echo A > a.txt; printf \"\\000\\002\" > b.bin'")
            (tmp_path / "b.bin").write_bytes(b"\x00\x03")  # a later edit to a binary file: no merge
            report = await console.undo(call, resolutions={"b.bin": Resolution(action="skip")})
            assert report.ok and report.skipped == ("b.bin",) and report.paths == ("a.txt",)

    run(scenario())
    assert (tmp_path / "a.txt").read_text() == "a\n" and (tmp_path / "b.bin").read_bytes() == b"\x00\x03"


def test_one_file_of_a_call_can_be_undone_and_then_the_rest(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with allowing(tmp_path, "Bash(sh:*)") as console:
            call = await _bash(console, "sh -c 'echo 1 > one; echo 2 > two'")
            first = await console.undo(call, paths=["one"])
            assert first.ok and first.paths == ("one",)
            assert not (tmp_path / "one").exists() and (tmp_path / "two").exists()
            [record] = await console.history()
            assert record.undone_paths == ("one",) and record.undone_by is None
            assert console.timeline.runs[call].undone_paths == ("one",)
            rest = await console.undo(call)
            assert rest.ok and rest.paths == ("two",)
            assert console.timeline.runs[call].undone_by is not None

    run(scenario())
    assert not (tmp_path / "two").exists()


def test_an_undo_is_undone_by_redo_and_undone_again(tmp_path: Path) -> None:
    target = tmp_path / "f.txt"
    target.write_text("before\n")

    async def scenario() -> None:
        async with allowing(tmp_path, "Write") as console:
            call = await _write(console, target, "after\n")
            undone = await console.undo(call)
            assert undone.ok and target.read_text() == "before\n"
            redone = await console.redo(call)
            assert redone.ok and redone.redo and target.read_text() == "after\n"
            assert console.timeline.runs[call].undone_by is None
            again = await console.undo(call)
            assert again.ok and target.read_text() == "before\n"
            undo_of_undo = await console.undo(undone.rollback_id or "")
            assert not undo_of_undo.ok and "already undone" in undo_of_undo.message

    run(scenario())


def test_renames_modes_links_and_binary_files_come_back_exactly(tmp_path: Path) -> None:
    blob = bytes(range(256)) * 40
    (tmp_path / "data.bin").write_bytes(blob)
    (tmp_path / "run.sh").write_text("echo hi\n")
    os.chmod(tmp_path / "run.sh", 0o755)
    (tmp_path / "old.txt").write_text("moving\n")
    os.symlink("data.bin", tmp_path / "link")

    async def scenario() -> None:
        async with allowing(tmp_path, "Bash(sh:*)") as console:
            call = await _bash(console, "sh -c 'mv old.txt new.txt; chmod 600 run.sh; rm data.bin; "
                                        "ln -sf run.sh link'")
            [record] = await console.history()
            kinds = {c.path: c.kind.value for c in record.changes}
            assert kinds == {"new.txt": "rename", "run.sh": "mode", "data.bin": "delete", "link": "modify"}
            report = await console.undo(call)
            assert report.ok, report.message

    run(scenario())
    assert (tmp_path / "data.bin").read_bytes() == blob
    assert os.stat(tmp_path / "run.sh").st_mode & 0o777 == 0o755
    assert (tmp_path / "old.txt").read_text() == "moving\n" and not (tmp_path / "new.txt").exists()
    assert os.readlink(tmp_path / "link") == "data.bin"


def test_a_deleted_executable_comes_back_with_its_mode(tmp_path: Path) -> None:
    (tmp_path / "tool").write_text("#!/bin/sh\n")
    os.chmod(tmp_path / "tool", 0o750)

    async def scenario() -> None:
        async with allowing(tmp_path, "Bash(rm:*)") as console:
            assert (await console.undo(await _bash(console, "rm tool"))).ok

    run(scenario())
    assert os.stat(tmp_path / "tool").st_mode & 0o777 == 0o750


def test_ignored_files_are_reported_and_left_alone_by_undo(tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_text("build/\n")

    async def scenario() -> None:
        async with allowing(tmp_path, "Bash(sh:*)") as console:
            call = await _bash(console, "sh -c 'mkdir -p build && echo out > build/x.o && echo src > main.c'")
            [record] = await console.history()
            assert {c.path: c.stored for c in record.changes} == {"build/x.o": False, "main.c": True}
            report = await console.undo(call)
            assert report.ok and report.unrestorable == ("build/x.o",)
            assert "Cannot be restored" in report.message

    run(scenario())
    assert (tmp_path / "build" / "x.o").exists() and not (tmp_path / "main.c").exists()


def test_an_agents_commit_is_recorded_as_a_git_change(tmp_path: Path) -> None:
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(tmp_path)}
    subprocess.run(["git", "init", "-q", "-b", "main", str(tmp_path)], check=True, env=env)
    (tmp_path / "a.txt").write_text("a\n")

    async def scenario() -> None:
        async with allowing(tmp_path, "Bash(git:*)") as console:
            await console.add_rule("Bash(sh:*)", "allow", "session")
            call = await _bash(console, "sh -c 'git add a.txt && git -c user.name=A -c user.email=a@b "
                                        "commit -qm \"Add a\"'")
            [record] = [r for r in await console.history() if r.call_id == call]
            assert [(g.ref, g.kind) for g in record.git_changes] == [("refs/heads/main", "commit")]
            assert "Add a" in record.git_changes[0].what
            assert console.timeline.runs[call].git_changes == record.git_changes
            assert record.changes == ()  # .git is git's own business, not files to restore

    run(scenario())


def test_changes_made_outside_belay_are_recorded_and_never_given_to_an_agent(tmp_path: Path) -> None:
    (tmp_path / "mine.txt").write_text("v1\n")

    async def scenario() -> None:
        async with allowing(tmp_path, "Bash(sh:*)") as console:
            (tmp_path / "mine.txt").write_text("v2, by my editor\n")
            call = await _bash(console, "sh -c 'echo agent > theirs.txt'")
            [record] = await console.history()
            assert [c.path for c in record.changes] == ["theirs.txt"]
            [external] = console.timeline.externals
            assert [c.path for c in external.changes] == ["mine.txt"] and "before call" in external.note
            assert (await console.undo(external.op_id)).ok is False
            assert call

    run(scenario())
    assert (tmp_path / "mine.txt").read_text() == "v2, by my editor\n"


def test_a_read_only_command_is_not_held_behind_the_one_author_lock(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a\n")

    async def scenario() -> None:
        async with allowing(tmp_path, "Bash(sleep:*)") as console:
            tracker = console._tracker
            async with tracker.mutation("a long command"):  # as if a changing command were running
                agent = await console.start_agent("agent", "scripted")
                outcome = await console.call(agent, "Bash", {"command": "cat a.txt"})
                assert outcome.status == RunStatus.DONE and "a" in outcome.text

    run(scenario())


def test_settings_can_keep_more_paths_out_of_the_store(tmp_path: Path) -> None:
    (tmp_path / ".belay").mkdir()
    (tmp_path / ".belay" / "settings.toml").write_text('[changes]\nignore = ["*.tmp", "cache/"]\n')
    trust(tmp_path)  # a workspace's ignore patterns apply once it is trusted

    async def scenario() -> None:
        async with allowing(tmp_path, "Bash(sh:*)") as console:
            await _bash(console, "sh -c 'echo a > x.tmp; mkdir cache; echo b > cache/y; echo c > kept.txt'")
            [record] = await console.history()
            assert {c.path: c.stored for c in record.changes} == {"x.tmp": False, "cache/y": False,
                                                                   "kept.txt": True}

    run(scenario())


def test_rewind_passes_over_calls_whose_changes_cannot_be_restored(tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_text("*.log\n")
    (tmp_path / "f.txt").write_text("0\n")

    async def scenario() -> None:
        async with allowing(tmp_path, "Write", "Bash(sh:*)") as console:
            first = await _write(console, tmp_path / "f.txt", "1\n")
            await _bash(console, "sh -c 'echo log > run.log'")
            await _write(console, tmp_path / "f.txt", "2\n")
            reports = await console.rewind(first)
            assert [r.ok for r in reports] == [True], [r.message for r in reports]

    run(scenario())
    assert (tmp_path / "f.txt").read_text() == "1\n" and (tmp_path / "run.log").exists()


def test_an_edit_made_while_nothing_runs_is_recorded_once_things_are_quiet(tmp_path: Path) -> None:
    import asyncio

    from core.changes import tracker
    (tmp_path / "mine.txt").write_text("v1\n")

    async def scenario() -> None:
        async with allowing(tmp_path) as console:
            (tmp_path / "mine.txt").write_text("v2\n")
            deadline = asyncio.get_running_loop().time() + tracker.QUIET_S + 5
            while not console.timeline.externals and asyncio.get_running_loop().time() < deadline:
                await asyncio.sleep(0.05)
            [external] = console.timeline.externals
            assert [c.path for c in external.changes] == ["mine.txt"] and "no call was running" in external.note

    run(scenario())


def test_an_agents_commit_is_undone_by_moving_the_branch_back_and_redone(tmp_path: Path) -> None:
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(tmp_path)}
    git = ["git", "-c", "user.name=A", "-c", "user.email=a@b"]
    subprocess.run(["git", "init", "-q", "-b", "main", str(tmp_path)], check=True, env=env)
    (tmp_path / "a.txt").write_text("a\n")
    subprocess.run([*git, "-C", str(tmp_path), "add", "a.txt"], check=True, env=env)
    subprocess.run([*git, "-C", str(tmp_path), "commit", "-qm", "first"], check=True, env=env)

    def head() -> str:
        return subprocess.run(["git", "-C", str(tmp_path), "rev-parse", "main"], check=True, env=env,
                              capture_output=True, text=True).stdout.strip()

    first = head()

    async def scenario() -> None:
        async with allowing(tmp_path, "Bash(git:*)") as console:
            (tmp_path / "a.txt").write_text("a, changed by the agent\n")
            call = await _bash(console, "git -c user.name=A -c user.email=a@b commit -qam 'Agent change'")
            assert head() != first
            undone = await console.undo(call)
            assert undone.ok and "Moved back" in undone.message, undone.message
            assert head() == first
            assert console.timeline.runs[call].git_undone
            redone = await console.redo(call)
            assert redone.ok and head() != first, redone.message
            moved_again = await console.undo(call)
            assert moved_again.ok and head() == first

    run(scenario())
    assert (tmp_path / "a.txt").read_text() == "a, changed by the agent\n"  # like reset --soft: the work stays


def test_an_agents_switch_to_a_new_branch_is_undone_without_running_the_repositorys_hooks_and_redone(
        tmp_path: Path) -> None:
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(tmp_path)}
    git = ["git", "-c", "user.name=A", "-c", "user.email=a@b", "-C", str(tmp_path)]
    subprocess.run(["git", "init", "-q", "-b", "main", str(tmp_path)], check=True, env=env)
    (tmp_path / "a.txt").write_text("a\n")
    subprocess.run([*git, "add", "a.txt"], check=True, env=env)
    subprocess.run([*git, "commit", "-qm", "first"], check=True, env=env)
    marker = tmp_path.parent / f"{tmp_path.name}-hook-ran"
    hook = tmp_path / ".git" / "hooks" / "reference-transaction"
    hook.write_text(f"#!/bin/sh\necho ran >> '{marker}'\n")
    hook.chmod(0o755)

    def on() -> str:
        return subprocess.run([*git, "symbolic-ref", "--short", "HEAD"], check=True, env=env, capture_output=True,
                              text=True).stdout.strip()

    async def scenario() -> None:
        async with allowing(tmp_path, "Bash(git:*)") as console:
            call = await _bash(console, "git switch -qc topic")
            assert on() == "topic"
            marker.unlink(missing_ok=True)  # the agent's own git ran it: that is the agent's doing
            undone = await console.undo(call)
            assert undone.ok and on() == "main", undone.message
            assert subprocess.run([*git, "branch", "--list", "topic"], env=env, capture_output=True,
                                  text=True).stdout == ""
            assert not marker.exists()  # the console's undo ran nothing of the repository's
            redone = await console.redo(call)
            assert redone.ok and on() == "topic", redone.message

    run(scenario())


def test_a_damaged_kept_content_refuses_the_undo_naming_the_file_and_the_blob(tmp_path: Path) -> None:
    target = tmp_path / "notes.txt"
    target.write_text(LINES)

    async def scenario() -> None:
        async with allowing(tmp_path, "Write") as console:
            call = await _write(console, target, "rewritten\n")
            record = await console.call_record(call)
            assert record is not None
            [change] = record.changes
            assert change.before_hash is not None
            blob = console.state_dir / "blobs" / change.before_hash[:2] / change.before_hash[2:]
            blob.chmod(0o644)
            blob.write_bytes(b"not what was there\n")
            refused = await console.undo(call)
            assert not refused.ok
            assert "the earlier content of notes.txt" in refused.message and str(blob) in refused.message
            assert "nothing was changed" in refused.message
            assert target.read_text() == "rewritten\n"
            with pytest.raises(BelayError, match="cannot be read from Belay's blob store"):
                await console.undo_preview(call)  # what the window's undo dialog asks first
            blob.unlink()
            missing = await console.undo(call)
            assert not missing.ok and "is missing" in missing.message and target.read_text() == "rewritten\n"
            again = await console.call_record(call)
            assert again is not None and again.undone_paths == ()

    run(scenario())


def test_undoing_a_file_the_call_did_not_change_names_the_files_it_did(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with allowing(tmp_path, "Write") as console:
            agent = await console.start_agent("agent", "scripted")
            a = await console.call(agent, "Write", {"file_path": str(tmp_path / "a.py"), "content": "a\n"})
            refused = await console.undo(a.call_id, paths=["b.py"])
            assert not refused.ok
            assert refused.message == f"call {a.call_id} did not change b.py; it changed: a.py"
            assert (tmp_path / "a.py").read_text() == "a\n"

    run(scenario())


def test_redoing_a_file_the_call_did_not_change_names_the_files_it_did(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with allowing(tmp_path, "Write") as console:
            call = await _write(console, tmp_path / "a.py", "a\n")
            assert (await console.undo(call)).ok
            refused = await console.redo(call, paths=["b.py"])
            assert not refused.ok and refused.message == f"call {call} did not change b.py; it changed: a.py"
            assert not (tmp_path / "a.py").exists()

    run(scenario())


def test_an_agents_checkout_of_a_branch_with_other_files_is_undone_files_head_and_index_together(
        tmp_path: Path) -> None:
    """As mcp-server-git's `git_checkout` does (its tool captures the workspace like Bash): the undo puts the
    files back, and HEAD and the index with them, rather than leave HEAD on `other` over main's files."""
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(tmp_path)}
    git = ["git", "-c", "user.name=A", "-c", "user.email=a@b", "-C", str(tmp_path)]

    def out(*argv: str) -> str:
        return subprocess.run([*git, *argv], check=True, env=env, capture_output=True, text=True).stdout.strip()

    subprocess.run(["git", "init", "-q", "-b", "main", str(tmp_path)], check=True, env=env)
    (tmp_path / "a.txt").write_text("a on main\n")
    out("add", "a.txt")
    out("commit", "-qm", "first")
    out("switch", "-qc", "other")
    (tmp_path / "a.txt").write_text("a on other\n")
    (tmp_path / "b.txt").write_text("only on other\n")
    out("add", "a.txt", "b.txt")
    out("commit", "-qm", "other's work")
    out("switch", "-q", "main")

    async def scenario() -> None:
        async with allowing(tmp_path, "Bash(git:*)") as console:
            call = await _bash(console, "git checkout -q other")
            assert out("symbolic-ref", "--short", "HEAD") == "other"
            undone = await console.undo(call)
            assert undone.ok and "Moved back" in undone.message, undone.message
            assert out("symbolic-ref", "--short", "HEAD") == "main"
            assert (tmp_path / "a.txt").read_text() == "a on main\n" and not (tmp_path / "b.txt").exists()
            assert out("status", "--porcelain") == ""  # the index is main's too: a state that existed
            redone = await console.redo(call)
            assert redone.ok and out("symbolic-ref", "--short", "HEAD") == "other", redone.message
            assert (tmp_path / "a.txt").read_text() == "a on other\n"
            assert out("status", "--porcelain") == ""

    run(scenario())
