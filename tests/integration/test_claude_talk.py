"""Talking to a session Belay launched (`belay claude` in a window): the person's next message is Claude's next turn.

The same scripted model as test_claude_launch.py.  The session is launched to stay open after Claude's answer;
the person's message, sent through the console as the window sends it, reaches the model, whose answer becomes
the session's; stopping it then ends it as answered.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from core import Console
from core.outside.claude_session import ClaudeSession
from tests.conftest import run, wait_until
from tests.integration.fake_anthropic import ModelRequest, ScriptedModel, ToolCall, Turn, answers, bundled_cli

FOLLOW_UP = "FOLLOW-UP: now say what the readme is about"


def _asks_again(request: ModelRequest) -> bool:
    return FOLLOW_UP in json.dumps(request.messages[-1:])


@pytest.mark.timeout(180)
def test_a_message_sent_to_a_launched_session_waiting_for_the_person_reaches_the_model(workspace: Path) -> None:
    turns = [Turn(tools=[ToolCall("Read", {"file_path": str(workspace / "README.md")}, id="f_read")]),
             Turn(text="Read it.", when=answers("f_read")),
             Turn(text="It is about a shop.", when=_asks_again)]

    async def scenario() -> None:
        async with Console(workspace) as console:
            with ScriptedModel(turns) as model:
                task = console.launch_claude("read the readme", env=model.env(), cli_path=str(bundled_cli()),
                                             follow_ups=True)
                launched: list[tuple[str, ClaudeSession]] = []

                def answered() -> bool:
                    launched[:] = [(a, s) for a in console.timeline.agents if (s := console.controls(a)) is not None]
                    return bool(launched) and launched[0][1].waiting
                await wait_until(answered, timeout=90, what="Claude's first answer")
                [(agent_id, session)] = launched
                assert not task.done()  # open for the person's next message
                assert await console.note(agent_id, FOLLOW_UP)
                await wait_until(lambda: session.waiting and any(map(_asks_again, model.message_requests())),
                                 timeout=90, what="the model asked again, and answering")
                session.stop()
                end = await asyncio.wait_for(task, 60)
                assert model.unscripted == []
            assert end.ok and end.summary == "It is about a shop.", end
            assert not await console.note(agent_id, "too late")  # the session has ended

    run(scenario())
