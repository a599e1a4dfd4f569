"""ApprovalBroker: a waiting call gets exactly one answer: a person's, a timeout's, or a denial on close."""

from __future__ import annotations

import asyncio

from core.events import ApprovalRequested
from core.ids import CallId, new_agent_id, new_call_id
from core.models.records import Decision
from core.run.approvals import Answer, ApprovalBroker
from tests.conftest import run


def _request() -> ApprovalRequested:
    return ApprovalRequested(call_id=new_call_id(), agent_id=new_agent_id(), tool="Write", summary="a.py",
                             reason="writes need approval", args={"file_path": "/ws/a.py"})


async def _parked(broker: ApprovalBroker, request: ApprovalRequested,
                  timeout_s: float | None = None) -> asyncio.Task[Answer]:
    task = asyncio.ensure_future(broker.wait(request, timeout_s))
    while broker.request_for(request.call_id) is None:
        await asyncio.sleep(0)
    return task


def test_a_waiting_call_is_listed_until_answered_and_then_gets_that_answer() -> None:
    async def scenario() -> None:
        broker, request = ApprovalBroker(), _request()
        task = await _parked(broker, request)
        assert broker.pending() == [request] and broker.request_for(request.call_id) == request
        answer = Answer(decision=Decision.APPROVED_EDITED, edited={"a.py": "x = 1\n"})
        assert broker.resolve(request.call_id, answer)
        assert await task == answer
        assert broker.pending() == [] and broker.request_for(request.call_id) is None

    run(scenario())


def test_a_second_answer_is_refused_and_the_first_stands() -> None:
    async def scenario() -> None:
        broker, request = ApprovalBroker(), _request()
        task = await _parked(broker, request)
        assert broker.resolve(request.call_id, Answer(decision=Decision.DENIED, reason="no"))
        assert not broker.resolve(request.call_id, Answer(decision=Decision.APPROVED))
        assert (await task).decision is Decision.DENIED
        assert not broker.resolve(request.call_id, Answer(decision=Decision.APPROVED))  # gone once answered
        assert not broker.resolve(CallId("call_unknown"), Answer(decision=Decision.APPROVED))

    run(scenario())


def test_nobody_answering_in_time_is_a_timed_out_answer_and_a_late_answer_is_refused() -> None:
    async def scenario() -> None:
        broker, request = ApprovalBroker(), _request()
        answer = await broker.wait(request, timeout_s=0.01)
        assert (answer.decision, answer.by) == (Decision.TIMED_OUT, "timeout")
        assert "0.01 s" in answer.reason
        assert broker.pending() == [] and not broker.resolve(request.call_id, Answer(decision=Decision.APPROVED))

    run(scenario())


def test_closing_denies_every_waiting_call_and_a_cancelled_wait_leaves_the_table() -> None:
    async def scenario() -> None:
        broker = ApprovalBroker()
        first, second, cancelled = _request(), _request(), _request()
        waits = [await _parked(broker, first), await _parked(broker, second, timeout_s=60)]
        gone = await _parked(broker, cancelled)
        gone.cancel()
        await asyncio.gather(gone, return_exceptions=True)
        assert broker.pending() == [first, second]
        broker.deny_all("the console closed")
        for answer in await asyncio.gather(*waits):
            assert (answer.decision, answer.reason, answer.by) == (Decision.DENIED, "the console closed", "console")
        assert broker.pending() == []

    run(scenario())


def test_approvers_are_listed_while_registered_and_unregistering_twice_is_harmless() -> None:
    broker = ApprovalBroker()
    unregister_window = broker.register_approver("window")
    unregister_terminal = broker.register_approver("terminal")
    assert broker.approvers == ["window", "terminal"]
    unregister_window()
    unregister_window()
    assert broker.approvers == ["terminal"]
    unregister_terminal()
    assert broker.approvers == []


def test_an_answer_to_an_expected_request_is_kept_until_the_call_waits_and_a_withdrawn_one_is_refused() -> None:
    async def scenario() -> None:
        broker, request, dropped = ApprovalBroker(), _request(), _request()
        broker.expect(request)
        broker.expect(dropped)
        assert broker.pending() == [] and broker.request_for(request.call_id) is None  # not listed until announced
        assert broker.resolve(request.call_id, Answer(decision=Decision.APPROVED))  # before the call waits
        assert (await broker.wait(request)).decision is Decision.APPROVED
        broker.withdraw(dropped.call_id)
        assert not broker.resolve(dropped.call_id, Answer(decision=Decision.APPROVED))
        assert broker.pending() == []

    run(scenario())
