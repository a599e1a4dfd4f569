"""The steps every call takes, whoever runs its tool: open, decide, permit, start, capture, finish.

Belay's pipeline (`core.run.pipeline`) runs the tool itself between `start`
and `finish`; for a call an outside agent makes with its own tool
(`core.outside.intercept`) the agent runs it in between.  Either way the call
is handed to the journal before anything is decided about it, judged by the same
policy, put before a person by the same `permit`, and ended by the same
`finish`, so the journal, the window and undo cannot tell the two apart.
On the hot path (`wait=False`) a call's steps are journaled as one group
commit (core.store.group_commit): the row of each step is handed over in
order and committed, at the latest, with the step that waits (the start
of a tool that may change something, a question to a person, the end).

Asking returns a value: the call is `Allowed` (with the person's edits, if
they made any) or `Refused` (denied by a rule or a person, or nobody
answered in time); nothing is raised to say so.  What a call changed
travels on its `OpenCall`, not in a table keyed by its id.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from core.changes.diffs import compute_diff
from core.changes.partial import PartialError, apply_hunks, not_applied, partial_note
from core.errors import ErrorInfo, ErrorKind
from core.events import ApprovalRequested, ProposedFile
from core.ids import AgentId, BatchId, CallId, SessionId
from core.models.diffs import FileDiff
from core.models.policy import Scope
from core.models.records import Decision, FileChange, GitChange, RunStatus
from core.paths import Workspace
from core.policy.engine import PolicyEngine
from core.policy.verdicts import PolicyRequest, Verdict
from core.recorder import Recorder
from core.run.approvals import Answer, ApprovalBroker
from core.tools.base import ReadState, WritePlan
from core.tools.names import ToolName
from core.tools.nbpartial import notebook_in_part

log = logging.getLogger(__name__)
MAX_OUTPUT_CHARS = 30_000
"""The most of a call's text the agent (and the journal's run row) gets; the middle is cut."""
MAX_PROPOSED_BYTES = 1_000_000
"""Past this size a pending write's new content is not offered for editing in the approval."""


@dataclass
class AgentHandle:
    """A live agent: who it is, what it may call, what it has read."""

    agent_id: AgentId
    name: str
    session_id: SessionId
    tools: frozenset[str] | None = None
    """The tools it may call; None: every registered tool."""
    read_state: ReadState = field(default_factory=ReadState)

    def may_call(self, tool: str) -> bool:
        return self.tools is None or tool in self.tools


@dataclass(frozen=True)
class CallOutcome:
    """What the agent learns about its call."""

    call_id: CallId
    status: RunStatus
    text: str
    data: dict[str, Any] = field(default_factory=dict)
    error: ErrorInfo | None = None
    cached: bool = False
    attempts: int = 1


@dataclass
class OpenCall:
    """A call between `open` and `finish`: what it is, and what it has changed so far."""

    call_id: CallId
    agent: AgentHandle
    tool: str
    args: dict[str, Any]
    """The arguments as journaled and shown (the agent's, or a readable stand-in when they were malformed)."""
    summary: str
    started: float = field(default_factory=time.monotonic)
    changes: tuple[FileChange, ...] = ()
    git: tuple[GitChange, ...] = ()
    unrecorded: tuple[str, ...] = ()
    """Files it changed whose names are not valid UTF-8: the journal cannot hold them (shown escaped)."""


@dataclass(frozen=True)
class Allowed:
    """The call may run."""

    edited: dict[str, str] | None = None
    """The person's content per relative path, when they edited a pending write before approving it."""
    note: str = ""
    """What the agent is told of the person's edit when it is more than "edited": the hunks not applied."""
    preview: bool = False
    """The person asked to see a command's changes before they land ("run in preview")."""


@dataclass(frozen=True)
class Refused:
    """The call does not run."""

    status: RunStatus
    """DENIED (a rule or a person said no) or TIMED_OUT (nobody answered in time)."""
    text: str
    """What the agent is told."""
    error: ErrorInfo


Permission = Allowed | Refused


