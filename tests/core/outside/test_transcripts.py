"""Transcripts followed: read when asked (an agent's hook) and when watchdog says they grew, recorded once."""

from __future__ import annotations

import json
from pathlib import Path

from core.bus import EventBus
from core.events import ConversationRecorded
from core.ids import AgentId, new_session_id
from core.outside.transcripts import Transcripts
from core.recorder import Recorder
from core.store.journal_reads import JournalReads
from core.transcripts.claude import ClaudeTranscript
from tests.conftest import run, wait_until


def _prompt(uuid: str, text: str) -> bytes:
    return json.dumps({"type": "user", "uuid": uuid, "timestamp": "2026-12-08T00:00:00Z",
                       "message": {"role": "user", "content": text}}).encode() + b"\n"


def test_a_followed_file_is_read_from_where_it_was_left_when_asked_and_when_it_grows(tmp_path: Path) -> None:
    path = tmp_path / "project" / "session.jsonl"
    path.parent.mkdir()
    second = _prompt("u2", "second")
    path.write_bytes(_prompt("u1", "first") + b'{"type":"hologram"}\n' + second[:20])  # the CLI is mid-write
    bus = EventBus()
    seen: list[ConversationRecorded] = []
    bus.listen(lambda e: seen.append(e) if isinstance(e, ConversationRecorded) else None)

    async def scenario() -> None:
        recorder = await Recorder.open(tmp_path / "journal.sqlite3", bus, new_session_id(), tmp_path)
        transcripts = Transcripts(recorder)
        try:
            await recorder.session()
            transcripts.follow(path, ClaudeTranscript("a1"))
            transcripts.follow(path, ClaudeTranscript("a1"))  # followed once
            assert transcripts.following("a1") == [path]
            await transcripts.catch_up(AgentId("a1"))
            assert [m.text for m in seen[0].messages] == ["first"]  # the second is not finished yet
            assert seen[0].skipped == 1 and "unknown kind 'hologram'" in seen[0].note
            with path.open("ab") as f:
                f.write(second[20:] + _prompt("u3", "third"))  # nobody asks: watchdog tells of this
            await wait_until(lambda: sum(len(e.messages) for e in seen) >= 3, what="the read watchdog asked for")
            messages, _ = await recorder.read(JournalReads.conversation)
            assert [m.text for m in messages] == ["first", "second", "third"]
            assert "files=1" in repr(transcripts)
        finally:
            await transcripts.aclose()
            await recorder.close()

    run(scenario())


def test_a_long_backlog_holds_the_agents_call_a_few_steps_and_the_rest_is_read_meanwhile(tmp_path: Path) -> None:
    path = tmp_path / "resumed.jsonl"
    path.write_bytes(b"".join(_prompt(f"u{n}", f"prompt {n} " + "x" * 1000) for n in range(3000)))  # some 3 MB
    bus = EventBus()
    said: list[str] = []
    bus.listen(lambda e: said.extend(m.text for m in e.messages) if isinstance(e, ConversationRecorded) else None)

    async def scenario() -> None:
        recorder = await Recorder.open(tmp_path / "journal.sqlite3", bus, new_session_id(), tmp_path)
        transcripts = Transcripts(recorder)
        try:
            await recorder.session()
            transcripts.follow(path, ClaudeTranscript("a1"))
            await transcripts.catch_up(AgentId("a1"), steps=1)
            assert 0 < len(said) < 3000  # one step waited for
            await wait_until(lambda: len(said) == 3000, what="the rest of the backlog")
            assert said[-1].startswith("prompt 2999 ")
        finally:
            await transcripts.aclose()
            await recorder.close()

    run(scenario())


def test_a_record_no_reader_foresaw_is_counted_and_the_reading_goes_on(tmp_path: Path) -> None:
    class Picky(ClaudeTranscript):
        def feed(self, line: bytes) -> None:
            if b"boom" in line:
                raise ValueError("a value no reader foresaw")
            super().feed(line)

    path = tmp_path / "t.jsonl"
    path.write_bytes(_prompt("u1", "boom") + _prompt("u2", "after"))
    bus = EventBus()
    seen: list[ConversationRecorded] = []
    bus.listen(lambda e: seen.append(e) if isinstance(e, ConversationRecorded) else None)

    async def scenario() -> None:
        recorder = await Recorder.open(tmp_path / "journal.sqlite3", bus, new_session_id(), tmp_path)
        transcripts = Transcripts(recorder)
        try:
            await recorder.session()
            transcripts.follow(path, Picky("a1"))
            await transcripts.catch_up(AgentId("a1"))
        finally:
            await transcripts.aclose()
            await recorder.close()

    run(scenario())
    (read,) = seen
    assert [m.text for m in read.messages] == ["after"]
    assert read.skipped == 1 and "value Belay cannot read" in read.note
