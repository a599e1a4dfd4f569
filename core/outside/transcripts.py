"""Agents' transcripts followed as they grow, their conversation recorded beside their calls.

An agent CLI's hook events name its transcript (`transcript_path`); its adapter asks this to `follow` it
for the session's agent (and a sub-agent's own file for the sub-agent).  A file is read from where its last
read stopped (core.transcripts.tail), on a thread of its own, never the loop's: when the agent's next hook
arrives (`catch_up`, awaited before its call is decided, so that its last words are on the approval card)
and when watchdog says the file changed (the words after the last call).  What was read is recorded
through the recorder (journaled, then announced as `ConversationRecorded`).  One read at a time per file;
a change seen during a read makes the read go on.
"""

from __future__ import annotations

import asyncio
import logging
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver

from core.ids import AgentId
from core.models.conversation import Message, TokenUse
from core.outside.budget import BudgetWatch
from core.recorder import Recorder
from core.tasks import spawn
from core.transcripts.reader import TranscriptReader, skipped_note
from core.transcripts.tail import JsonlTail

log = logging.getLogger(__name__)

STEP_BYTES = 1 << 20
"""What one read takes in before its finds are recorded: the loop's share of a step (announcing what was read)
stays under a millisecond or two however fast the file grows."""
USE_WAIT_S = 1.0
"""How long a call's hook waits for the response that made the call to be in its agent's transcript (Claude Code
may write it a moment after it runs its hook): its words before the call are then on the approval card, and its
tokens are counted before a budget decides the call."""
USES_KEPT = 50_000
"""The tool-use ids read, kept to tell a response already read (forgotten in one go past this many)."""
CATCH_UP_STEPS = 8
"""The most a call waits to be decided while its agent's transcript is read (a session resumed over a file of
hundreds of megabytes): some 8 MB, a tenth of a second; the rest is read meanwhile, the call goes on."""


@dataclass
class _Followed:
    """One transcript file and its reader."""

    tail: JsonlTail
    reader: TranscriptReader
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    dirty: bool = False
    """watchdog saw it change while it was being read: read again."""


@dataclass(frozen=True)
class _Step:
    """What one read of a file found, ready to record."""

    messages: list[Message]
    tokens: list[TokenUse]
    skipped: int
    note: str
    more: bool


