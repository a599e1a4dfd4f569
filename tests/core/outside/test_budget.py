"""A budget reached while transcripts are read: told once, and the next call the policy would allow is asked."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

from core.bus import EventBus
from core.events import BudgetReached
from core.ids import AgentId, new_session_id
from core.models.conversation import TokenUse, Usage
from core.outside.budget import BudgetWatch
from core.policy.engine import PolicyEngine, PolicyRequest
from core.policy.settings import config_dir
from core.recorder import Recorder
from tests.conftest import run


def _used(n: int, tokens: int) -> TokenUse:
    return TokenUse(response_id=f"r{n}", agent_id="a1", at=datetime.now(timezone.utc), model="claude-sonnet-4",
                    usage=Usage(input=tokens))


def test_a_limit_reached_is_told_once_and_holds_only_the_next_call(tmp_path: Path) -> None:
    config_dir().mkdir(parents=True, exist_ok=True)
    (config_dir() / "settings.toml").write_text("[budget]\nsession_tokens = 1000\nhold = true\n")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    policy = PolicyEngine()
    assert policy.load(workspace) == []
    bus = EventBus()
    told: list[BudgetReached] = []
    bus.listen(lambda e: told.append(e) if isinstance(e, BudgetReached) else None)
    read = PolicyRequest(tool="Read", args={"file_path": str(workspace / "a")}, workspace=workspace)

    async def scenario() -> None:
        recorder = await Recorder.open(tmp_path / "journal.sqlite3", bus, new_session_id(), workspace)
        watch = BudgetWatch(recorder, policy)
        try:
            await recorder.session()
            for n, tokens in enumerate((600, 500, 700)):
                used = [_used(n, tokens)]
                await recorder.conversation(AgentId("a1"), [], used)
                await watch.heard(used)
        finally:
            await recorder.close()

    run(scenario())
    assert [(e.limit, e.held) for e in told] == [("session_tokens", True)]
    assert told[0].message == "this session has used 1,100 tokens of its budget of 1,000"
    held = policy.evaluate(read)
    assert held.action == "ask" and held.reason.startswith("this session has used 1,100 tokens")
    assert policy.evaluate(read).action == "allow"  # the next call only
