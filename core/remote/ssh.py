"""Reaching a console on another host through the user's own ssh: no port of Belay's on any network.

`SshLink(target).open()` runs `belay serve --ensure` on the host over ssh (which starts the workspace's
console there, or finds the one running) and reads its socket's path and the install's token from what it
prints; then it forwards a private local Unix socket to that remote socket (`ssh -N -L local:remote`), and
answers with the local socket and the token, for `Attached.connect`.  Everything about the connection is
ssh's: the user's config (`~/.ssh/config`: aliases, keys, agents, jump hosts), known hosts, and the remote
socket's permissions (the remote user's private runtime directory).  `close()` ends the forward; the
console on the host runs on (its journal is the truth; attach again to resync).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import shlex
import signal
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlsplit

from core.outside.hook_client import answers
from core.paths import runtime_dir
from core.remote.client import RemoteError

START_TIMEOUT_S = 90.0
"""ssh's own connection, plus the remote console's start (a first snapshot of a large workspace)."""
FORWARD_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class SshTarget:
    """`ssh://[user@]host[:port]/path`: the host as ssh takes it (an alias of the user's ssh config too)."""

    host: str
    path: str
    port: int | None = None

    @classmethod
    def parse(cls, text: str) -> SshTarget:
        parts = urlsplit(text)
        if parts.scheme != "ssh" or not parts.hostname or not parts.path or parts.path == "/":
            raise ValueError(f"{text!r} is not ssh://[user@]host[:port]/path/to/workspace")
        host = f"{unquote(parts.username)}@{parts.hostname}" if parts.username else parts.hostname
        path = unquote(parts.path)
        if path.startswith("/~"):  # ssh://host/~/code/shop: under the remote user's home
            path = path[1:]
        return cls(host=host, path=path, port=parts.port)

    def __str__(self) -> str:
        return f"ssh://{self.host}{f':{self.port}' if self.port else ''}{'' if self.path.startswith('/') else '/'}" \
               f"{self.path}"


class SshLink:
    def __init__(self, target: SshTarget, *, ssh: Sequence[str] = ("ssh",), remote_belay: str = "belay") -> None:
        self.target = target
        self.ssh = list(ssh)
        """The ssh command and any options of the user's (`ssh -F my_config`)."""
        self.remote_belay = remote_belay
        """How to run Belay on the host, as its shell reads it (`~/.local/bin/belay`, pipx's)."""
        self.local = runtime_dir() / f"ssh-{hashlib.sha256(str(target).encode()).hexdigest()[:16]}.sock"
        self.remote_socket = ""
        self._forward: asyncio.subprocess.Process | None = None

    def _ssh(self, *options: str) -> list[str]:
        port = ["-p", str(self.target.port)] if self.target.port else []
        return [*self.ssh, *port, *options]

    async def open(self) -> tuple[Path, str]:
        """Start or find the console on the host and forward its socket here: (the local socket, the token)."""
        info = await self._ensure()
        self.remote_socket = str(info["socket"])
        await self.forward()
        return self.local, str(info["token"])

    async def _ensure(self) -> dict[str, object]:
        where = self.target.path  # quoted for the remote shell, a leading ~/ left for it to expand
        quoted = "~/" + shlex.quote(where[2:]) if where.startswith("~/") else shlex.quote(where)
        remote = f"{self.remote_belay} serve --ensure --workspace {quoted}"
        process = await asyncio.create_subprocess_exec(
            *self._ssh("-o", "BatchMode=yes", "--", self.target.host, remote),
            stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        try:
            out, err = await asyncio.wait_for(process.communicate(), START_TIMEOUT_S)
        except TimeoutError:
            process.kill()
            await process.wait()
            raise RemoteError(f"{self.target.host} did not start Belay's console within {START_TIMEOUT_S:.0f} s",
                              "Try `ssh HOST belay serve --ensure --workspace PATH` to see what it does.") from None
        said = err.decode(errors="replace").strip()
        lines = [line for line in out.decode(errors="replace").splitlines() if line.startswith("{")]
        if process.returncode != 0 or not lines:
            raise RemoteError(f"could not start Belay's console on {self.target.host} for {where}: "
                              f"{said or f'ssh exited {process.returncode}'}",
                              "Install Belay there (pipx install belay) and check the path; ssh's own "
                              "configuration (keys, known hosts) is used as it is.")
        info = json.loads(lines[-1])
        if not isinstance(info, dict) or "socket" not in info or "token" not in info:
            raise RemoteError(f"the console on {self.target.host} answered something this Belay cannot read")
        return info

    async def forward(self) -> None:
        """(Again) forward the local socket to the remote one: after a dropped link, the console runs on."""
        await self.close()
        self._forward = await asyncio.create_subprocess_exec(
            *self._ssh("-N", "-o", "BatchMode=yes", "-o", "ExitOnForwardFailure=yes", "-o",
                       "StreamLocalBindUnlink=yes", "-o", "ServerAliveInterval=15",
                       "-L", f"{self.local}:{self.remote_socket}", "--", self.target.host),
            stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE)
        deadline = asyncio.get_running_loop().time() + FORWARD_TIMEOUT_S
        while not await asyncio.to_thread(answers, self.local, 1.0):  # (off the loop: a window's, one day)
            if self._forward.returncode is not None or asyncio.get_running_loop().time() > deadline:
                err = b""
                if self._forward.stderr is not None and self._forward.returncode is not None:
                    err = await self._forward.stderr.read()
                await self.close()
                raise RemoteError(f"could not forward the console's socket from {self.target.host}: "
                                  f"{err.decode(errors='replace').strip() or 'ssh did not make the local socket'}")
            await asyncio.sleep(0.05)

    @property
    def alive(self) -> bool:
        return self._forward is not None and self._forward.returncode is None

    async def close(self) -> None:
        forward, self._forward = self._forward, None
        if forward is not None and forward.returncode is None:
            # os.kill, not forward.terminate(): Popen's polls first and may reap an ssh that just died under
            # asyncio's child watcher, which then logs it as unknown.  Until the watcher reaps it, the pid is ours.
            with contextlib.suppress(ProcessLookupError):
                os.kill(forward.pid, signal.SIGTERM)
            await forward.wait()
        with contextlib.suppress(FileNotFoundError):
            self.local.unlink()