class Transcripts:
    """Every transcript one console follows."""

    def __init__(self, recorder: Recorder, budget: BudgetWatch | None = None) -> None:
        self.recorder = recorder
        self.budget = budget
        """Told of the token counts read (the settings' `[budget]`)."""
        self._files: dict[Path, _Followed] = {}
        self._by_agent: dict[str, list[Path]] = {}
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="belay-transcripts")
        self._observer: BaseObserver | None = None
        self._watched: set[Path] = set()
        self._tasks: set[asyncio.Task[None]] = set()
        self._loop = asyncio.get_running_loop()
        self._uses: set[str] = set()
        """The ids of the tool calls whose responses were read."""
        self._attributing: set[str] = set()
        """Agents whose transcripts name the calls their responses made (only theirs are waited for)."""
        self._not_attributing: set[str] = set()

    def follow(self, path: Path, reader: TranscriptReader) -> None:
        """Follow `path` for `reader.agent_id` from its start (a file already followed is left as it is)."""
        if path in self._files:
            return
        self._files[path] = _Followed(JsonlTail(path), reader)
        self._by_agent.setdefault(reader.agent_id, []).append(path)
        self._watch(path.parent)

    def following(self, agent_id: str) -> list[Path]:
        return list(self._by_agent.get(agent_id, ()))

    async def catch_up(self, *agent_ids: str, steps: int | None = CATCH_UP_STEPS) -> None:
        """Read what the agents' files gained since their last read, and record it: at most `steps` steps of
        each file waited for (None: all of it), the rest read in the background."""
        for agent_id in agent_ids:
            for path in self._by_agent.get(agent_id, ()):
                await self._read(path, steps)

    async def catch_up_to(self, agent_id: str, use_id: str, within_s: float = USE_WAIT_S) -> None:
        """Read the agent's files until the response that made the call `use_id` has been read, or `within_s`
        passes.  An agent whose transcript never names its calls (an unknown format, a version that does not) is
        waited for once, then read without waiting."""
        deadline = self._loop.time() + within_s
        while True:
            await self.catch_up(agent_id)
            if (use_id in self._uses or not use_id or not self._by_agent.get(agent_id)
                    or agent_id in self._not_attributing):
                return
            if self._loop.time() >= deadline:
                if agent_id not in self._attributing:
                    self._not_attributing.add(agent_id)
                return
            await asyncio.sleep(0.05)

    def _heard_uses(self, agent_id: str, tokens: list[TokenUse]) -> None:
        if len(self._uses) > USES_KEPT:
            self._uses.clear()
        for use in tokens:
            if use.tool_uses:
                self._uses.update(use.tool_uses)
                self._attributing.add(agent_id)
                self._not_attributing.discard(agent_id)

    async def _read(self, path: Path, steps: int | None = None) -> None:
        followed = self._files[path]
        left = False
        async with followed.lock:
            followed.dirty = False
            while not left:
                step = await self._loop.run_in_executor(self._executor, _step, followed)
                await self.recorder.conversation(AgentId(followed.reader.agent_id), step.messages, step.tokens,
                                                 step.skipped, step.note)
                self._heard_uses(followed.reader.agent_id, step.tokens)
                if self.budget is not None and step.tokens:
                    await self.budget.heard(step.tokens)
                if not step.more and not followed.dirty:
                    break
                followed.dirty = False
                if steps is not None:
                    steps -= 1
                    left = steps <= 0
        if left:
            self.changed(path)  # the rest, in a read of its own
        if path.parent not in self._watched:
            self._watch(path.parent)  # a sub-agent's folder that did not exist when it was first followed

    def _watch(self, folder: Path) -> None:
        if folder in self._watched or not folder.is_dir():
            return
        if self._observer is None:
            self._observer = Observer()
            self._observer.daemon = True
            self._observer.start()
        try:
            self._observer.schedule(_Changed(self), str(folder), recursive=False)
        except OSError as e:  # out of inotify watches: the hooks still read it, at each call
            log.warning("cannot watch %s for transcript changes: %s", folder, e)
            return
        self._watched.add(folder)

    def knows(self, path: Path) -> bool:
        return path in self._files

    def tell(self, path: Path) -> None:
        """From watchdog's thread: `path` changed (the loop is told, unless it has closed)."""
        try:
            self._loop.call_soon_threadsafe(self.changed, path)
        except RuntimeError:  # the loop closed: nobody reads any more
            pass

    def changed(self, path: Path) -> None:
        """On the loop: watchdog says `path` changed."""
        followed = self._files.get(path)
        if followed is None:
            return
        if followed.lock.locked():
            followed.dirty = True
            return
        task = spawn(self._read(path), f"read transcript {path.name}")
        self._tasks.add(task)
        task.add_done_callback(self._ended)

    def _ended(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.warning("reading a transcript failed: %s", task.exception())

    async def aclose(self) -> None:
        """Stop watching; reads under way are cancelled."""
        observer, self._observer = self._observer, None
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        if observer is not None:
            observer.stop()
            await asyncio.to_thread(observer.join, 5)
        self._executor.shutdown(wait=False)

    def __repr__(self) -> str:
        return f"<Transcripts files={len(self._files)} watched={len(self._watched)} reading={len(self._tasks)}>"


class _Changed(FileSystemEventHandler):
    """watchdog's thread: a followed file changed; the loop is told."""

    def __init__(self, owner: Transcripts) -> None:
        self.owner = owner

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.event_type not in ("modified", "created", "moved"):
            return
        path = Path(str(getattr(event, "dest_path", "") or event.src_path))
        if self.owner.knows(path):
            self.owner.tell(path)


def _step(followed: _Followed) -> _Step:
    """On the transcripts' thread: one budget of new lines read and parsed."""
    try:
        found = followed.tail.read(STEP_BYTES)
    except OSError as e:  # unreadable (its permissions, a folder in its place): said once, read again later
        return _Step([], [], 1, f"the transcript {followed.tail.path} cannot be read: {e.strerror or e}", False)
    unread = 0
    for line in found.lines:
        try:
            followed.reader.feed(line)
        except ValueError:  # a value of a shape no reader foresaw (pydantic's errors are ValueErrors): that record
            unread += 1
    messages, tokens, skipped = followed.reader.take()
    if unread:
        skipped["record with a value Belay cannot read"] += unread
    count, note = skipped_note(skipped, found.overlong)
    if found.restarted:
        note = f"the transcript was replaced or truncated and is read again from its start; {note}".rstrip("; ")
    return _Step(messages, tokens, count, note, found.more)
