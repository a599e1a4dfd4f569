"""The window attached through a real OpenSSH server to a console on a "remote" host (issue 18's check): the
real Claude Code CLI works there, its Write is approved from the window and undone from the window, the ssh
link is killed while the next Write waits, and the window attaches again by itself without losing a call.

The window is the hub's (`belay watch ssh://…`, Workspace › Connect to host…): the remote workspace is a page
beside the local ones.  Skips where Debian's openssh-server is not installed (`make system-deps`)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from core import Hub, RemoteConsole, RunStatus
from gui.window.hub.window import HubWindow
from tests.conftest import ROOT, wait_until
from tests.integration import private_sshd
from tests.integration.fake_anthropic import ScriptedModel
from tests.integration.test_remote_ssh import (  # noqa: F401 - ssh_config is a fixture
    _claude,
    _remote_belay,
    _stop_remote_console,
    ssh_config,
    two_writes,
)

pytestmark = pytest.mark.skipif(not private_sshd.available(),
                                reason="needs OpenSSH's server and client (Debian: openssh-server)")


@pytest.mark.timeout(240)
def test_a_window_attached_over_ssh_approves_and_undoes_claude_codes_writes_and_survives_a_dropped_link(
        qtbot: Any, loop: Any, ssh_config: Path, tmp_path: Path) -> None:  # noqa: F811 - the fixture
    ws, settings, turns = two_writes(tmp_path)
    target = f"ssh://{private_sshd.HOST}{ws}"

    async def scenario() -> None:
        window = HubWindow(Hub())  # (its socket for this machine's agents is not needed here)
        qtbot.addWidget(window)
        window.resize(1024, 640)
        window.show()
        try:
            page = await window.connect_host(target, ssh=f"ssh -F {ssh_config}", remote_belay=_remote_belay())
            assert await window.connect_host(target) is page  # connected already: its page
            [row] = window.workspaces.rows
            assert row.name == f"remote-ws on {private_sshd.HOST}" and row.where == target
            assert window.pages.currentWidget() is page and page.store is None
            remote = page.console
            assert isinstance(remote, RemoteConsole) and remote.reach.link is not None
            links: list[str] = []
            page.bridge.link_changed.connect(lambda event: links.append(event.state))
            with ScriptedModel(turns) as model:
                claude = await _claude(model, ws, settings)
                try:
                    await wait_until(lambda: bool(page.approvals.queue()), timeout=60, what="the first Write")
                    [first] = page.approvals.queue()
                    assert first.tool == "Write" and first.args["file_path"] == str(ws / "notes.md")
                    assert window.waiting() == 1  # in the sidebar's inbox, beside any local workspace's
                    page.approvals.approve()
                    await wait_until(lambda: (ws / "notes.md").exists(), timeout=30, what="written on the host")

                    await wait_until(lambda: any(r.call_id != first.call_id for r in page.approvals.queue()),
                                     timeout=60, what="the second Write waiting")
                    [second] = page.approvals.queue()
                    forward = remote.reach.link._forward
                    assert forward is not None
                    os.kill(forward.pid, signal.SIGKILL)  # the ssh link drops while it waits
                    await wait_until(lambda: links[-1:] == ["attached"], timeout=60, what="attached again")
                    assert links == ["reattaching", "attached"] and not (ws / "later.md").exists()
                    assert [r.call_id for r in page.approvals.queue()] == [second.call_id]  # still waiting
                    assert page.model.timeline.runs[second.call_id].status == RunStatus.BLOCKED_ON_USER
                    page.approvals.approve()
                    out, err = await asyncio.wait_for(claude.communicate(), 90)
                    assert claude.returncode == 0 and model.unscripted == [], err.decode() + out.decode()[-2000:]
                finally:
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(claude.pid, signal.SIGKILL)
                    await claude.wait()
            assert (ws / "later.md").read_text() == "later\n"
            runs = page.model.timeline.runs
            await wait_until(lambda: all(runs[c].status == RunStatus.DONE for c in (first.call_id, second.call_id)),
                             timeout=30, what="both Writes done in the window")
            page.undo(first.call_id)  # from the window, done where the files are
            await wait_until(lambda: not (ws / "notes.md").exists(), timeout=30, what="undone on the host")
            await wait_until(lambda: bool(page.model.timeline.runs[first.call_id].undone_paths), timeout=30,
                             what="the row says it was undone")
            assert (ws / "later.md").exists()
            assert links == ["reattaching", "attached"]  # never given up on
        finally:
            await window.aclose()

    try:
        loop.run_until_complete(scenario())
    finally:
        _stop_remote_console(ws)


@pytest.mark.timeout(180)
def test_belay_watch_ssh_opens_the_hosts_workspace_and_an_unreachable_host_is_said(
        ssh_config: Path, tmp_path: Path) -> None:  # noqa: F811 - the fixture
    ws = tmp_path / "remote-ws"
    ws.mkdir()
    shot = tmp_path / "watch.png"
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    try:
        watched = subprocess.run(
            [sys.executable, "-m", "gui.terminal.cli", "watch", f"ssh://{private_sshd.HOST}{ws}", "--ssh",
             f"ssh -F {ssh_config}", "--remote-belay", _remote_belay(), "--quit-after", "2", "--screenshot",
             str(shot)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
        assert watched.returncode == 0, watched.stderr
        assert f"Connecting to ssh://{private_sshd.HOST}{ws}" in watched.stdout and shot.stat().st_size > 10_000
    finally:
        _stop_remote_console(ws)
    unreachable = subprocess.run(
        [sys.executable, "-m", "gui.terminal.cli", "watch", "ssh://no-such-host.invalid/code", "--ssh",
         "ssh -o ConnectTimeout=5", "--quit-after", "1"], cwd=ROOT, env=env, capture_output=True, text=True,
        timeout=120, stdin=subprocess.DEVNULL)
    assert unreachable.returncode == 2
    assert "could not start Belay's console on no-such-host.invalid" in unreachable.stderr