class Calls:
    """The shared steps, over one console's policy, approvals and recorder."""

    def __init__(self, *, workspace: Workspace, policy: PolicyEngine, approvals: ApprovalBroker, recorder: Recorder,
                 always_allow: Callable[[str, Scope], Awaitable[object]],
                 sandbox: Callable[[], str] = lambda: "") -> None:
        self.workspace, self.policy, self.approvals, self.recorder = workspace, policy, approvals, recorder
        self._always_allow = always_allow
        """Adds an allow rule at a scope (the console's, so that the change is announced)."""
        self._sandbox = sandbox
        """Describes what Bash commands run in, for the approval card."""

    async def open(self, call_id: CallId, agent: AgentHandle, tool: str, args: dict[str, Any], summary: str,
                   batch: tuple[BatchId, str] | None = None, *, wait: bool = True,
                   use_id: str | None = None) -> OpenCall:
        """Journal the call and announce it queued; `batch` is (batch id, the call's id in it).  `wait=False`
        (the pipeline's and the interceptor's hot path): not waited for, the row is committed with the call's
        next step that waits (`start`, `ask`, `finish`), and a failure to write it is raised there."""
        call = OpenCall(call_id, agent, tool, args, summary)
        await self.recorder.call_queued(call_id, agent.agent_id, tool, args, summary, batch, wait=wait,
                                        use_id=use_id)
        return call

    async def decide(self, request: Callable[[], PolicyRequest], *, ask: bool = False) -> Verdict:
        """The policy's verdict on the call `request` makes.  The request (a realpath per path it names) and
        the quick verdicts (a read-only tool, an allow rule, a mode: most calls) are made on the loop; a Bash
        line, which takes a while to analyse, and a folder an outside agent's tool would walk go to a thread
        (`PolicyEngine.quick`).  `ask` turns an allow into a question for a person."""
        made = request()
        if self.policy.quick(made):
            verdict = self.policy.evaluate(made)
        else:
            verdict = await asyncio.to_thread(self.policy.evaluate, made)
        if ask and verdict.action == "allow":
            verdict = verdict.model_copy(update={"action": "ask", "reason": "the plan asks for a person's approval "
                                                 f"of this call (the policy alone would allow it: {verdict.reason})"})
        return verdict

    async def permit(self, call: OpenCall, verdict: Verdict, plan: WritePlan | None = None, *,
                     wait: bool = True) -> Permission:
        """Whether the call may run: the verdict, and when it asks, a person's answer.  `plan` is what a
        file tool would write (its diff is shown).  `wait=False`: a verdict given without asking is committed
        with the call's next step that waits (a person's answer is always waited for)."""
        if verdict.action != "ask":
            await self.recorder.approval_resolved(
                call.call_id, Decision.APPROVED if verdict.action == "allow" else Decision.DENIED, verdict.reason,
                verdict.by, verdict.rule, durable=False, wait=wait)
        if verdict.action == "deny":
            return Refused(RunStatus.DENIED, f"Denied by Belay's policy: {verdict.reason}.",
                           ErrorInfo(kind=ErrorKind.DENIED, message=verdict.reason))
        if verdict.action == "allow":
            return Allowed()
        answer = await self.ask(call, verdict, plan)
        refusal = _refusal(answer, call.tool)
        if refusal is not None:
            return refusal
        note = partial_note([answer.reason]) if answer.hunks is not None else ""
        return Allowed(answer.edited if answer.edited and plan is not None else None, note, answer.preview)

    async def ask(self, call: OpenCall, verdict: Verdict, plan: WritePlan | None, *, in_part: bool = True,
                  output: str = "") -> Answer:
        """Put the call before a person (the window, the terminal) and wait for the answer.

        With no front end that could answer, the answer is a denial at once.  A rule's timeout that
        allows turns TIMED_OUT into APPROVED.  An "always allow" answer adds its rule.  `in_part=False` leaves
        the accepted hunks as the person gave them (a preview reads them per file: `core.run.preview`);
        `output` is a previewed command's, shown with its changes."""
        diffs, proposed = await asyncio.to_thread(self._preview, plan) if plan else ((), ())
        bash = call.tool == ToolName.BASH
        request = ApprovalRequested(call_id=call.call_id, agent_id=call.agent.agent_id, tool=call.tool,
                                    summary=call.summary, reason=verdict.reason, args=call.args, diffs=diffs,
                                    proposed=proposed, timeout_s=verdict.timeout_s, on_timeout=verdict.on_timeout,
                                    rule=verdict.rule, impact=verdict.impact, analysis=verdict.analysis,
                                    suggested_rule=verdict.suggested_rule,
                                    cwd=str(self.workspace.root) if bash else "",
                                    sandbox=self._sandbox() if bash else "", output=output,
                                    intent=self.recorder.said.intent(call.agent.agent_id))
        if not self.approvals.approvers:
            answer = Answer(decision=Decision.DENIED, by="headless",
                            reason="it needs approval and no window is attached to give it")
        else:
            self.approvals.expect(request)  # an answer given as soon as the request is heard is kept
            try:
                await self.recorder.approval_requested(request)
            except BaseException:
                self.approvals.withdraw(request.call_id)
                raise
            answer = await self.approvals.wait(request, verdict.timeout_s)
            if in_part and answer.hunks is not None and answer.decision == Decision.APPROVED_EDITED:
                answer = await asyncio.to_thread(_in_part, answer, plan, diffs, self.workspace, call.tool)
            if answer.decision == Decision.TIMED_OUT and verdict.on_timeout == "allow":
                answer = answer.model_copy(update={"decision": Decision.APPROVED,
                                                   "reason": f"{answer.reason}; the rule allows it then"})
        await self.recorder.approval_resolved(call.call_id, answer.decision, answer.reason, answer.by,
                                              verdict.rule if answer.by == "timeout" else None, via=answer.via)
        if answer.decision == Decision.ALWAYS_ALLOWED and answer.scope != "once":
            rule = answer.rule or verdict.suggested_rule
            if rule is not None:
                try:
                    await self._always_allow(rule, answer.scope)
                except (ValueError, OSError) as e:  # the call is approved; only the rule could not be kept
                    log.warning("could not add the rule %s to %s: %s", rule, answer.scope, e)
        return answer

    async def start(self, call: OpenCall, *, wait: bool = True) -> None:
        """The call is allowed and its tool runs now (Belay's, or the agent's own): journaled before it runs, so
        that a console killed meanwhile knows it was running.  `wait=False` for a tool of Belay's that only
        reads: its start is then committed with its end (a kill loses the call, which changed nothing)."""
        await self.recorder.call_started(call.call_id, wait=wait)

    async def captured(self, call: OpenCall, changes: tuple[FileChange, ...], git: tuple[GitChange, ...] = ()) -> None:
        """What the call changed, journaled at once so that a crash cannot lose it (with what it changed
        before: the journal keeps one change set per call)."""
        unnamed = tuple(c for c in changes if not _utf8(c.path) or (c.old_path is not None and not _utf8(c.old_path)))
        if unnamed:
            shown = tuple(c.path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
                          for c in unnamed)
            log.warning("call %s changed %d file(s) whose names are not UTF-8, which cannot be journaled: %s",
                        call.call_id, len(unnamed), ", ".join(shown))
            call.unrecorded += shown
            changes = tuple(c for c in changes if c not in unnamed)
        call.changes += changes
        call.git += git
        await self.recorder.changes_captured(call.call_id, call.changes if changes else (), call.git if git else ())

    async def finish(self, call: OpenCall, status: RunStatus, text: str, error: ErrorInfo | None = None, *,
                     data: dict[str, Any] | None = None, cached: bool = False, attempts: int = 1,
                     full_output: str | None = None) -> CallOutcome:
        """Record how the call ended, with everything it changed, and tell the agent."""
        if call.unrecorded:
            text += (f"\n(Belay could not record changes to {len(call.unrecorded)} file(s) whose names are not "
                     f"valid UTF-8, so they cannot be undone: {', '.join(call.unrecorded[:5])})")
        text = _cap(text)
        await self.recorder.call_finished(call.call_id, status, text, error, time.monotonic() - call.started,
                                          changes=call.changes, git=call.git, cached=cached, attempts=attempts,
                                          full_output=full_output)
        return CallOutcome(call.call_id, status, text, dict(data or {}), error, cached=cached, attempts=attempts)

    def _preview(self, plan: WritePlan) -> tuple[tuple[FileDiff, ...], tuple[ProposedFile, ...]]:
        """Blocking: the diff and the new content of every file a pending write would change."""
        diffs, proposed = [], []
        for w in plan.writes:
            rel = self.workspace.relative(w.path)
            before, after = w.shown if w.shown is not None else (w.before, w.after)
            diffs.append(compute_diff(rel, before, after))
            proposed.append(ProposedFile(path=rel, content=_text_or_none(w.after)))
        return tuple(diffs), tuple(proposed)

    def __repr__(self) -> str:
        return f"<Calls {self.workspace.root} waiting={len(self.approvals.pending())}>"


