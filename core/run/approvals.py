"""Pending approvals as futures in a table, resolved only through the console.

A call that needs a person parks here.  Front ends answer through
`Console.approve` / `Console.deny`, which land in `resolve`; closing the
console answers every waiting call with a denial so no agent hangs.  Front
ends that can answer register as approvers: with none registered (a
headless run) nobody could answer, so asking means denying.  A request may
carry a deadline; running out of time is a normal outcome (a `TIMED_OUT`
answer), not an error.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from pydantic import BaseModel, ConfigDict

from core.events import ApprovalRequested
from core.models.policy import AllowScope
from core.models.records import DecidedBy, DecidedVia, Decision


class Answer(BaseModel):
    """The answer to one approval request: a person's, an auto-approver's, or what the broker settled."""

    model_config = ConfigDict(frozen=True)

    decision: Decision
    reason: str = ""
    edited: dict[str, str] | None = None
    """Replacement content per relative path, when approved with edits."""
    hunks: dict[str, tuple[int, ...]] | None = None
    """When approved in part: the accepted hunks (0-based, of the approval's diff) per relative path; a path not
    named keeps all its hunks.  `core.run.calls` turns them into `edited` content before the journal sees it."""
    scope: AllowScope = "session"
    """For always-allow: once (this call only), session, workspace or user."""
    rule: str | None = None
    """For always-allow: the rule to add (None: the policy's suggestion)."""
    by: DecidedBy = "person"
    """Who answered (see core.models.records.DecidedBy)."""
    via: DecidedVia | None = None
    """Where a person answered (the window, a notification, the terminal)."""
    preview: bool = False
    """For a command: run it in preview (its changes are put before the person before they land)."""


class ApprovalBroker:
    """The table of calls waiting for a person."""

    def __init__(self) -> None:
        self._pending: dict[str, tuple[ApprovalRequested, asyncio.Future[Answer]]] = {}
        self._unannounced: set[str] = set()
        """Expected calls not yet waiting: their answers are taken, but they are not listed until announced."""
        self._approvers: dict[int, str] = {}
        self._next_approver = 0

    def register_approver(self, name: str) -> Callable[[], None]:
        """Say that `name` (a window, a terminal, a reviewer) can answer; returns the way to unsay it."""
        self._next_approver += 1
        token = self._next_approver
        self._approvers[token] = name

        def unregister() -> None:
            self._approvers.pop(token, None)

        return unregister

    @property
    def approvers(self) -> list[str]:
        return list(self._approvers.values())

    def expect(self, request: ApprovalRequested) -> None:
        """Take answers for `request` from now on, before it is announced: whoever hears of it may answer at
        once, even before the call gets to `wait` (its announcement comes after the journal's commit, and the
        answer can come first).  It is not listed (`pending`) before the call waits: a front end hears of it
        from its announcement.  `withdraw` undoes it if the call never gets to `wait`."""
        self._pending[request.call_id] = (request, asyncio.get_running_loop().create_future())
        self._unannounced.add(request.call_id)

    def withdraw(self, call_id: str) -> None:
        """Stop taking answers for a call that was expected but will not wait (its request was not journaled)."""
        self._pending.pop(call_id, None)
        self._unannounced.discard(call_id)

    async def wait(self, request: ApprovalRequested, timeout_s: float | None = None) -> Answer:
        """Park the call until someone answers (already, if it was expected) or the deadline passes;
        cancellation removes it."""
        entry = self._pending.get(request.call_id)
        future: asyncio.Future[Answer] = entry[1] if entry is not None else \
            asyncio.get_running_loop().create_future()
        self._pending[request.call_id] = (request, future)
        self._unannounced.discard(request.call_id)
        try:
            if not timeout_s:
                return await future
            done, _ = await asyncio.wait([future], timeout=timeout_s)
            if done:
                return future.result()
            return Answer(decision=Decision.TIMED_OUT, reason=f"nobody answered within {timeout_s:g} s",
                          by="timeout")
        finally:
            self._pending.pop(request.call_id, None)

    def resolve(self, call_id: str, answer: Answer) -> bool:
        """Answer a waiting call; False if it is not waiting (already answered, gone)."""
        entry = self._pending.get(call_id)
        if entry is None or entry[1].done():
            return False
        entry[1].set_result(answer)
        return True

    def pending(self) -> list[ApprovalRequested]:
        return [request for call_id, (request, future) in self._pending.items()
                if not future.done() and call_id not in self._unannounced]

    def request_for(self, call_id: str) -> ApprovalRequested | None:
        entry = self._pending.get(call_id)
        return entry[0] if entry and call_id not in self._unannounced else None

    def deny_all(self, reason: str) -> None:
        for call_id in list(self._pending):
            self.resolve(call_id, Answer(decision=Decision.DENIED, reason=reason, by="console"))

    def __repr__(self) -> str:
        return f"<ApprovalBroker pending={list(self._pending)}>"
