"""Where `belay watch ssh://...` goes, and what a failing ssh says (the link itself: tests/integration)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from core.remote.client import RemoteError
from core.remote.ssh import SshLink, SshTarget
from tests.conftest import run


@pytest.mark.parametrize(("text", "host", "port", "path"), [
    ("ssh://devbox/home/me/shop", "devbox", None, "/home/me/shop"),
    ("ssh://me@build.example:2222/srv/app", "me@build.example", 2222, "/srv/app"),
    ("ssh://devbox/~/code/my%20shop", "devbox", None, "~/code/my shop"),
])
def test_a_target_names_the_host_as_ssh_takes_it_and_the_workspace(text: str, host: str, port: int | None,
                                                                   path: str) -> None:
    target = SshTarget.parse(text)
    assert (target.host, target.port, target.path) == (host, port, path)


@pytest.mark.parametrize("text", ["devbox:/srv/app", "ssh://devbox", "ssh://devbox/", "http://devbox/srv"])
def test_anything_else_is_refused_saying_the_form(text: str) -> None:
    with pytest.raises(ValueError, match=r"ssh://\[user@\]host\[:port\]/path"):
        SshTarget.parse(text)


def _fake_ssh(tmp_path: Path, script: str) -> list[str]:
    ssh = tmp_path / "ssh"
    ssh.write_text(f"#!/bin/sh\n{script}\n")
    ssh.chmod(0o755)
    return [str(ssh)]


def test_a_host_without_belay_says_what_ssh_said_and_how_to_fix_it(tmp_path: Path) -> None:
    ssh = _fake_ssh(tmp_path, 'echo "bash: line 1: belay: command not found" >&2; exit 127')
    link = SshLink(SshTarget.parse("ssh://devbox/srv/app"), ssh=ssh)
    with pytest.raises(RemoteError, match="belay: command not found") as caught:
        run(link.open())
    assert "pipx install" in caught.value.info.suggestion


def test_the_workspace_is_quoted_for_the_remote_shell_and_a_home_path_left_to_it(tmp_path: Path) -> None:
    said = tmp_path / "said"
    ssh = _fake_ssh(tmp_path, f'printf "%s\\n" "$@" > {said}; exit 1')
    for where, expected in (("/srv/my app", "'/srv/my app'"), ("~/code/a b", "~/'code/a b'")):
        link = SshLink(SshTarget(host="devbox", path=where), ssh=ssh, remote_belay="belay")
        with pytest.raises(RemoteError):
            run(link.open())
        args = said.read_text().splitlines()
        assert args[-2:] == ["devbox", f"belay serve --ensure --workspace {expected}"]
        assert "BatchMode=yes" in args  # never a password prompt it cannot show
    assert not os.path.exists(link.local)
