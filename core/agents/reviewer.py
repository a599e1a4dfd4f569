"""An unattended reviewer: answers approval requests by rules, as a front end would.

Used by `belay demo --auto-approve` (and by tests) in place of a person.  It
acts only through the console's commands, like the window, and says it is an
"auto-approver" so the journal does not credit a person.  Every request is
approved unless a rule says what a careful person would answer instead.
"""

from __future__ import annotations

import asyncio
import fnmatch
import logging
from collections.abc import Callable, Sequence

from core.agents.script import ReviewRule
from core.bus import Subscription
from core.console import Console
from core.events import ApprovalRequested
from core.tasks import spawn

log = logging.getLogger(__name__)


class AutoReviewer:
    """Approves, or denies with a reason where a rule matches."""

    def __init__(self, console: Console, rules: Sequence[ReviewRule] = (), delay: float = 0.0) -> None:
        self.console = console
        self.rules = list(rules)
        self.delay = delay
        """Seconds to leave each request visible before answering (for a watching person)."""
        self.answered: list[tuple[str, str]] = []
        self._sub: Subscription | None = None
        self._task: asyncio.Task[None] | None = None
        self._unregister: Callable[[], None] = lambda: None

    def rule_for(self, request: ApprovalRequested) -> ReviewRule | None:
        paths = [d.path for d in request.diffs] or [request.summary]
        for rule in self.rules:
            if rule.tool == request.tool and any(fnmatch.fnmatch(p, rule.path) for p in paths):
                return rule
        return None

    def answer(self, request: ApprovalRequested) -> None:
        rule = self.rule_for(request)
        if rule is not None and rule.decision == "deny":
            if self.console.deny(request.call_id, rule.reason, by="auto-approver"):
                self.answered.append((request.call_id, "deny"))
        elif self.console.approve(request.call_id, by="auto-approver"):
            self.answered.append((request.call_id, "approve"))

    def start(self) -> None:
        self._unregister = self.console.register_approver("auto reviewer")
        self._sub = self.console.subscribe()
        self._task = spawn(self._run(), "auto reviewer")
        for request in self.console.pending_approvals():
            self._schedule(request)

    def _schedule(self, request: ApprovalRequested) -> None:
        if self.delay:
            asyncio.get_running_loop().call_later(self.delay, self.answer, request)
        else:
            self.answer(request)

    async def _run(self) -> None:
        assert self._sub is not None
        while batch := await self._sub.next_batch():
            for event in batch:
                if isinstance(event, ApprovalRequested):
                    self._schedule(event)

    async def stop(self) -> None:
        self._unregister()
        if self._sub is not None:
            self._sub.close()
        if self._task is not None:
            self._task.cancel()
            await asyncio.wait([self._task])

    def __repr__(self) -> str:
        return f"<AutoReviewer rules={len(self.rules)} answered={len(self.answered)}>"
