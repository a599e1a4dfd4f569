"""Attaching to a running console through its socket: the welcome, live events, approvals, undo, reattaching."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from core import ApprovalRequested, CallFinished, Console, RunStatus, config_dir, install_token
from core.remote.client import Attached, Detached, RemoteError
from core.remote.protocol import PROTOCOL_VERSION
from core.remote.server import AttachServer
from tests.conftest import run


async def _until(attached: Attached, kind: type, call_id: str | None = None) -> object:
    async def wait() -> object:
        async for event in attached.events():
            if isinstance(event, kind) and (call_id is None or getattr(event, "call_id", None) == call_id):
                return event
        raise AssertionError("unreachable")
    return await asyncio.wait_for(wait(), 10)


def _served(console: Console) -> Path:
    assert console.endpoint is not None
    AttachServer(console).install(console.endpoint)
    console.register_approver("attached front ends")
    return console.endpoint.path


def test_an_attached_front_end_approves_a_write_sees_it_finish_and_undoes_it(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()

    async def main() -> None:
        async with Console(ws) as console:
            socket = _served(console)
            attached = await Attached.connect(socket, install_token(config_dir()))
            assert attached.welcome.workspace == str(ws) and attached.welcome.pending == []
            agent = await console.start_agent("writer", "scripted")
            call = asyncio.ensure_future(console.call(agent, "Write", {"file_path": str(ws / "a.txt"),
                                                                       "content": "hello\n"}))
            asked = await _until(attached, ApprovalRequested)
            assert isinstance(asked, ApprovalRequested) and asked.tool == "Write" and asked.diffs
            assert await attached.approve(asked.call_id, via="window")
            finished = await _until(attached, CallFinished, asked.call_id)
            assert isinstance(finished, CallFinished) and finished.status == RunStatus.DONE
            assert (await call).status == RunStatus.DONE and (ws / "a.txt").read_text() == "hello\n"
            report = await attached.undo(asked.call_id)
            assert report["ok"] and not (ws / "a.txt").exists()
            [record] = await console.history()
            assert record.decision is not None and record.decision.via == "window"
            await attached.close()
    run(main())


def test_a_front_end_that_attaches_again_finds_the_waiting_approval_and_the_calls_so_far(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()

    async def main() -> None:
        async with Console(ws) as console:
            socket, token = _served(console), install_token(config_dir())
            agent = await console.start_agent("writer", "scripted")
            first = await Attached.connect(socket, token)
            done = asyncio.ensure_future(console.call(agent, "Write", {"file_path": str(ws / "a.txt"),
                                                                       "content": "one\n"}))
            asked = await _until(first, ApprovalRequested)
            assert isinstance(asked, ApprovalRequested)
            await first.approve(asked.call_id)
            await done
            waiting = asyncio.ensure_future(console.call(agent, "Write", {"file_path": str(ws / "b.txt"),
                                                                          "content": "two\n"}))
            await _until(first, ApprovalRequested)
            await first.close()  # the link drops while the second call waits for a person

            again = await Attached.connect(socket, token)
            welcome = again.welcome
            assert [p.summary for p in welcome.pending] == [asked.summary.replace("a.txt", "b.txt")]
            timeline = again.timeline()
            statuses = {run.summary: run.status for run in timeline.runs.values()}
            assert list(statuses.values()) == [RunStatus.DONE, RunStatus.BLOCKED_ON_USER]
            assert await again.deny(welcome.pending[0].call_id, "not now")
            assert (await waiting).status == RunStatus.DENIED and not (ws / "b.txt").exists()
            assert not await again.approve(welcome.pending[0].call_id)  # answered already: nothing to answer
            await again.close()
    run(main())


@pytest.mark.allow_warning_logs  # the endpoint logs the wrong token
def test_a_wrong_token_or_version_is_refused_saying_why_and_a_closed_console_ends_the_stream(
        tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()

    async def main() -> None:
        async with Console(ws) as console:
            socket = _served(console)
            with pytest.raises(RemoteError, match="wrong token"):
                await Attached.connect(socket, "0" * 64)
            reader, writer = await asyncio.open_unix_connection(str(socket))
            writer.write(json.dumps({"kind": "attach", "token": install_token(config_dir()),
                                     "version": 99}).encode() + b"\n")
            refusal = json.loads(await reader.readline())
            assert refusal["ok"] is False and f"speaks version {PROTOCOL_VERSION}" in refusal["error"]
            writer.close()
            attached = await Attached.connect(socket, install_token(config_dir()))
            assert not await attached.approve("no-such-call")  # nothing waits under that id
            refused = await attached.undo("no-such-call")  # said as the window would show it
            assert refused["ok"] is False and "no-such-call" in refused["message"]
        with pytest.raises(Detached):
            async for _ in attached.events():
                pass
        with pytest.raises(RemoteError, match="not attached any more"):
            await attached.approve("c1")
        await attached.close()
    run(main())


def test_a_rule_command_missing_its_rule_or_with_a_wrong_action_is_refused_saying_what_it_needs(
        tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()

    async def main() -> None:
        async with Console(ws) as console:
            attached = await Attached.connect(_served(console), install_token(config_dir()))
            with pytest.raises(RemoteError, match="remove_rule needs a rule and its action"):
                await attached.ask("remove_rule", action="allow", scope="session")
            with pytest.raises(RemoteError, match="add_rule needs a rule and its action"):
                await attached.ask("add_rule", rule="Bash(ls:*)", action="accept", scope="session")
            with pytest.raises(RemoteError, match="add_rule needs the layer"):
                await attached.ask("add_rule", rule="Bash(ls:*)", action="allow", scope="once")
            with pytest.raises(RemoteError, match="answer_elicitation needs an answer"):
                await attached.ask("answer_elicitation", name="e1", action="deny")
            assert console.rules() == []  # nothing was added
            await attached.close()
    run(main())


def test_the_welcome_carries_a_long_journal_s_calls_cut_as_the_timeline_keeps_them(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    content = "line of a large file\n" * 50_000  # 1 MB in the Write's arguments

    async def main() -> None:
        async with Console(ws) as console:
            socket = _served(console)
            await console.add_rule("Write", "allow", "session")
            agent = await console.start_agent("writer", "scripted")
            await console.call(agent, "Write", {"file_path": str(ws / "big.txt"), "content": content})
            reader, writer = await asyncio.open_unix_connection(str(socket), limit=1 << 24)
            writer.write(json.dumps({"kind": "attach", "token": install_token(config_dir()),
                                     "version": PROTOCOL_VERSION}).encode() + b"\n")
            welcome = json.loads(await reader.readline())
            assert welcome["calls"] == [] and welcome["calls_following"] == 1  # in the lines after it
            line = await reader.readline()
            writer.close()
            assert len(line) < 64_000  # not the megabyte
            [call] = json.loads(line)["calls"]
            assert call["args"]["file_path"] == str(ws / "big.txt") and len(call["args"]["content"]) < 5_000
            [record] = await console.history()
            assert record.args["content"] == content  # the journal keeps it whole
    run(main())


def test_a_journals_calls_come_in_lines_of_a_chunk_each_and_are_read_whole(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A long journal's calls are megabytes: sent a chunk a line, so the front end reads them a line at a time
    (its loop turning between lines), and the events come only after the last."""
    import core.remote.server as server_module
    monkeypatch.setattr(server_module, "WELCOME_CHUNK", 2)
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("a\n")

    async def main() -> None:
        async with Console(ws) as console:
            socket = _served(console)
            agent = await console.start_agent("reader", "scripted")
            for _ in range(5):
                await console.call(agent, "Read", {"file_path": str(ws / "a.txt")})
            reader, writer = await asyncio.open_unix_connection(str(socket), limit=1 << 24)
            writer.write(json.dumps({"kind": "attach", "token": install_token(config_dir()),
                                     "version": PROTOCOL_VERSION}).encode() + b"\n")
            lines = [json.loads(await reader.readline()) for _ in range(4)]
            writer.close()
            assert [line["type"] for line in lines] == ["welcome", "calls", "calls", "calls"]
            assert lines[0]["calls_following"] == 5 and [len(line["calls"]) for line in lines[1:]] == [2, 2, 1]
            attached = await Attached.connect(socket, install_token(config_dir()))
            assert len(attached.welcome.calls) == 5 and len(attached.timeline().runs) == 5
            await console.call(agent, "Read", {"file_path": str(ws / "a.txt")})
            finished = await _until(attached, CallFinished)  # an event, after the calls
            assert isinstance(finished, CallFinished)
            await attached.close()
    run(main())


def test_the_welcome_carries_what_the_agents_said_and_their_tokens(tmp_path: Path) -> None:
    from datetime import datetime, timezone

    from core import Message, TokenUse, Usage
    ws = tmp_path / "ws"
    ws.mkdir()

    async def main() -> None:
        async with Console(ws) as console:
            socket, token = _served(console), install_token(config_dir())
            agent = await console.start_agent("claude-code 1234", "claude-code")
            at = datetime.now(timezone.utc)
            await console.recorder.conversation(agent.agent_id, [
                Message(message_id="m1", agent_id=agent.agent_id, kind="prompt", text="tidy up", at=at)],
                [TokenUse(response_id="r1", agent_id=agent.agent_id, at=at, model="opus", usage=Usage(input=7))])
            attached = await Attached.connect(socket, token)
            timeline = attached.timeline()
            assert [m.text for m in timeline.said(agent.agent_id)] == ["tidy up"]
            assert timeline.usage(agent.agent_id) == {"opus": Usage(input=7)}
            await attached.close()
    run(main())
