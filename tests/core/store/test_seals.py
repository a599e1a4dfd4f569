"""The journal's seals: what Belay wrote verifies, and any edit made with sqlite3 behind its back is named."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.models.records import ChangeKind, FileChange, RunStatus
from core.store import seals
from core.store.journal import Journal
from core.store.journal_file import JournalUnusable
from core.store.journal_schema import SCHEMA


def _write(j: Journal, n: int = 3) -> None:
    j.start_session("s1", "/ws")
    j.add_agent("a1", "s1", "agent", "scripted", None, None, None)
    for i in range(n):
        j.add_call(f"c{i}", "s1", "a1", "Write", {"file_path": f"/ws/f{i}"}, f"write f{i}")
        j.set_status(f"c{i}", RunStatus.RUNNING)
        j.add_decision(f"c{i}", "approved", "", "person", via="window")
        j.add_changes(f"c{i}", [FileChange(path=f"f{i}", kind=ChangeKind.CREATE, before_hash=None,
                                                after_hash=f"{i}" * 64)])
        j.finish_run(f"c{i}", RunStatus.DONE, "written", None, 0.5)


@pytest.fixture
def path(tmp_path: Path) -> Iterator[Path]:
    p = tmp_path / "journal.sqlite3"
    j = Journal(p)
    _write(j)
    j.close()
    yield p


def _by_hand(path: Path, *statements: str) -> None:
    """What a person (or a program) does with sqlite3, outside Belay."""
    db = sqlite3.connect(path)
    with db:
        for statement in statements:
            db.execute(statement)
    db.close()


def test_what_belay_wrote_verifies_and_the_head_is_the_chain_s_last_link(path: Path) -> None:
    verdict = seals.verify_journal(path)
    assert verdict.ok and verdict.mismatches == () and verdict.adopted == 0
    assert verdict.rows == 1 + 1 + 3 * 4  # a session, an agent, and per call: the call, its run, decision, change
    assert verdict.seals >= verdict.rows
    assert seals.verify_journal(path, (verdict.seals, verdict.head)).ok


@pytest.mark.parametrize(("statement", "problem", "named"), [
    ("UPDATE decisions SET decided_by='rule' WHERE call_id='c1'", "edited", ("decisions", "2")),
    ("UPDATE runs SET output='nothing happened' WHERE call_id='c2'", "edited", ("runs", "c2")),
    ("INSERT INTO decisions (call_id, decision, reason, decided_by, decided_at) "
     "VALUES ('c0', 'denied', 'forged', 'person', '2026-01-01')", "added", ("decisions", "4")),
    ("DELETE FROM changes WHERE path='f1'", "removed", ("changes", "2")),
    ("UPDATE seals SET rows=replace(rows, '\"c1\"', '\"c7\"') WHERE seq=8", "chain", ("seals", "8")),
    ("UPDATE seals SET chain=zeroblob(32) WHERE seq=4", "chain", ("seals", "4")),
    ("DELETE FROM seals WHERE seq=3", "chain", ("seals", "4")),
])
def test_an_edit_made_with_sqlite3_is_named(path: Path, statement: str, problem: str,
                                            named: tuple[str, str]) -> None:
    _by_hand(path, statement)
    verdict = seals.verify_journal(path)
    assert not verdict.ok
    first = verdict.mismatches[0]
    assert first.problem == problem
    table, key = named
    assert (first.table, first.key) == (table, key)
    assert "outside Belay" in first.describe() and f"{'seal ' if problem == 'chain' else ''}{key}" in first.describe()


def test_the_first_row_named_is_the_earliest_sealed_of_several_edits(path: Path) -> None:
    _by_hand(path, "UPDATE runs SET status='failed' WHERE call_id='c2'", "UPDATE calls SET summary='x' WHERE id='c0'")
    verdict = seals.verify_journal(path)
    assert [(m.table, m.key) for m in verdict.mismatches] == [("calls", "c0"), ("runs", "c2")]


def test_a_history_rewritten_with_its_chain_recomputed_no_longer_holds_an_earlier_head(path: Path) -> None:
    head = seals.verify_journal(path)
    _by_hand(path, "UPDATE decisions SET decided_by='rule' WHERE call_id='c1'")
    _reseal_everything(path)  # as a forger who knows how seals are made would
    assert seals.verify_journal(path).mismatches == ()  # the chain alone cannot tell
    verdict = seals.verify_journal(path, (head.seals, head.head))
    assert not verdict.ok and verdict.expected_missing


def _reseal_everything(path: Path) -> None:
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("DROP TABLE seals")
    seals.Sealer(db)  # seals every row as it now stands
    db.close()


def test_later_writes_extend_the_chain_so_an_earlier_head_still_verifies(path: Path) -> None:
    head = seals.verify_journal(path)
    j = Journal(path)
    j.add_call("c9", "s1", "a1", "Read", {"file_path": "/ws/f0"}, "read f0")
    j.close()
    later = seals.verify_journal(path, (head.seals, head.head))
    assert later.ok and later.seals > head.seals


def test_a_group_commit_seals_what_it_committed_and_a_failed_write_seals_nothing(tmp_path: Path) -> None:
    j = Journal(tmp_path / "j.sqlite3")
    _write(j, 1)
    errors = j.run_group([lambda: j.add_call("g1", "s1", "a1", "Read", {}, "r"),
                          lambda: j.add_call("c0", "s1", "a1", "Read", {}, "a duplicate id: fails"),
                          lambda: j.finish_run("g1", RunStatus.DONE, "ok", None, 0.1)], durable=False)
    assert [e is None for e in errors] == [True, False, True]
    j.close()
    verdict = seals.verify_journal(tmp_path / "j.sqlite3")
    assert verdict.ok, [m.describe() for m in verdict.mismatches]


def test_a_journal_from_before_seals_has_its_rows_adopted_when_first_opened(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "old.sqlite3"
    db = sqlite3.connect(path)
    db.executescript(SCHEMA)
    db.executemany("INSERT INTO sessions VALUES (?, '/ws', '2025-01-01', NULL)", [(f"s{n}",) for n in range(5)])
    db.commit()
    db.close()
    with pytest.raises(JournalUnusable, match="no seals"):
        seals.verify_journal(path)
    monkeypatch.setattr(seals, "ROWS_PER_SEAL", 2)
    Journal(path).close()  # adds the columns of later releases, then seals, two rows a seal
    verdict = seals.verify_journal(path)
    assert verdict.ok and verdict.adopted == 5 and verdict.rows == 5 and verdict.seals == 3


def test_a_column_added_after_a_row_was_sealed_leaves_its_seal_valid(path: Path) -> None:
    _by_hand(path, "ALTER TABLE runs ADD COLUMN later TEXT DEFAULT 'x'")
    assert seals.verify_journal(path).ok
    _by_hand(path, "UPDATE runs SET status='failed' WHERE call_id='c0'")
    assert [m.key for m in seals.verify_journal(path).mismatches] == ["c0"]


def test_verify_reads_the_last_commit_while_another_connection_is_writing(path: Path) -> None:
    writer = sqlite3.connect(path, isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")
    writer.execute("INSERT INTO sessions VALUES ('s2', '/ws', '2026-01-01', NULL)")  # not committed (and unsealed)
    verdict = seals.verify_journal(path)
    writer.execute("ROLLBACK")
    writer.close()
    assert verdict.ok and verdict.rows == 14


def test_values_of_different_types_never_digest_alike() -> None:
    digests = {seals.row_digest(v) for v in [(1,), (1.0,), ("1",), (b"1",), (None,), ("",), (None, None), ("a", "b"),
                                               ("ab",), ("a", "", "b")]}
    assert len(digests) == 10


def test_a_head_is_read_back_as_verify_prints_it() -> None:
    assert seals.parse_head("12:" + "Ab" * 32) == (12, "ab" * 32)
    for bad in ("12", "x:" + "a" * 64, "3:" + "a" * 63, "3:" + "g" * 64):
        with pytest.raises(ValueError, match="COUNT:64 hex"):
            seals.parse_head(bad)


def test_compaction_keeps_one_seal_per_row_chained_on_from_the_head_before(path: Path) -> None:
    before = seals.verify_journal(path)
    _by_hand(path, "UPDATE seals SET origin=origin")  # (nothing changes: a no-op statement by hand)
    db = sqlite3.connect(path, isolation_level=None)
    assert seals.compact(seals.Sealer(db)) is None
    [(kept, carried)] = db.execute("SELECT COUNT(*), SUM(json_array_length(rows)) FROM seals").fetchall()
    db.close()
    after = seals.verify_journal(path, (before.seals, before.head))  # the head before is where the chain goes on
    assert after.ok and after.compacted_at == before.seals and after.seals == before.seals + kept
    assert kept == 1 and carried == after.rows  # every row once, the superseded versions gone
    older = seals.verify_journal(path, (before.seals - 1, "0" * 64))  # from before the compaction: cannot be checked
    assert not older.ok and older.expected_missing
    _by_hand(path, "UPDATE calls SET summary='x' WHERE id='c2'")
    assert [(m.table, m.key) for m in seals.verify_journal(path).mismatches] == [("calls", "c2")]


def test_a_journal_that_does_not_verify_keeps_its_seals_when_compacted(path: Path) -> None:
    _by_hand(path, "UPDATE runs SET output='' WHERE call_id='c0'")
    db = sqlite3.connect(path, isolation_level=None)
    count = db.execute("SELECT COUNT(*) FROM seals").fetchone()[0]
    note = seals.compact(seals.Sealer(db))
    assert note is not None and "does not verify" in note and "runs row 'c0'" in note
    assert db.execute("SELECT COUNT(*) FROM seals").fetchone()[0] == count
    db.close()


def _compacted(path: Path) -> str | None:
    db = sqlite3.connect(path, isolation_level=None)
    try:
        return seals.compact(seals.Sealer(db))
    finally:
        db.close()


def test_a_later_compaction_reads_only_the_rows_written_since_the_last(path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """A gc costs what was written since the last one (issue 37: gc against VACUUM), not the whole journal."""
    assert _compacted(path) is None
    j = Journal(path)
    j.add_call("c3", "s1", "a1", "Read", {"file_path": "/ws/f0"}, "read f0")
    j.finish_run("c3", RunStatus.DONE, "one line", None, 0.1)
    j.close()
    hashed: list[object] = []
    digest = seals.row_digest
    monkeypatch.setattr(seals, "row_digest", lambda values: hashed.append(values) or digest(values))
    assert _compacted(path) is None
    assert len(hashed) == 2  # the new call's row and its run's: the 14 rows carried before are not read
    verdict = seals.verify_journal(path)
    assert verdict.ok and verdict.rows == 16
    hashed.clear()
    seq = verdict.seals
    assert _compacted(path) is None and hashed == []  # nothing written since: nothing read, nothing rewritten
    assert seals.verify_journal(path).seals == seq


def test_a_row_changed_by_hand_after_a_compaction_still_fails_verify_after_the_next(path: Path) -> None:
    """A carried seal holds the digest the row was sealed with, not one read off it: compacting again (which
    reads only what Belay wrote since) cannot make a change made behind Belay's back pass."""
    assert _compacted(path) is None
    _by_hand(path, "UPDATE calls SET summary='something else' WHERE id='c1'")
    j = Journal(path)
    j.add_call("c3", "s1", "a1", "Read", {"file_path": "/ws/f0"}, "read f0")
    j.close()
    assert _compacted(path) is None
    assert [(m.problem, m.table, m.key) for m in seals.verify_journal(path).mismatches] == [("edited", "calls", "c1")]


def test_a_row_written_since_the_last_compaction_and_changed_by_hand_keeps_the_seals(path: Path) -> None:
    assert _compacted(path) is None
    j = Journal(path)
    j.add_call("c3", "s1", "a1", "Read", {"file_path": "/ws/f0"}, "read f0")
    j.close()
    _by_hand(path, "UPDATE calls SET summary='something else' WHERE id='c3'")
    db = sqlite3.connect(path, isolation_level=None)
    count = db.execute("SELECT COUNT(*) FROM seals").fetchone()[0]
    note = seals.compact(seals.Sealer(db))
    assert note is not None and "does not verify" in note and "calls row 'c3'" in note
    assert db.execute("SELECT COUNT(*) FROM seals").fetchone()[0] == count
    db.close()