def _in_part(answer: Answer, plan: WritePlan | None, diffs: tuple[FileDiff, ...], workspace: Workspace,
             tool: str) -> Answer:
    """Blocking: a partial approval as the content it writes (the accepted hunks applied to each file as the
    agent saw it) and, as its reason, the hunks not applied; a denial when the hunks cannot be applied."""
    hunks = answer.hunks or {}
    edited = dict(answer.edited or {})
    said: list[str] = []
    try:
        if plan is None:
            raise PartialError("this call has no diff to approve in part")
        for write, diff in zip(plan.writes, diffs, strict=True):
            rel = workspace.relative(write.path)
            if rel not in hunks:
                continue
            accepted = set(hunks[rel])
            if write.before is None:
                raise PartialError(f"{rel} is created whole by this call, so it cannot be approved in part")
            if write.shown is not None and tool != ToolName.NOTEBOOK_EDIT:
                raise PartialError(f"{rel} is shown as a readable rendering, not its bytes, so it cannot be "
                                   "approved in part")
            written = notebook_in_part(write, diff, accepted, rel) if write.shown is not None \
                else apply_hunks(write.before, diff, accepted)
            edited[rel] = written.decode("utf-8")
            rejected = set(range(len(diff.hunks))) - accepted
            said.append(not_applied(rel, rejected, len(diff.hunks), answer.reason))
        missing = sorted(set(hunks) - {workspace.relative(w.path) for w in plan.writes})
        if missing:
            raise PartialError(f"this call does not write {missing[0]}")
    except PartialError as e:
        return Answer(decision=Decision.DENIED, by=answer.by,
                      reason=f"the person approved it only in part, and that part could not be applied: {e}")
    parts = [p for p in said if p]
    if not parts:  # every hunk kept: a plain approval (or the person's other edits alone)
        return answer.model_copy(update={"hunks": None, "decision": Decision.APPROVED_EDITED if answer.edited
                                         else Decision.APPROVED})
    return answer.model_copy(update={"edited": edited, "reason": "; ".join(parts)})


