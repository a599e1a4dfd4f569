"""One console for every workspace: the calls of agents in any project reach the one window.

A `Console` supervises one workspace and serves its own socket (core/outside/endpoint.py).  The hub
keeps several of them and serves one more socket, the user's, in `<state root>/console/`: a hook
command whose project has no console of its own (core/outside/hook_client.py looks for the
workspace's socket first) falls back to it and says which directory it works in.  The first call from
a directory the hub has not seen asks the person, once, whether to supervise it there (`Ask`, given by
the window); the answer is remembered in Belay's config directory (`supervised.json`).  Yes opens a
console on the directory, which from then on serves its hooks on its own socket, with its own journal
and state directory as any workspace has; no refuses that directory's calls, saying how to change
the answer.  Without anyone to ask (no window), a call from an unseen directory is refused, saying why.

Each console the hub opens is announced to the listeners (`on_opened`): the window adds it to its
sessions sidebar.  Closing the hub closes every console it opened.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from core.outside.hook_client import BLOCKING, REFUSALS, answers, hub_socket, json_string
from core.settings import config_root, state_root
from core.store.atomic_file import write_text_atomically
from core.tasks import spawn

if TYPE_CHECKING:  # imported when used: `belay` shows its window before the console and the socket's models load
    from core.console import Console
    from core.outside.endpoint import Endpoint
    from core.outside.requests import HookRequest, SuperviseRequest

log = logging.getLogger(__name__)

HUB_DIR = "console"
"""The hub's folder under the state root, where the hook client finds its socket (hook_client.HUB_DIR)."""
REMEMBERED_FILE = "supervised.json"
START_WAIT_S = 120.0
"""How long a hook call waits for a console being opened for it (the first start reads the whole workspace)
before it is refused, saying so: well under Claude Code's hour, well over a usual start."""
Answer = Literal["supervise", "refuse"]
Ask = Callable[[Path, str], Awaitable[Answer | None]]
"""(directory, which agent asks) -> the person's answer, or None when it was dismissed (asked again next time)."""
Opened = Callable[["Console"], object]


