"""Calls an outside agent runs itself, through a real console's interceptor: decided before, recorded after."""

from __future__ import annotations

import asyncio
import functools
import subprocess
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from core import ApprovalRequested, Console, RunStatus
from core.models.records import ChangeKind
from core.outside.intercept import Interceptor
from core.process.overlay import overlay_support
from core.store.blobs import BlobStore
from core.store.journal import Journal
from tests.conftest import run, wait_until


def _interceptor(console: Console) -> Interceptor:
    assert console.interceptor is not None, "a tracking, serving console has one"
    return console.interceptor


def test_a_denied_call_is_answered_deny_with_the_reason_journaled_denied_and_not_held(workspace: Path) -> None:
    async def scenario() -> None:
        async with Console(workspace) as console:
            interceptor = _interceptor(console)
            agent = await console.start_agent("cc", "claude-code")
            await console.add_rule("Bash(rm:*)", "deny", "session")
            verdict = await interceptor.before(agent, "toolu_1", "Bash", {"command": "rm -rf src"})
            assert verdict.decision == "deny" and "matches the deny rule Bash(rm:*)" in verdict.reason
            assert interceptor.waiting == 0
            assert await interceptor.after("toolu_1", {"stdout": ""}) is None  # nothing was allowed to report back
            [record] = await console.history()
            assert record.call_id == verdict.call_id and record.status == RunStatus.DENIED
            assert record.agent_id == agent.agent_id and record.output == verdict.reason

    run(scenario())


def test_the_change_an_allowed_edit_makes_before_it_reports_back_is_its_own_and_undoable(workspace: Path) -> None:
    readme = workspace / "README.md"
    original = readme.read_text()

    async def scenario() -> None:
        async with Console(workspace) as console:
            console.set_mode("bypass")
            interceptor = _interceptor(console)
            agent = await console.start_agent("cc", "claude-code")
            edit = {"file_path": str(readme), "old_string": "# shop", "new_string": "# Shop"}
            verdict = await interceptor.before(agent, "toolu_2", "Edit", edit)
            assert verdict.decision == "allow" and verdict.updated_input is None and interceptor.waiting == 1
            readme.write_text(original.replace("# shop", "# Shop"))  # Claude Code's own Edit runs
            assert await interceptor.after("toolu_2", {"filePath": str(readme)}, original=original) == verdict.call_id
            [record] = await console.history()
            assert record.status == RunStatus.DONE and interceptor.waiting == 0
            assert [(c.path, c.kind) for c in record.changes] == [("README.md", ChangeKind.MODIFY)]
            assert console.timeline.externals == []
            assert (await console.undo(record.call_id)).ok

    run(scenario())
    assert readme.read_text() == original


def test_someone_elses_edit_before_the_agents_own_is_recorded_as_an_outside_change(workspace: Path) -> None:
    readme = workspace / "README.md"
    original = readme.read_text()
    theirs = original + "\nA line the person typed in their editor.\n"

    async def scenario() -> None:
        async with Console(workspace) as console:
            console.set_mode("bypass")
            interceptor = _interceptor(console)
            agent = await console.start_agent("cc", "claude-code")
            edit = {"file_path": str(readme), "old_string": "# shop", "new_string": "# Shop"}
            verdict = await interceptor.before(agent, "toolu_3", "Edit", edit)
            readme.write_text(theirs)  # between Belay's allowing and the agent's running
            readme.write_text(theirs.replace("# shop", "# Shop"))  # the agent edits what it found
            await interceptor.after("toolu_3", {"filePath": str(readme), "originalFile": theirs}, original=theirs)
            [outside] = console.timeline.externals
            assert outside.note == f"while call {verdict.call_id} was waiting to run"
            assert [(c.path, c.kind) for c in outside.changes] == [("README.md", ChangeKind.MODIFY)]
            [record] = await console.history()
            assert [c.path for c in record.changes] == ["README.md"]
            assert (await console.undo(record.call_id)).ok  # undoes the agent's edit, not the person's

    run(scenario())
    assert readme.read_text() == theirs


