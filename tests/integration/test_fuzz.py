"""Thousands of generated hostile calls through a real console: nothing escapes, nothing outside changes.

The calls (tests/integration/fuzzing.py) reach every file tool and Bash with wrong types, missing and extra
fields, malformed JSON text, huge strings, NUL bytes, lone surrogates, odd Unicode, absolute and `..` paths,
and links that lead out of the workspace; a person approves everything asked.  Set BELAY_FUZZ_SEED to try
another stream of calls, BELAY_FUZZ_CALLS for more of them.
"""

from __future__ import annotations

import asyncio
import os
import re
from pathlib import Path

import pytest

from core import CallRecord, Console, ErrorKind, RunStatus
from tests.integration import fuzzing

SEED = int(os.environ.get("BELAY_FUZZ_SEED", "20261126"))
CALLS = int(os.environ.get("BELAY_FUZZ_CALLS", "2000"))


@pytest.fixture
def layout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> fuzzing.Layout:
    lay = fuzzing.make_layout(tmp_path)
    monkeypatch.setenv("HOME", str(lay.home))
    return lay


def test_generated_hostile_calls_escape_nothing_and_change_nothing_outside(layout: fuzzing.Layout) -> None:
    report = asyncio.run(fuzzing.run_fuzz(layout, SEED, CALLS))
    assert report.calls == CALLS
    assert not report.escapes, f"seed {SEED}: exceptions escaped the console: {report.escapes[:5]}"
    assert not report.outside_writes, f"seed {SEED}: changed outside the workspace: {report.outside_writes[:5]}"
    assert not report.unfinished, f"seed {SEED}: calls not ended, or ended differently: {report.unfinished[:5]}"
    assert not report.missing_blobs, f"seed {SEED}: changes name blobs the store lacks: {report.missing_blobs[:5]}"
    assert not report.unwritable, f"seed {SEED}: text the agent cannot be given: {report.unwritable[:5]}"
    assert not report.crashes, f"seed {SEED}: tools failed unexpectedly: {report.crashes[:5]}"
    ran = {key.split(":")[0] for key in report.statuses if ":done" in key}
    assert ran == set(fuzzing.TOOLS), f"too few calls got through: only {sorted(ran)} ever ran to the end"


def test_generated_hostile_calls_from_an_outside_agent_escape_nothing_and_all_end(layout: fuzzing.Layout) -> None:
    report = asyncio.run(fuzzing.run_outside_fuzz(layout, SEED, CALLS // 4))
    assert report.calls > CALLS // 8
    assert not report.escapes, f"seed {SEED}: exceptions escaped the interceptor: {report.escapes[:5]}"
    assert not report.unfinished, f"seed {SEED}: calls left open in the journal: {report.unfinished[:5]}"


def test_the_fuzz_notices_writes_through_each_link_out_and_beside_the_workspace(layout: fuzzing.Layout) -> None:
    before = fuzzing.outside_state(layout)
    (layout.ws / "out_link").write_text("through the symlink\n")
    (layout.ws / "hard.txt").write_text("through the hard link\n")
    (layout.ws / "dangling").write_text("created through a dangling link\n")
    (layout.root / "sibling.txt").write_text("beside\n")
    found = "\n".join(fuzzing.differences(before, fuzzing.outside_state(layout)))
    for name in ("target.txt changed", "hard_target.txt changed", "not_yet.txt created", "sibling.txt"):
        assert name in found


def test_a_lone_surrogate_anywhere_is_refused_as_invalid_and_still_journaled(tmp_path: Path) -> None:
    async def scenario() -> list[tuple[RunStatus, ErrorKind | None, CallRecord | None]]:
        async with Console(tmp_path) as console:
            console.register_approver("test")
            agent = await console.start_agent("agent", "scripted")
            outcomes = [await console.call(agent, tool, args) for tool, args in [
                ("Write", {"file_path": str(tmp_path / "a\ud800.txt"), "content": "x"}),
                ("Bash", {"command": "echo ok", "description": "\udcff"}),
                ("MultiEdit", {"file_path": str(tmp_path / "a.txt"), "edits": [{"old_string": "",
                                                                                 "new_string": "\udfff"}]}),
                ("Read", {"file_path": str(tmp_path / "a.txt"), "\ud800": 1}),
                ("Read", '{"file_path": "\\ud800"}'),
                ("Re\ud800ad", {"file_path": str(tmp_path / "a.txt")}),
            ]]
            records = {r.call_id: r for r in await console.history()}
            return [(o.status, o.error.kind if o.error else None, records.get(o.call_id)) for o in outcomes]

    seen = asyncio.run(scenario())
    for status, kind, record in seen:
        assert status == RunStatus.FAILED and kind == ErrorKind.INVALID_ARGS
        assert record is not None and record.status == RunStatus.FAILED  # journaled, not missing
    assert not list(tmp_path.glob("a*.txt"))  # nothing was written, not even the file whose name was fine
    write, *_, misnamed = [record for _, _, record in seen]
    assert write.args["file_path"].endswith("a\\ud800.txt")  # shown as an escape a person can read
    assert misnamed.tool == "Re\\ud800ad"


def test_a_file_name_that_is_not_utf8_is_listed_with_an_escape(tmp_path: Path) -> None:
    """Such a name reads back as lone surrogates, which the journal cannot store: it is shown escaped."""
    (tmp_path / os.fsdecode(b"bad\xffname.txt")).write_text("hi\n")

    async def scenario() -> list[tuple[RunStatus, str]]:
        async with Console(tmp_path) as console:
            agent = await console.start_agent("agent", "scripted")
            outcomes = [await console.call(agent, "LS", {"path": str(tmp_path)}),
                        await console.call(agent, "Glob", {"pattern": "*.txt"})]
            records = {r.call_id: r for r in await console.history()}
            return [(records[o.call_id].status, records[o.call_id].output) for o in outcomes]

    for status, output in asyncio.run(scenario()):
        assert status == RunStatus.DONE and re.search(r"bad\\(udcff|xff)name\.txt", output), output


def test_an_outside_agents_call_with_a_lone_surrogate_is_refused_and_still_journaled(tmp_path: Path) -> None:
    """Claude Code's hooks arrive as JSON, whose \\ud800 escapes decode to lone surrogates."""
    async def scenario() -> tuple[list[str], list[CallRecord]]:
        async with Console(tmp_path) as console:
            assert console.interceptor is not None
            agent = await console.start_agent("claude", "claude-code")
            verdicts = [await console.interceptor.before(agent, f"use{i}", tool, args) for i, (tool, args) in
                        enumerate([("Bash", {"command": "echo \ud800"}), ("Re\udcffad", {"file_path": "/x"})])]
            assert all(v.decision == "deny" for v in verdicts)
            return [v.reason for v in verdicts], await console.history()

    reasons, records = asyncio.run(scenario())
    assert all("not valid Unicode" in reason for reason in reasons)
    assert sorted(r.tool for r in records) == ["Bash", "Re\\udcffad"]
    assert all(r.status == RunStatus.FAILED and r.error and r.error.kind == ErrorKind.INVALID_ARGS for r in records)
    assert [r.args for r in records if r.tool == "Bash"] == [{"command": "echo \\ud800"}]
