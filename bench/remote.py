"""An approval's round trip to a console on another host, through the ssh-forwarded socket, against a round trip
on the same connection that does nothing.

A private OpenSSH server on 127.0.0.1 (tests/integration/private_sshd.py) stands for the host.  `belay serve`
is started there over ssh (SshLink, as `belay watch ssh://host/path` does), its socket forwarded here, and
this process attaches to it as a window would, approving every request it is shown.  On the host, an agent's
hook (the hook client Claude Code runs, `ask_console`) sends a PreToolUse for a Write and waits for the answer:
its round trip takes the request to the console, the approval request over ssh to this side, the approval
back over ssh, and the answer to the hook.

Figures (ROUNDS each, alternating, medians):
- approval round trip, against a command on the attached connection that the console answers without work
  (an approval of a call that waits for nothing: the link's own round trip plus the console's dispatch), the
  "ssh host true" of this connection;
- the same approval with the front end attached to the console's socket directly (no ssh): what ssh adds.

Run: .venv/bin/python bench/remote.py  (needs Debian's openssh-server; `make system-deps` installs it)
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

ROUNDS = 40


async def _approver(attached: object) -> None:
    from core import ApprovalRequested
    async for event in attached.events():  # type: ignore[attr-defined]
        if isinstance(event, ApprovalRequested):
            await attached.approve(event.call_id)  # type: ignore[attr-defined]


def _hook(socket: str, token: str, ws: Path, n: int) -> float:
    from core.outside.hook_client import ask_console
    event = json.dumps({"hook_event_name": "PreToolUse", "session_id": "bench", "tool_name": "Write",
                        "tool_use_id": f"t{n}", "cwd": str(ws),
                        "tool_input": {"file_path": str(ws / f"f{n}.txt"), "content": f"{n}\n"}}).encode()
    began = time.perf_counter()
    code, out, _ = ask_console(socket, token, event)
    took = time.perf_counter() - began
    assert code == 0 and b"allow" in out, out
    return took


async def main() -> None:
    from core import spawn
    from core.remote.client import Attached
    from core.remote.ssh import SshLink, SshTarget
    from tests.integration import private_sshd

    if not private_sshd.available():
        raise SystemExit("needs OpenSSH's server and client (Debian: openssh-server)")
    tmp = Path(tempfile.mkdtemp(prefix="belay-bench-remote-"))
    ws = tmp / "ws"
    ws.mkdir()
    os.environ["BELAY_STATE_DIR"], os.environ["BELAY_CONFIG_DIR"] = str(tmp / "state"), str(tmp / "config")
    root = Path(__file__).resolve().parents[1]
    remote_belay = (f"env BELAY_STATE_DIR={tmp / 'state'} BELAY_CONFIG_DIR={tmp / 'config'} PYTHONPATH={root} "
                    f"{sys.executable} -m gui.terminal.cli")
    with private_sshd.private_sshd(tmp / "sshd") as config:
        link = SshLink(SshTarget.parse(f"ssh://{private_sshd.HOST}{ws}"), ssh=["ssh", "-F", str(config)],
                       remote_belay=remote_belay)
        local, token = await link.open()
        over_ssh = await Attached.connect(local, token, client="bench")
        direct = await Attached.connect(Path(link.remote_socket), token, client="bench")
        sides = {"ssh": [], "noop": [], "direct": []}
        try:
            for n in range(ROUNDS):
                for side in ("ssh", "noop", "direct"):
                    if side == "noop":
                        began = time.perf_counter()
                        await over_ssh.approve("nothing-waits-under-this-id")
                        sides[side].append(time.perf_counter() - began)
                        continue
                    approver = spawn(_approver(over_ssh if side == "ssh" else direct), "bench: approving")
                    try:
                        sides[side].append(await asyncio.to_thread(_hook, link.remote_socket, token, ws,
                                                                   n * 2 + (side == "direct")))
                    finally:
                        approver.cancel()
                        await asyncio.gather(approver, return_exceptions=True)
        finally:
            await over_ssh.close()
            await direct.close()
            await link.close()
            info = json.loads(next((tmp / "state").rglob("endpoint.json")).read_text())
            os.kill(int(info["pid"]), signal.SIGTERM)
    ms = {side: statistics.median(values) * 1000 for side, values in sides.items()}
    spread = {side: (min(v) * 1000, max(v) * 1000) for side, v in sides.items()}
    print(f"approval over ssh: median {ms['ssh']:.2f} ms ({spread['ssh'][0]:.2f}-{spread['ssh'][1]:.2f}); "
          f"no-op command on the same connection {ms['noop']:.2f} ms; approval attached directly "
          f"{ms['direct']:.2f} ms; {ROUNDS} rounds each")
    print(f"RESULT approval_round_trip_over_ssh = {ms['ssh'] / ms['noop']:.2f} x (a command answered without work "
          f"on the same forwarded connection: {ms['noop']:.2f} ms; the approval {ms['ssh']:.2f} ms)")
    print(f"RESULT ssh_cost_of_an_approval = {ms['ssh'] / ms['direct']:.2f} x (the same approval attached to the "
          f"console's socket directly: {ms['direct']:.2f} ms)")


if __name__ == "__main__":
    asyncio.run(main())