def test_a_command_holds_the_one_author_lock_until_it_reports_back(workspace: Path) -> None:
    notes = workspace / "notes.txt"

    async def scenario() -> None:
        async with Console(workspace) as console:
            console.set_mode("bypass")
            interceptor = _interceptor(console)
            agent = await console.start_agent("cc", "claude-code")
            other = await console.start_agent("belay agent", "test")
            command = {"command": "echo built > out.txt"}
            verdict = await interceptor.before(agent, "toolu_4", "Bash", command)
            assert verdict.decision == "allow"
            write = asyncio.ensure_future(console.call(other, "Write", {"file_path": str(notes), "content": "n\n"}))
            await wait_until(lambda: any(r.tool == "Write" and r.status == RunStatus.RUNNING
                                         for r in console.timeline.runs.values()), what="Belay's write to start")
            await asyncio.sleep(0.2)
            assert not write.done() and not notes.exists()  # it waits for the command's author to report back
            (workspace / "out.txt").write_text("built\n")  # Claude Code runs the command
            await interceptor.after("toolu_4", {"stdout": "", "stderr": "", "interrupted": False})
            assert (await asyncio.wait_for(write, 10)).status == RunStatus.DONE
            by_tool = {r.tool: r for r in await console.history()}
            assert [c.path for c in by_tool["Bash"].changes] == ["out.txt"]
            assert [c.path for c in by_tool["Write"].changes] == ["notes.txt"]

    run(scenario())


def test_abandoning_marks_every_open_call_interrupted_keeping_what_it_changed_and_lets_go(workspace: Path) -> None:
    usage = workspace / "docs" / "usage.md"
    original = usage.read_text()

    async def scenario() -> None:
        async with Console(workspace) as console:
            console.set_mode("bypass")
            interceptor = _interceptor(console)
            agent = await console.start_agent("cc", "claude-code")
            await interceptor.before(agent, "toolu_5", "Bash", {"command": "touch made.txt"})
            await interceptor.before(agent, "toolu_6", "Write", {"file_path": str(usage), "content": "new\n"})
            (workspace / "made.txt").write_text("")
            usage.write_text("new\n")
            await interceptor.abandon_all("the session ended")  # neither reported back
            assert interceptor.waiting == 0 and await interceptor.after("toolu_5") is None
            records = {r.tool: r for r in await console.history()}
            assert {r.status for r in records.values()} == {RunStatus.INTERRUPTED}
            assert {r.output for r in records.values()} == {"the session ended"}
            assert [c.path for c in records["Bash"].changes] == ["made.txt"]
            assert [c.path for c in records["Write"].changes] == ["docs/usage.md"]
            assert (await console.undo(records["Write"].call_id)).ok
            later = await console.start_agent("belay agent", "test")  # the lock and the file were let go
            done = await asyncio.wait_for(console.call(later, "Write", {"file_path": str(workspace / "n.txt"),
                                                                        "content": "n\n"}), 10)
            assert done.status == RunStatus.DONE

    run(scenario())
    assert usage.read_text() == original


def test_a_command_whose_agent_stops_waiting_for_the_lock_ends_cancelled_and_the_lock_goes_on(workspace: Path) -> None:
    async def scenario() -> None:
        async with Console(workspace) as console:
            console.set_mode("bypass")
            interceptor = _interceptor(console)
            agent = await console.start_agent("cc", "claude-code")
            first = await interceptor.before(agent, "toolu_1", "Bash", {"command": "touch one"})
            assert first.decision == "allow"  # it holds the lock until it reports back
            second = asyncio.ensure_future(interceptor.before(agent, "toolu_2", "Bash", {"command": "touch two"}))
            await wait_until(lambda: len(console.timeline.runs) == 2, what="the second call to wait for the lock")
            await asyncio.sleep(0.1)
            second.cancel()  # its hook gave up (the agent was killed, or the hook timed out)
            await asyncio.wait([second])
            assert interceptor.waiting == 1
            (workspace / "one").touch()
            assert await interceptor.after("toolu_1", {"stdout": ""}) == first.call_id
            third = await interceptor.before(agent, "toolu_3", "Bash", {"command": "touch three"})
            assert third.decision == "allow"  # the lock went on to the next call
            assert await interceptor.after("toolu_3", {"stdout": ""}) == third.call_id
            statuses = {r.args["command"]: r.status for r in await console.history()}
            assert statuses == {"touch one": RunStatus.DONE, "touch two": RunStatus.CANCELLED,
                                "touch three": RunStatus.DONE}

    run(scenario())


