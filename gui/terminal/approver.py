"""Approvals answered at the terminal: the request shown as a card, then a prompt, one at a time.

Standard input is read by a daemon thread, a line at a time and only while
a question is open: a blocked read cannot be cancelled, and a thread in the
default executor would keep the program from exiting when a question went
away (its rule's timeout answered it) before the person did.
"""

from __future__ import annotations

import asyncio
import os
import threading

from core import ApprovalRequested, ApprovalResolved, Console, spawn, unified_text
from gui.terminal.run_log import Output, Watch

PROMPT = "Allow? [y]es / [n]o / [ya] always allow / [na] always deny: "
EOF_REASON = "no answer (stdin closed)"
MAX_DIFF_LINES = 400
"""Diff lines shown per approval; the window shows all of them."""


class StdinLines:
    """Lines of standard input, read by a daemon thread only while someone waits for one."""

    def __init__(self, fd: int = 0) -> None:
        self._fd = fd
        self._buffer = b""
        self._eof = False
        self._asked = False
        self._wanted = threading.Semaphore(0)
        self._chunks: asyncio.Queue[bytes] = asyncio.Queue()
        self._thread: threading.Thread | None = None
        self._closed = False

    async def readline(self) -> str | None:
        """The next line without its ending; None at the end of input."""
        while b"\n" not in self._buffer and not self._eof:
            if self._thread is None:
                loop = asyncio.get_running_loop()
                self._thread = threading.Thread(target=self._read, args=(loop,), name="belay stdin", daemon=True)
                self._thread.start()
            if not self._asked:
                self._asked = True
                self._wanted.release()
            chunk = await self._chunks.get()
            self._asked = False
            self._buffer += chunk
            self._eof = not chunk
        if not self._buffer:
            return None
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line.decode("utf-8", "replace").rstrip("\r")

    def close(self) -> None:
        """Ends the reading thread once nobody waits for a line (a read already under way ends with its line,
        or at the end of input): `attach` and `belay run` may end, in a process that goes on (a test's)."""
        self._closed = True
        self._wanted.release()

    def _read(self, loop: asyncio.AbstractEventLoop) -> None:
        while True:
            self._wanted.acquire()
            if self._closed:
                return
            try:
                chunk = os.read(self._fd, 65536)
            except OSError:  # no standard input at all: as good as closed
                chunk = b""
            try:
                loop.call_soon_threadsafe(self._chunks.put_nowait, chunk)
            except RuntimeError:  # the run ended while this read waited
                return
            if not chunk:
                return

    def __repr__(self) -> str:
        return f"<StdinLines fd={self._fd} buffered={len(self._buffer)} eof={self._eof} reading={self._asked}>"


