"""A private OpenSSH server on 127.0.0.1 for this user (a throwaway host key and client key), and an ssh config
naming it `belay-test`: what the remote-host tests and bench/remote.py reach "another host" through."""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

SSHD = shutil.which("sshd") or "/usr/sbin/sshd"
HOST = "belay-test"


def available() -> bool:
    return os.path.exists(SSHD) and shutil.which("ssh") is not None and shutil.which("ssh-keygen") is not None


@contextmanager
def private_sshd(d: Path) -> Iterator[Path]:
    """Run sshd for as long as the block lasts; yields the ssh config file (`ssh -F it belay-test`)."""
    d.mkdir(parents=True, exist_ok=True)
    for key in ("host_key", "id"):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(d / key)], check=True)
    (d / "authorized_keys").write_text((d / "id.pub").read_text())
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    # Unix-socket forwarding as a remote console is reached; sshd refuses it where TCP forwarding is off.
    (d / "sshd_config").write_text(
        f"Port {port}\nListenAddress 127.0.0.1\nHostKey {d / 'host_key'}\nPidFile {d / 'sshd.pid'}\n"
        f"AuthorizedKeysFile {d / 'authorized_keys'}\nStrictModes no\nPasswordAuthentication no\n"
        "KbdInteractiveAuthentication no\nUsePAM no\nPermitRootLogin prohibit-password\n"
        "AllowStreamLocalForwarding yes\nX11Forwarding no\n")
    if os.geteuid() == 0:
        Path("/run/sshd").mkdir(exist_ok=True)  # its privilege separation directory
    with open(d / "sshd.log", "wb") as log:
        server = subprocess.Popen([SSHD, "-D", "-e", "-f", str(d / "sshd_config")], stderr=log)
    config = d / "ssh_config"
    config.write_text(f"Host {HOST}\n  HostName 127.0.0.1\n  Port {port}\n  User {pwd.getpwuid(os.getuid()).pw_name}\n"
                      f"  IdentityFile {d / 'id'}\n  IdentitiesOnly yes\n  UserKnownHostsFile {d / 'known_hosts'}\n"
                      "  StrictHostKeyChecking accept-new\n  LogLevel ERROR\n")
    try:
        deadline = time.monotonic() + 10
        while True:
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    break
            if server.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"sshd did not start: {(d / 'sshd.log').read_text()}")
            time.sleep(0.05)
        yield config
    finally:
        server.terminate()
        server.wait(10)