def test_an_outside_edits_contents_are_stored_before_the_journal_commits_the_rows_naming_them(
        workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    readme = workspace / "README.md"
    original = readme.read_text()
    missing: list[str] = []
    checked: list[str] = []
    run_group = Journal.run_group

    def checking(journal: Journal, writes: Sequence[Callable[[], object]], durable: bool) -> list[BaseException | None]:
        for write in writes:  # a change set handed to the group writer: each content it names must be stored
            if isinstance(write, functools.partial) and write.func.__name__ == "add_changes":
                for change in write.args[1]:
                    for digest in (change.before_hash, change.after_hash):
                        if digest is not None:
                            checked.append(digest)
                            if not stored[0].has(digest):
                                missing.append(digest)
        return run_group(journal, writes, durable)

    monkeypatch.setattr(Journal, "run_group", checking)

    stored: list[BlobStore] = []

    async def scenario() -> None:
        async with Console(workspace) as console:
            stored.append(BlobStore(console.state_dir / "blobs"))  # the store as another process finds it
            console.set_mode("bypass")
            interceptor = _interceptor(console)
            agent = await console.start_agent("cc", "claude-code")
            edit = {"file_path": str(readme), "old_string": "# shop", "new_string": "# Shop"}
            verdict = await interceptor.before(agent, "toolu_9", "Edit", edit)
            readme.write_text(original.replace("# shop", "# Shop"))  # Claude Code's own Edit runs
            assert await interceptor.after("toolu_9", {"filePath": str(readme)}, original=original) == verdict.call_id

    run(scenario())
    assert len(checked) == 2 and missing == []  # before and after, both stored before the row was committed


def test_an_allowed_read_resolves_the_path_it_names_once_between_its_summary_and_its_verdict(
        workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each walk of a path is a stat per component: the hook's answer waited on three of them."""
    import os

    named = str(workspace / "README.md")
    walks: list[str] = []
    real_realpath = os.path.realpath

    def counted(path: str, **how: bool) -> str:
        if path == named:
            walks.append(path)
        return real_realpath(path, **how)

    async def scenario() -> None:
        async with Console(workspace) as console:
            interceptor = _interceptor(console)
            agent = await console.start_agent("cc", "claude-code")
            monkeypatch.setattr(os.path, "realpath", counted)
            verdict = await interceptor.before(agent, "toolu_1", "Read", {"file_path": named})
            monkeypatch.undo()
            assert verdict.decision == "allow"
            assert walks == [named]
            [record] = await console.history()
            assert record.summary == "README.md"

    run(scenario())


@pytest.mark.skipif(not overlay_support().available, reason=overlay_support().detail)
def test_a_hooked_command_the_person_runs_in_preview_lands_only_the_files_they_keep_as_its_own_changes(
        workspace: Path) -> None:
    """An outside agent's command, run in preview at the person's asking: Belay runs it in a layer, the person
    keeps one of its two files, and the agent is handed a command that prints the command's own output, says
    what was applied, and exits with the command's exit code.  The kept file is the call's change, undoable."""
    readme = workspace / "README.md"
    original = readme.read_text()
    command = "echo made > made.txt; rm README.md; echo done here; exit 3"

    async def person(console: Console, shown: list[ApprovalRequested]) -> None:
        answered: set[tuple[str, int]] = set()
        while True:
            for request in console.pending_approvals():
                if (request.call_id, len(request.diffs)) in answered:
                    continue
                answered.add((request.call_id, len(request.diffs)))
                if not request.diffs:  # the command itself: run it in preview first
                    console.approve(request.call_id, preview=True)
                else:  # its changes: keep made.txt, leave README.md's removal out
                    shown.append(request)
                    console.approve(request.call_id, hunks={"made.txt": [0], "README.md": []})
            await asyncio.sleep(0.01)

    async def scenario() -> tuple[str, list[ApprovalRequested], Any]:
        async with Console(workspace) as console:
            console.register_approver("test")
            interceptor = _interceptor(console)
            agent = await console.start_agent("cc", "claude-code")
            shown: list[ApprovalRequested] = []
            answering = asyncio.ensure_future(person(console, shown))
            try:
                verdict = await interceptor.before(agent, "toolu_p", "Bash", {"command": command, "timeout": 9000})
            finally:
                answering.cancel()
            assert verdict.decision == "allow" and verdict.updated_input is not None
            assert verdict.updated_input["timeout"] == 9000  # the agent's other arguments are kept
            assert (workspace / "made.txt").read_text() == "made\n" and readme.read_text() == original
            replayed = subprocess.run(["bash", "-c", verdict.updated_input["command"]], cwd=workspace,
                                      capture_output=True, text=True, check=False)
            assert replayed.returncode == 3  # the command's own exit code
            assert await interceptor.after("toolu_p", replayed.stdout, error="Exit code 3") == verdict.call_id
            [record] = await console.history()
            return replayed.stdout, shown, record

    async def undo_it(call_id: str) -> bool:
        async with Console(workspace) as console:
            return (await console.undo(call_id)).ok

    told, shown, record = run(scenario())
    assert "done here" in told and "applied: made.txt" in told and "discarded: README.md" in told, told
    assert sorted(d.path for d in shown[0].diffs) == ["README.md", "made.txt"]  # the person saw both
    assert [(c.path, c.kind) for c in record.changes] == [("made.txt", ChangeKind.CREATE)]
    assert record.args["command"] == command  # the journal keeps the agent's command, not the replay
    assert run(undo_it(record.call_id))
    assert not (workspace / "made.txt").exists() and readme.read_text() == original