class TerminalApprover:
    """Asks the person at the terminal about each request, one at a time, in the order they came."""

    def __init__(self, console: Console, out: Output, watch: Watch, lines: StdinLines, echo: bool) -> None:
        self.console, self.out, self.watch, self.lines = console, out, watch, lines
        self.echo = echo
        """Print each answer after its prompt (input from a pipe is not echoed by a terminal)."""
        self._queue: asyncio.Queue[ApprovalRequested] = asyncio.Queue()
        self._asking: str | None = None
        """The call whose question is open."""
        self._answered_elsewhere: asyncio.Future[ApprovalResolved] | None = None

    def offer(self, request: ApprovalRequested) -> None:
        self._queue.put_nowait(request)

    def resolved(self, event: ApprovalResolved) -> None:
        """A request was answered; if it is the open question (its rule's time ran out), stop asking."""
        waiting = self._answered_elsewhere
        if event.call_id == self._asking and waiting is not None and not waiting.done():
            waiting.set_result(event)

    async def run(self) -> None:
        while True:
            request = await self._queue.get()
            if any(r.call_id == request.call_id for r in self.console.pending_approvals()):
                self.out.hold()
                try:
                    await self._ask(request)
                finally:
                    self.out.release()

    async def _ask(self, request: ApprovalRequested) -> None:
        self.out.now(card(request, self.watch.label(request.call_id)), end="")
        self._asking = request.call_id
        elsewhere = self._answered_elsewhere = asyncio.get_running_loop().create_future()
        talk = spawn(self._converse(request), "terminal approval")
        try:
            await asyncio.wait([talk, elsewhere], return_when=asyncio.FIRST_COMPLETED)
        finally:
            talk.cancel()
            elsewhere.cancel()
            await asyncio.wait([talk])
            self._asking = self._answered_elsewhere = None
        if not talk.cancelled():
            talk.result()
        elif elsewhere.done() and not elsewhere.cancelled():
            event = elsewhere.result()
            how = "nobody answered in time" if event.by == "timeout" else \
                f"{event.decision.value.replace('_', ' ')} by {event.by}"
            self.out.now(f"  No longer asking: {how}.")

    async def _converse(self, request: ApprovalRequested) -> None:
        while True:
            answer = await self._prompt(PROMPT)
            if answer is None:
                self.out.now(f"  denied: {EOF_REASON}")  # nobody is left to answer: not a person's no
                self._done(self.console.deny(request.call_id, EOF_REASON, by="headless"))
                return
            choice = answer.strip().lower()
            if choice in ("y", "yes"):
                self._done(self.console.approve(request.call_id, via="terminal"))
            elif choice in ("n", "no"):
                reason = await self._prompt("Reason for the agent (optional): ")
                self._done(self.console.deny(request.call_id, reason or "", via="terminal"))
            elif choice == "ya":
                await self._always_allow(request)
            elif choice == "na":
                await self._always_deny(request)
            else:
                self.out.now("  Please answer y, n, ya or na.")
                continue
            return

    async def _always_allow(self, request: ApprovalRequested) -> None:
        if self._done(self.console.always_allow(request.call_id, "session", via="terminal")):
            if request.suggested_rule:
                self.out.now(f"  Allowed; the session rule {request.suggested_rule} allows calls like it from now on.")
            else:
                self.out.now("  Allowed once: no rule can allow calls like this one, so they will be asked again.")

    async def _always_deny(self, request: ApprovalRequested) -> None:
        rule = request.suggested_rule or request.tool
        try:
            stored = await self.console.add_rule(rule, "deny", "session")
        except ValueError as e:
            self.out.now(f"  Could not add the deny rule {rule}: {e}")
            self._done(self.console.deny(request.call_id, via="terminal"))
            return
        like = "calls like it" if request.suggested_rule else f"every {request.tool} call"
        self.out.now(f"  Denied; the session rule {stored} denies {like} from now on.")
        self._done(self.console.deny(request.call_id, f"always denied for this session (rule {stored})",
                                       via="terminal"))

    def __repr__(self) -> str:
        return f"<TerminalApprover asking={self._asking} queued={self._queue.qsize()} echo={self.echo}>"

    def _done(self, resolved: bool) -> bool:
        if not resolved:
            self.out.now("  Too late: the request had already been answered.")
        return resolved

    async def _prompt(self, prompt: str) -> str | None:
        self.out.now(prompt, end="")
        line = await self.lines.readline()
        if self.echo or line is None:
            self.out.finish_line(line or "")
        else:
            self.out.line_ended()
        return line


SAID_LINES = 3
"""Lines of the agent's last words a card shows (the window shows them whole)."""


def card(request: ApprovalRequested, label: str) -> str:
    """What the person reads before answering: tool, summary, reason, the agent's words, then the diff or the
    command."""
    lines = [f"── approval needed: {label} ──", f"tool:    {request.tool}", f"summary: {request.summary}",
             f"reason:  {request.reason}"]
    if request.impact.reasons:
        lines.append(f"impact:  {request.impact.level}: {'; '.join(request.impact.reasons)}")
    if request.intent is not None:  # why, in the agent's words (its last, a few lines; its prompt, one)
        said = request.intent.said.strip().splitlines()
        lines += [f"said:    {line}" for line in said[:SAID_LINES]] + (["         …"] if len(said) > SAID_LINES else [])
        if request.intent.prompt:
            lines.append(f"asked:   {request.intent.prompt.strip().splitlines()[0]}")
    if request.timeout_s:
        lines.append(f"timeout: {request.timeout_s:g} s, then {request.on_timeout}")
    if request.analysis is not None:
        lines += _bash_lines(request)
    diff = "".join(unified_text(d) for d in request.diffs).splitlines()
    lines += diff[:MAX_DIFF_LINES]
    if len(diff) > MAX_DIFF_LINES:
        lines.append(f"… {len(diff) - MAX_DIFF_LINES} more diff lines (the window shows them all)")
    return "\n".join(lines) + "\n"


def _bash_lines(request: ApprovalRequested) -> list[str]:
    analysis = request.analysis
    assert analysis is not None
    lines = [f"command: {analysis.command}", f"in:      {request.cwd}"]
    if request.sandbox:
        lines.append(f"sandbox: {request.sandbox}")
    for problem in (analysis.hidden_character, analysis.syntax_error):
        if problem:
            lines.append(f"  ! {problem}")
    lines += [f"  ! {c.text}  ({c.effect}: {c.why})" for c in analysis.commands if c.effect not in ("read", "edit")]
    return lines