class Remembered:
    """Which directories the person chose to supervise or not, kept in Belay's config directory."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def _read(self) -> dict[str, list[str]]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {"supervise": [], "refuse": []}
        return {key: [str(p) for p in data.get(key, []) if isinstance(p, str)] for key in ("supervise", "refuse")}

    def answer(self, directory: Path) -> Answer | None:
        """The remembered answer for `directory` or the nearest ancestor that has one."""
        data = self._read()
        for path in (directory, *directory.parents):
            for key in ("supervise", "refuse"):
                if str(path) in data[key]:
                    return key
        return None

    def remember(self, directory: Path, answer: Answer) -> None:
        data = self._read()
        for key in ("supervise", "refuse"):
            data[key] = [p for p in data[key] if p != str(directory)]
        data[answer].append(str(directory))
        self.path.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomically(self.path, json.dumps(data, indent=2) + "\n", mode=0o600)

    def supervised(self) -> list[Path]:
        return [Path(p) for p in self._read()["supervise"]]


class Hub:
    """The consoles of every workspace the person supervises, and the socket unseen ones ask through."""

    def __init__(self, state_dir: str | None = None, *, ask: Ask | None = None,
                 console_factory: Callable[[Path], Console] | None = None) -> None:
        self.state_dir = state_dir
        self.ask = ask
        self.dir = state_root(state_dir) / HUB_DIR
        self.remembered = Remembered(config_root() / REMEMBERED_FILE)
        self.consoles: dict[Path, Console] = {}
        self.endpoint: Endpoint | None = None
        self._factory = console_factory or (lambda root: _console(root, state_dir))
        self._asking: dict[Path, asyncio.Future[Answer | None]] = {}
        self._opening: dict[Path, asyncio.Task[Console | None]] = {}
        self._questions: dict[Path, asyncio.Task[None]] = {}
        """The questions put to the person (`_question`), by directory."""
        self._listeners: list[Opened] = []

    def on_opened(self, listener: Opened) -> None:
        self._listeners.append(listener)

    async def running_elsewhere(self) -> bool:
        """Whether another hub already serves the user's socket (`start` would refuse): a file read and a
        connect, nothing imported, so a window can ask before it opens."""
        return await asyncio.to_thread(self._another_runs)

    async def start(self) -> bool:
        """Serve the user's socket; False (and nothing served) when another hub already does."""
        from core.outside.endpoint import Endpoint, install_token
        from core.outside.requests import HookRequest, SuperviseRequest
        if await self.running_elsewhere():
            return False
        token = await asyncio.to_thread(install_token, config_root())
        self.dir.mkdir(parents=True, exist_ok=True)
        self.endpoint = Endpoint(self.dir, token, self.dir, refuse_peer=self._refuse_peer)
        self.endpoint.handle(HookRequest, self._hook)
        self.endpoint.handle(SuperviseRequest, self._supervise)
        await self.endpoint.start()
        return True

    def _another_runs(self) -> bool:
        """Whether a hub answers on the socket its files name (a stale file of one that died does not count)."""
        path = hub_socket(str(self.dir.parent))
        return answers(path) if path else False

    def _refuse_peer(self, pid: int) -> bool:
        """A process that a command of any supervised workspace started may not use the hub's socket either."""
        return any(c.shells.started_by_a_command(pid) for c in self.consoles.values())

    async def open(self, directory: Path, *, remember: bool = True) -> Console | None:
        """Supervise `directory` (the person named it: `belay watch --workspace`, Open in the window).

        Returns its console, or None when it cannot be opened here (another console already supervises it,
        or its journal cannot be opened: the error is raised)."""
        root = await asyncio.to_thread(directory.resolve)
        if root in self.consoles:
            return self.consoles[root]
        task = self._opening_task(root)
        await asyncio.wait([task])  # a waiter that gives up does not stop the opening for the others
        console = task.result()
        if console is not None and remember:
            await asyncio.to_thread(self.remembered.remember, root, "supervise")
        return console

    def _opening_task(self, root: Path) -> asyncio.Task[Console | None]:
        """The opening of `root`'s console, started unless one is under way."""
        task = self._opening.get(root)
        if task is None:
            task = self._opening[root] = spawn(self._open(root), f"opening {root}")
        return task

    def _opening_of(self, directory: Path) -> asyncio.Task[Console | None] | None:
        """The console under way for `directory` or its nearest ancestor being opened, if any."""
        for path in (directory, *directory.parents):
            if path in self._opening:
                return self._opening[path]
        return None

    async def _started(self, opening: asyncio.Task[Console | None], directory: Path) -> Console | str:
        """The console `opening` opens, as soon as it serves; or, in words, why it cannot answer (it could not
        open, or it is still starting after START_WAIT_S: the hook client is not kept for its hour)."""
        done, _ = await asyncio.wait([opening], timeout=START_WAIT_S)  # giving up does not stop the opening
        if not done:
            return (f"Belay's console for {directory} is still starting after {START_WAIT_S:g} s (a large workspace "
                    f"is being read); retry in a moment")
        error = opening.exception()
        if error is not None:
            return f"Belay could not open {directory}: {error}"
        console = opening.result()
        if console is None:
            return f"another Belay window supervises {directory}; retry there"
        return console

    def _settle_questions(self, root: Path) -> None:
        """A console for `root` opened: questions about it or folders inside it are answered by that (and
        withdrawn from the window)."""
        for directory, pending in list(self._asking.items()):
            if directory == root or root in directory.parents:
                if not pending.done():
                    pending.set_result("supervise")
                question = self._questions.get(directory)
                if question is not None:
                    question.cancel()  # it ends at once (`_question`), awaited by `close` if not before

    async def _open(self, root: Path) -> Console | None:
        from core.store.lock import WorkspaceBusy  # here: the hub paints before the core's errors (pydantic) load

        try:
            console = self._factory(root)
            try:
                await console.open()
            except WorkspaceBusy:  # another window (or `belay run`) has it: its hooks go there
                await console.close()
                return None
        finally:
            self._opening.pop(root, None)
        if console.endpoint is None:  # opened without serving: its hooks could not reach it
            await console.close()
            return None
        self.consoles[root] = console
        self._settle_questions(root)
        for listener in list(self._listeners):
            listener(console)
        return console

    def console_for(self, directory: Path) -> Console | None:
        """The open console of `directory` or of its nearest ancestor the hub supervises."""
        for path in (directory, *directory.parents):
            if path in self.consoles:
                return self.consoles[path]
        return None

    async def _hook(self, request: HookRequest) -> dict[str, Any]:
        """A hook from a project without a console of its own: supervise it (asking once), or refuse."""
        if not request.where:
            return _refused(request, "the hook command did not say which project it works in; the call is refused.")
        found = await self._supervised(request.where, AGENT_NAMES.get(request.agent, request.agent))
        if isinstance(found, str):
            return _refused(request, f"{found}; the call is refused.")
        if found.outside is None:
            return _refused(request, f"the console for {found.workspace.root} does not serve outside agents.")
        return await found.outside.hook(request)

    async def _supervise(self, request: SuperviseRequest) -> dict[str, Any]:
        """`belay mcp-serve` for a project without a console: its console's socket, once supervised, or why not."""
        found = await self._supervised(request.where, request.client or "An MCP client")
        if isinstance(found, str):
            return {"socket": None, "refused": f"{found}."}
        assert found.endpoint is not None  # a console the hub opened serves its socket
        return {"socket": str(found.endpoint.path), "refused": None}

    async def _supervised(self, where: str, asker: str) -> Console | str:
        """The console of `where` (or of the supervised folder it is in), opened after asking the person once;
        or, in words, why there is none."""
        directory = Path(await asyncio.to_thread(os.path.realpath, where))
        found = await self._serving(directory)
        if found is not None:  # open, or being opened (`belay watch --workspace` starting): answered once it serves
            return found
        answer = await asyncio.to_thread(self.remembered.answer, directory)  # a file read: not on the loop
        if answer is None:
            answer = await self._asked(directory, asker)
        if answer == "refuse":
            return (f"you chose not to supervise {directory} in Belay. To supervise it, open it in the window "
                    f"(Workspace > Open) or run `belay watch --workspace {directory}`")
        if answer is None:
            return (f"Belay has not been told whether to supervise {directory}. Answer in the Belay window, or run "
                    f"`belay watch --workspace {directory}`")
        found = await self._serving(directory)  # opened (or being opened) while the person was asked
        if found is not None:
            return found
        console = await self._started(self._opening_task(directory), directory)
        if not isinstance(console, str):
            await asyncio.to_thread(self.remembered.remember, directory, "supervise")
        return console

    async def _serving(self, directory: Path) -> Console | str | None:
        """The console that serves `directory`: open, or being opened (then once it serves, or why it cannot);
        None: neither."""
        console = self.console_for(directory)
        if console is not None:
            return console
        opening = self._opening_of(directory)
        return await self._started(opening, directory) if opening is not None else None

    async def _asked(self, directory: Path, asker: str) -> Answer | None:
        """The person's answer for `directory`, asked once however many calls wait for it (`asker` names who
        wants to work there, e.g. "Claude Code")."""
        if self.ask is None:
            return None
        pending = self._asking.get(directory)
        if pending is None:
            pending = self._asking[directory] = asyncio.get_running_loop().create_future()
            self._questions[directory] = spawn(self._question(directory, asker, pending), f"asking about {directory}")
        await asyncio.wait([pending])  # one caller giving up does not withdraw the question from the others
        return pending.result()

    async def _question(self, directory: Path, asker: str, pending: asyncio.Future[Answer | None]) -> None:
        """Put the question to the person (owned by the hub, answered for every caller); withdrawn (cancelled)
        when a console for the directory opens meanwhile (`_settle_questions`)."""
        answer: Answer | None = None
        try:
            answer = await self.ask(directory, asker) if self.ask is not None else None
            if answer is not None:
                await asyncio.to_thread(self.remembered.remember, directory, answer)
        except Exception:  # the window failed to ask: the calls are refused, saying nobody answered
            log.exception("asking whether to supervise %s failed", directory)
        finally:
            if self._asking.get(directory) is pending:
                del self._asking[directory]
            self._questions.pop(directory, None)
            if not pending.done():
                pending.set_result(answer)

    async def close(self) -> None:
        if self.endpoint is not None:
            await self.endpoint.close()
            self.endpoint = None
        for future in self._asking.values():
            if not future.done():
                future.set_result(None)
        for question in list(self._questions.values()):
            question.cancel()
            await asyncio.wait([question])
        for opening in list(self._opening.values()):  # owned here: a console half opened is finished, then closed
            await asyncio.wait([opening])
        for console in list(self.consoles.values()):
            with contextlib.suppress(Exception):
                await console.close()
        self.consoles.clear()

    def __repr__(self) -> str:
        return f"<Hub consoles={len(self.consoles)} serving={self.endpoint is not None}>"


def _console(root: Path, state_dir: str | None) -> Console:
    from core.console import Console
    return Console(root, state_dir=state_dir, holder="window")


AGENT_NAMES = {"claude": "Claude Code", "codex": "Codex", "gemini": "Gemini CLI"}


def _refused(request: HookRequest, reason: str) -> dict[str, Any]:
    """The agent's own refusal for an event that can still be stopped; nothing for the rest."""
    name = request.event.hook_event_name.encode()
    if name not in BLOCKING.get(request.agent, ()):
        return {"exit": 0, "stdout": None, "stderr": ""}
    template = REFUSALS[request.agent][name]
    return {"exit": 0, "stdout": json.loads(template % json_string(f"Belay: {reason}").encode("ascii")), "stderr": ""}
