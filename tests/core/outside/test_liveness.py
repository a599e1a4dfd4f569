"""The agent behind a hook command is its first non-shell ancestor, and it is known dead once it is gone."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from core.outside.liveness import AgentProcess, _stat

CHILD = "import os, sys, time; print(os.getpid(), flush=True); time.sleep(30)"


def test_the_agent_is_found_through_a_shell_and_seen_to_die() -> None:
    # agent (a python standing in for Claude Code) -> sh -c -> hook command (sleeping python)
    agent = subprocess.Popen([sys.executable, "-c",
                              "import subprocess, sys; subprocess.run(['sh', '-c', sys.argv[1] + ' -c \"' + "
                              "sys.argv[2] + '\"'])", sys.executable, CHILD.replace('"', '\\"')],
                             stdout=subprocess.PIPE, text=True)
    try:
        assert agent.stdout is not None
        hook_pid = int(agent.stdout.readline())
        found = AgentProcess.of_hook_client(hook_pid)
        assert found is not None and found.pid == agent.pid and found.alive()
    finally:
        agent.kill()
        agent.wait()
        agent.stdout.close()  # type: ignore[union-attr]
        os.system(f"kill {hook_pid} 2>/dev/null")
    deadline = time.monotonic() + 5
    while found.alive() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not found.alive()


def test_a_pid_reused_by_another_process_is_not_the_agent() -> None:
    stat = _stat(os.getpid())
    assert stat is not None
    me = AgentProcess(os.getpid(), stat[1])
    assert me.alive()
    assert not AgentProcess(me.pid, me.started + 1).alive()
    assert not AgentProcess(2**22 + 12345, 0).alive()  # no such process
