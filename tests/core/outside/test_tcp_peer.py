"""Who is at the other end of a loopback TCP connection: the kernel's word, not anything the peer says."""

from __future__ import annotations

import os
import socket
import subprocess
import sys

from core.outside.tcp_peer import PeerFinder, TcpPeer

_CLIENT = """
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
print("connected", flush=True)
sys.stdin.read()
"""


def test_a_connecting_process_is_found_by_pid_uid_and_its_launched_session() -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        env = {**os.environ, "BELAY_LAUNCHED_SESSION": "abc123"}
        client = subprocess.Popen([sys.executable, "-c", _CLIENT, str(server.getsockname()[1])], env=env,
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        try:
            assert client.stdout is not None and client.stdout.readline() == "connected\n"
            connection, remote = server.accept()
            with connection:
                finder = PeerFinder()
                found = finder.find(connection.getsockname(), remote)
                again = finder.find(connection.getsockname(), remote)  # looked up among the recent ones first
        finally:
            client.communicate("")
    assert found == again == TcpPeer(uid=os.getuid(), pid=client.pid, launched="abc123")


def test_a_connection_the_kernel_does_not_list_has_no_peer() -> None:
    assert PeerFinder().find(("127.0.0.1", 1), ("127.0.0.1", 2)) is None
