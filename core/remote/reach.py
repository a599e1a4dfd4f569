"""Where a console is and how to attach to it again: `ssh://[user@]host[:port]/path`, or a local workspace.

`Reach.of(target)` reads the target; `attach()` opens the way there the first time (over ssh: the console
started or found on the host and its socket forwarded, core.remote.ssh) and attaches, trying again while the
link or the console is down: RETRIES times in a row, RETRY_PAUSE_S apart, forwarding the socket again before
each try.  A console that refuses (a wrong token, another protocol version) is not asked again.  Both front
ends that attach use it: `belay attach` and the window (core.remote.console).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Sequence
from pathlib import Path

from core.outside.endpoint import install_token
from core.policy.settings import config_dir
from core.remote.client import Attached, RemoteError
from core.remote.ssh import SshLink, SshTarget
from core.settings import workspace_state_dir

RETRIES = 5
RETRY_PAUSE_S = 2.0


class Reach:
    def __init__(self, where: str, *, link: SshLink | None = None, local: Path | None = None,
                 state_dir: str | Path | None = None, pause_s: float = RETRY_PAUSE_S) -> None:
        self.where = where
        """As the person gave it (ssh://host/path, or the workspace's path)."""
        self.link = link
        self._local = local
        self._state_dir = state_dir
        self.pause_s = pause_s
        self._socket: tuple[Path, str] | None = None

    @classmethod
    def of(cls, target: str, *, ssh: Sequence[str] = ("ssh",), remote_belay: str = "belay",
           state_dir: str | Path | None = None) -> Reach:
        """ValueError when `target` is neither an ssh URL nor a path."""
        if target.startswith("ssh://"):
            return cls(target, link=SshLink(SshTarget.parse(target), ssh=ssh, remote_belay=remote_belay))
        if "://" in target:
            raise ValueError(f"{target!r}: only ssh://[user@]host[:port]/path or a local workspace can be attached to")
        return cls(target, local=Path(target).expanduser().resolve(), state_dir=state_dir)

    @property
    def host(self) -> str | None:
        return self.link.target.host if self.link is not None else None

    @property
    def path(self) -> str:
        """The workspace, as its host names it."""
        return self.link.target.path if self.link is not None else str(self._local)

    async def attach(self, client: str, *, said: Callable[[str], object] = lambda _text: None) -> Attached:
        """Attach, trying again while nothing answers; `said` hears each failed try.  Raises RemoteError when the
        way there cannot be opened at all (no console for a local workspace; ssh could not start one), when the
        console refuses (`refused`), or after RETRIES failures in a row (then the next attach opens the way anew:
        over ssh, `belay serve --ensure` starts the console again if it is gone)."""
        socket, token = await self._opened()
        failures = 0
        while True:
            try:
                if self.link is not None and not self.link.alive:
                    await self.link.forward()
                return await Attached.connect(socket, token, client=client)
            except (OSError, RemoteError) as e:
                if isinstance(e, RemoteError) and e.refused:
                    raise
                failures += 1
                if failures > RETRIES:
                    self._socket = None  # the next attach starts over: ssh starts or finds the console again
                    raise RemoteError(f"gave up attaching to {self.where} after {RETRIES} tries: {e}") from e
                said(f"Could not attach to {self.where} ({e}); trying again in {self.pause_s:g} s.")
                await asyncio.sleep(self.pause_s)
                if self.link is not None:
                    await self.link.close()  # forwarded again at the next try

    async def _opened(self) -> tuple[Path, str]:
        if self._socket is None:
            if self.link is not None:
                self._socket = await self.link.open()
            else:
                assert self._local is not None
                self._socket = (_socket_of(self._local, self._state_dir), install_token(config_dir()))
        return self._socket

    async def close(self) -> None:
        """End the link (the console runs on)."""
        if self.link is not None:
            await self.link.close()

    def __repr__(self) -> str:
        return f"<Reach {self.where}>"


def _socket_of(root: Path, state_dir: str | Path | None) -> Path:
    info = workspace_state_dir(root, state_dir) / "endpoint.json"
    try:
        return Path(json.loads(info.read_text(encoding="utf-8"))["socket"])
    except (OSError, ValueError, KeyError) as e:
        raise RemoteError(f"no console runs for {root} ({e})",
                          f"Start one there: belay serve --workspace {root} (or open it in a window).",
                          refused=True) from None