def _refusal(answer: Answer, tool: str) -> Refused | None:
    """What the agent is told when the answer is not a yes; None when it is."""
    if answer.decision == Decision.TIMED_OUT:
        text = f"Nobody approved this {tool} call in time ({answer.reason}); it was not run."
        return Refused(RunStatus.TIMED_OUT, text,
                       ErrorInfo(kind=ErrorKind.TIMEOUT, message=f"approval timed out: {answer.reason}",
                                 suggestion="Try again later, or ask the person to raise the timeout."))
    if answer.decision == Decision.DENIED:
        said = f" Reason: {answer.reason}" if answer.reason else ""
        who = "The user denied" if answer.by == "person" else "Belay denied"
        return Refused(RunStatus.DENIED, f"{who} this {tool} call.{said}",
                       ErrorInfo(kind=ErrorKind.DENIED, message=answer.reason or "denied by the user"))
    return None


def error_text(info: ErrorInfo) -> str:
    """An error as the agent reads it: kind, message and what to do."""
    return f"Error ({info.kind.value}): {info.message}" + (f" {info.suggestion}" if info.suggestion else "")


def _cap(text: str) -> str:
    if len(text) <= MAX_OUTPUT_CHARS:
        return text
    half = MAX_OUTPUT_CHARS // 2
    cut = len(text) - 2 * half
    return f"{text[:half]}\n[... {cut:,} characters cut ...]\n{text[-half:]}"


def _text_or_none(data: bytes | None) -> str | None:
    if data is None or len(data) > MAX_PROPOSED_BYTES or b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
