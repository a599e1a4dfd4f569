"""Who is at the other end of a loopback TCP connection: its user, its process, and whether Belay launched it.

A Unix socket says who connected (SO_PEERCRED); a TCP socket does not, even on loopback.  Linux still
knows: `/proc/net/tcp` lists both ends of a loopback connection, the client's end with its owner's uid
and its socket's inode, and the process holding that inode has a `socket:[inode]` link among its file
descriptors.  So the peer's uid is one file read and its pid a walk over `/proc/*/fd` (only our own
user's processes can be read, which is all a peer of our uid can be).  Both are blocking and cost a few
milliseconds on a busy machine: callers run them in a worker thread, once per connection (Claude Code
keeps its connection to an http hook open across calls).  The processes that connected last are looked
at first, so an agent that reconnects is found at once.
"""

from __future__ import annotations

import os
import socket
import struct
from collections import OrderedDict
from dataclasses import dataclass

LAUNCHED_ENV = b"BELAY_LAUNCHED_SESSION"
"""Set in the environment of a Claude Code the console launched (core.outside.hook_client.LAUNCHED_ENV)."""
RECENT = 8
"""How many of the last peers' pids are looked at before the whole of /proc."""


@dataclass(frozen=True)
class TcpPeer:
    """The process at the other end of a loopback connection, as far as the kernel says."""

    uid: int
    pid: int | None
    """None when no readable process holds the socket (one of another user, or one that is gone)."""
    launched: str = ""
    """Its BELAY_LAUNCHED_SESSION nonce, when it runs inside a session the console launched."""


class PeerFinder:
    """Finds loopback peers, remembering the last few peers' pids to look there first."""

    def __init__(self) -> None:
        self._recent: OrderedDict[int, None] = OrderedDict()

    def find(self, local: tuple[str, int], remote: tuple[str, int]) -> TcpPeer | None:
        """The peer connected from `remote` to our `local` address (IPv4), or None if the kernel lists no such
        connection (it closed already).  Blocking."""
        entry = _client_end(local, remote)
        if entry is None:
            return None
        uid, inode = entry
        pid = self._holder(inode) if inode else None
        if pid is None:
            return TcpPeer(uid, None)
        self._recent[pid] = None
        self._recent.move_to_end(pid)
        while len(self._recent) > RECENT:
            self._recent.popitem(last=False)
        return TcpPeer(uid, pid, launched_nonce(pid))

    def _holder(self, inode: int) -> int | None:
        link = f"socket:[{inode}]"
        recent = list(reversed(self._recent))
        for pid in recent:
            if _holds(pid, link):
                return pid
        for name in os.listdir("/proc"):
            if name.isdigit() and int(name) not in recent and _holds(int(name), link):
                return int(name)
        return None

    def __repr__(self) -> str:
        return f"<PeerFinder recent={list(self._recent)}>"


def _hex_address(host: str, port: int) -> str:
    """An IPv4 address as /proc/net/tcp writes it: the address's bytes in host order, then the port."""
    packed = socket.inet_aton(host)
    return f"{struct.unpack('=I', packed)[0]:08X}:{port:04X}"


def _client_end(local: tuple[str, int], remote: tuple[str, int]) -> tuple[int, int] | None:
    """(uid, inode) of the client's end: the row whose local address is the peer's and remote address ours."""
    theirs, ours = _hex_address(*remote), _hex_address(*local)
    with open("/proc/net/tcp", encoding="ascii") as f:
        for line in f:
            words = line.split()
            if len(words) > 9 and words[1] == theirs and words[2] == ours:
                return int(words[7]), int(words[9])
    return None


def _holds(pid: int, link: str) -> bool:
    """Whether process `pid` has the socket `link` among its file descriptors (False if it cannot be read)."""
    directory = f"/proc/{pid}/fd"
    try:
        with os.scandir(directory) as fds:
            for fd in fds:
                try:
                    if os.readlink(fd.path) == link:
                        return True
                except OSError:
                    continue
    except OSError:
        return False
    return False


def launched_nonce(pid: int) -> str:
    """The BELAY_LAUNCHED_SESSION of process `pid`'s environment ("" when unset or unreadable), hex only."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            environ = f.read()
    except OSError:
        return ""
    for pair in environ.split(b"\0"):
        name, _, value = pair.partition(b"=")
        if name == LAUNCHED_ENV:
            return "".join(c for c in value.decode("ascii", "replace") if c in "0123456789abcdef")[:64]
    return ""
