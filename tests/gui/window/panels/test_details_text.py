"""What the details pane writes about a call, an agent or a batch: who decided, what changed (with a link to undo
or redo each file), the arguments and the result, and what it does when a text is too long to show."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtGui import QTextDocument

from core import (
    AgentKey,
    AgentStarted,
    ApprovalResolved,
    BatchFinished,
    BatchKey,
    BatchStarted,
    CallFinished,
    CallQueued,
    Console,
    Decision,
    ErrorInfo,
    FileChange,
    RollbackFinished,
    RunStatus,
    Timeline,
)
from core.errors import ErrorKind
from core.models.batches import PlanInfo
from core.models.records import ChangeKind, GitChange
from gui.window.panels.details import DetailsPane
from gui.window.panels.details_text import (
    GONE_TEXT,
    LOADING_TEXT,
    MAX_LISTED_FILES,
    MAX_SHOWN_CHARS,
    FullCall,
    decision_text,
    describe_agent,
    describe_batch,
    describe_changes,
    describe_run,
    full_call,
)
from tests.conftest import wait_until


def test_the_decision_line_says_who_decided_a_rule_a_person_or_the_auto_approver(qtbot: Any, loop: Any,
                                                                                   workspace: Path) -> None:
    async def answered(console: Console, agent: Any, name: str, by: str) -> str:
        call = asyncio.ensure_future(console.call(agent, "Write", {"file_path": str(workspace / name), "content": "x"}))
        await wait_until(lambda: bool(console.pending_approvals()))
        console.approve(console.pending_approvals()[0].call_id, by=by,  # type: ignore[arg-type]
                        via="window" if by == "person" else None)
        return (await call).call_id

    async def scenario() -> list[str]:
        async with Console(workspace) as console:
            unregister = console.register_approver("test")
            await console.add_rule("Bash(touch:*)", "allow", "session")
            agent = await console.start_agent("agent", "scripted")
            ids = [(await console.call(agent, "Bash", {"command": "touch made.txt"})).call_id,
                   await answered(console, agent, "a.txt", "person"),
                   await answered(console, agent, "b.txt", "auto-approver")]
            unregister()
            pane = DetailsPane(console.timeline)
            qtbot.addWidget(pane)
            lines = []
            for call_id in ids:
                pane.show_key(f"r:{call_id}")
                lines.append(next(line for line in pane.info.toPlainText().splitlines() if line.startswith("Decision")))
            return lines

    lines = loop.run_until_complete(scenario())
    assert lines[0].startswith("Decision: allowed by rule Bash(touch:*) [session]")
    assert lines[1:] == ["Decision: approved by you in the window",
                         "Decision: approved by the auto-approver (--auto-approve)"]


def test_an_agents_details_count_its_sub_agents_calls_at_any_depth(qtbot: Any, loop: Any, workspace: Path) -> None:
    async def scenario() -> None:
        async with Console(workspace) as console:
            (workspace / "a.txt").write_text("a\n")
            lead = await console.start_agent("lead", "scripted")
            frontend = await console.start_agent("frontend", "subagent", parent=lead)
            tests = await console.start_agent("tests", "subagent", parent=frontend)
            await console.call(lead, "Read", {"file_path": str(workspace / "a.txt")})
            await console.call(frontend, "Read", {"file_path": str(workspace / "a.txt")})
            for _ in range(2):
                await console.call(tests, "Read", {"file_path": str(workspace / "missing.txt")})
            pane = DetailsPane(console.timeline)
            qtbot.addWidget(pane)
            pane.show_key(f"a:{lead.agent_id}")
            text = pane.info.toPlainText()
            assert "4 calls · 2 failed" in text and "1 of them its own, 3 by its sub-agents" in text
            pane.show_key(f"a:{tests.agent_id}")
            assert "2 calls · 2 failed" in pane.info.toPlainText()
            assert "by its sub-agents" not in pane.info.toPlainText()

    loop.run_until_complete(scenario())


# -- the same texts, from a timeline fed by hand ----------------------------------------------------------------

def _read(page: str) -> str:
    """The page as a person reads it in the pane (a QTextBrowser shows this HTML)."""
    document = QTextDocument()
    document.setHtml(page)
    return document.toPlainText()


def _timeline(*events: Any) -> Timeline:
    timeline = Timeline()
    timeline.apply(AgentStarted(agent_id="a", session_id="s", name="lead", agent_kind="scripted"))
    timeline.apply(CallQueued(call_id="c1", agent_id="a", tool="Write", args={"file_path": "notes one.txt"},
                              summary="notes one.txt"))
    for event in events:
        timeline.apply(event)
    return timeline


def _change(path: str, kind: ChangeKind = ChangeKind.MODIFY, **fields: Any) -> FileChange:
    return FileChange(path=path, kind=kind, before_hash="before", after_hash="after", **fields)


def test_each_changed_file_has_its_own_undo_then_redo_link(qapp: Any) -> None:
    changes = (_change("notes one.txt", ChangeKind.CREATE), _change("docs/new.md", ChangeKind.RENAME,
                                                                    old_path="docs/old.md"),
               _change("build.log", stored=False))
    timeline = _timeline(CallFinished(call_id="c1", status=RunStatus.DONE, changes=changes, duration_s=0.25))
    run = timeline.runs["c1"]
    page = describe_changes(run)
    lines = _read(page).replace("\xa0", " ").splitlines()  # a table: what happened, then the file and its link
    assert lines[0] == "Changed 3 files; 1 not stored (ignored or too large): they cannot be restored"
    assert lines[1:] == ["create ", "notes one.txt  undo this file", "renamed from docs/old.md ",
                         "docs/new.md  undo this file", "modify ", "build.log  not stored: cannot be restored"]
    assert "href='undo-file:notes%20one.txt'" in page and "undo-file:build.log" not in page  # nothing to put back
    timeline.apply(RollbackFinished(rollback_id="rb1", call_id="c1", paths=("notes one.txt",),
                                    undone_paths=("notes one.txt",)))
    page = describe_changes(run)
    assert "href='redo-file:notes%20one.txt'" in page and "undo-file:notes%20one.txt" not in page
    assert "undone · redo" in _read(page)
    assert _read(describe_run(run, timeline)).startswith("Write · notes one.txt\ndone, 1 file(s) undone in 0.25 s")


def test_a_call_that_changed_hundreds_of_files_lists_the_first_and_counts_the_rest(qapp: Any) -> None:
    changes = tuple(_change(f"node_modules/p{n}/index.js", ChangeKind.CREATE) for n in range(MAX_LISTED_FILES + 12))
    timeline = _timeline(CallFinished(call_id="c1", status=RunStatus.DONE, changes=changes))
    page = describe_changes(timeline.runs["c1"])
    assert page.count("undo-file:") == MAX_LISTED_FILES
    assert f"Changed {MAX_LISTED_FILES + 12} files" in _read(page)
    assert "… and 12 more (see the Changes tab)" in _read(page)


def test_git_moves_say_what_undo_does_to_them_and_when_it_did(qapp: Any) -> None:
    moved = GitChange(ref="refs/heads/main", kind="commit", before="1a2b", after="3c4d",
                      what="commit 3c4d on main: Fix rounding")
    timeline = _timeline(CallFinished(call_id="c1", status=RunStatus.DONE, git_changes=(moved,)))
    text = _read(describe_changes(timeline.runs["c1"]))
    assert "commit 3c4d on main: Fix rounding" in text and "Undo moves branches back" in text
    timeline.apply(RollbackFinished(rollback_id="rb1", call_id="c1", paths=(), git_undone=True))
    assert "undone: the references are back" in _read(describe_changes(timeline.runs["c1"]))


@pytest.mark.parametrize(("by", "decision", "rule", "via", "line"), [
    ("rule", Decision.APPROVED, None, None, "allowed by a rule"),
    ("mode", Decision.APPROVED, None, None, "allowed by the mode"),
    ("policy", Decision.DENIED, None, None, "denied by Belay's policy"),
    ("timeout", Decision.TIMED_OUT, "Write [workspace]", None,
     "timed out when nobody answered in time (rule Write [workspace])"),
    ("headless", Decision.DENIED, None, None, "denied as no window could ask"),
    ("person", Decision.ALWAYS_ALLOWED, None, "notification", "always allowed by you from the desktop notification"),
])
def test_the_decision_line_names_who_decided_in_words(by: str, decision: Decision, rule: str | None,
                                                      via: str | None, line: str) -> None:
    timeline = _timeline(ApprovalResolved(call_id="c1", decision=decision, by=by, rule=rule, via=via))
    assert decision_text(timeline.runs["c1"]) == line


def test_an_error_is_shown_with_what_to_do_and_a_long_result_is_cut_saying_how_much(qapp: Any) -> None:
    error = ErrorInfo(kind=ErrorKind.NOT_FOUND, message="notes one.txt does not exist",
                      suggestion="Check the path, or create the file first")
    failed = _timeline(CallFinished(call_id="c1", status=RunStatus.FAILED, error=error))
    text = _read(describe_run(failed.runs["c1"], failed))
    assert "Error (not-found)\nnotes one.txt does not exist\nCheck the path, or create the file first" in text
    assert "by lead" in text
    done = _timeline(CallFinished(call_id="c1", status=RunStatus.DONE, output="x"))
    whole = FullCall("c1", "{}", "x" * (MAX_SHOWN_CHARS + 1234))  # the journal's whole output
    text = _read(describe_run(done.runs["c1"], done, whole))
    assert "Result" in text and text.rstrip().endswith("… (1,234 more characters)")


def test_the_whole_call_replaces_the_excerpt_and_a_call_gone_from_the_journal_says_so(qapp: Any) -> None:
    timeline = _timeline(CallFinished(call_id="c1", status=RunStatus.DONE, output="short"))
    run = timeline.runs["c1"]
    assert LOADING_TEXT in _read(describe_run(run, timeline, loading=True))
    args = '{\n  "file_path": "' + "y" * MAX_SHOWN_CHARS + '"\n}'
    whole = _read(describe_run(run, timeline, FullCall("c1", args, "the whole output"), loading=True))
    assert LOADING_TEXT not in whole and "the whole output" in whole
    assert f"Read all the arguments ({len(args):,} characters)" in whole  # more than the pane shows: a link
    assert "full-args:c1" in describe_run(run, timeline, FullCall("c1", args))
    gone = describe_run(run, timeline, full_call("c1", None), loading=True)
    assert GONE_TEXT in _read(gone) and "short" in _read(gone)  # the excerpt stays
    other = describe_run(run, timeline, FullCall("c0", "{}", "another call's output"))
    assert "another call's output" not in _read(other)  # read for a call since left: not shown


def test_a_batch_says_how_far_it_got_and_its_plan(qapp: Any) -> None:
    plan = PlanInfo(levels=(("find", "ls"), ("read",)), critical_path=("find", "read"), max_parallelism=2)
    timeline = _timeline(BatchStarted(batch_id="b1", agent_id="a", name="scan <all>", plan=plan, size=3),
                         CallQueued(call_id="c2", agent_id="a", tool="LS", args={}, summary=".", batch_id="b1",
                                    batch_key="ls"),
                         BatchFinished(batch_id="b1", succeeded=1, failed=1, skipped=1, cache_hits=0,
                                       duration_s=1.5, max_running=2))
    text = _read(describe_batch(BatchKey("b1"), timeline))
    assert text.startswith("Batch scan <all>\n1 of 3 calls seen, by lead")  # a name is text, never markup
    assert "1 ok, 1 failed, 1 skipped, 0 from the cache; 1.50 s, at most 2 at once" in text
    assert "0: find, ls\n1: read" in text and "Critical path: find → read" in text
    assert _read(describe_agent(AgentKey("a"), timeline)).startswith("lead\nscripted agent · running · 2 calls")
