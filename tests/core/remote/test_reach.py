"""Where a console is: ssh URLs and local workspaces told apart, refusals not retried, a console gone given up on
after its retries and looked for anew at the next attach."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from core import Console, RemoteError
from core.remote import reach as reach_module
from core.remote.reach import Reach
from core.remote.server import AttachServer
from tests.conftest import run


def test_targets_are_an_ssh_url_or_a_local_workspace(tmp_path: Path) -> None:
    over_ssh = Reach.of("ssh://dev@box:2222/~/code/shop", ssh=["ssh", "-F", "cfg"])
    assert over_ssh.host == "dev@box" and over_ssh.path == "~/code/shop" and over_ssh.link is not None
    assert over_ssh.link.ssh == ["ssh", "-F", "cfg"]
    local = Reach.of(str(tmp_path))
    assert local.host is None and local.path == str(tmp_path) and local.link is None
    with pytest.raises(ValueError, match="only ssh://"):
        Reach.of("https://box/code")
    with pytest.raises(ValueError, match="ssh://"):
        Reach.of("ssh://box")  # no workspace named


def test_a_workspace_without_a_console_is_said_at_once_not_retried(tmp_path: Path) -> None:
    async def main() -> None:
        tries: list[str] = []
        with pytest.raises(RemoteError, match="no console runs") as refused:
            await Reach.of(str(tmp_path)).attach("terminal", said=tries.append)
        assert refused.value.refused and tries == [] and "belay serve" in refused.value.info.suggestion
    run(main())


def test_a_console_gone_is_tried_again_then_given_up_on_and_looked_for_anew_next_time(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reach_module, "RETRIES", 2)
    ws = tmp_path / "ws"
    ws.mkdir()

    async def serving() -> Console:
        console = Console(ws)
        await console.open()
        assert console.endpoint is not None
        AttachServer(console).install(console.endpoint)
        return console

    async def main() -> None:
        reach = Reach.of(str(ws))
        reach.pause_s = 0.01
        console = await serving()
        attached = await reach.attach("terminal")
        await attached.close()
        await console.close()
        tries: list[str] = []
        with pytest.raises(RemoteError, match="gave up attaching .* after 2 tries") as gave_up:
            await reach.attach("terminal", said=tries.append)
        assert not gave_up.value.refused and len(tries) == 2 and "trying again" in tries[0]
        console = await serving()  # a console there again
        try:
            attached = await asyncio.wait_for(reach.attach("terminal"), 10)
            assert attached.welcome.session_id == console.session_id
            await attached.close()
        finally:
            await console.close()
    run(main())
