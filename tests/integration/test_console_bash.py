"""Bash through the whole console: policy, approval, sandbox, journal, cancellation, background shells.

The tool's own behaviour (limits, output, environment) is tested in
tests/core/tools/test_bash.py; these check what the console adds around it.
"""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest

from core import BashSettings, Console, Decision, RunStatus
from tests.conftest import RUNAWAY_S, run
from tests.integration.hostile import processes_matching


async def _allowing(console: Console, *rules: str) -> None:
    for rule in rules:
        await console.add_rule(rule, "allow", "session")


def test_a_read_only_pipeline_runs_without_asking_and_the_agent_gets_its_output(workspace: Path) -> None:
    async def scenario() -> tuple[RunStatus, str, list[tuple[Decision | None, str | None]]]:
        async with Console(workspace) as console:  # headless: an ask would be a denial
            agent = await console.start_agent("agent", "scripted")
            outcome = await console.call(agent, "Bash", {"command": "grep -rn 'def ' src | sort | head -3"})
            return outcome.status, outcome.text, [(r.decision, r.decided_by) for r in console.timeline.runs.values()]

    status, text, decisions = run(scenario())
    assert status == RunStatus.DONE and "def " in text
    assert decisions == [(Decision.APPROVED, "policy")]  # Belay's read-only allow, not a person's answer


def test_a_command_riding_an_allow_rule_is_asked_and_shows_what_caused_it(workspace: Path) -> None:
    async def scenario() -> None:
        async with Console(workspace) as console:
            console.register_approver("test")
            await _allowing(console, "Bash(ls:*)")
            agent = await console.start_agent("agent", "scripted")
            call = asyncio.ensure_future(console.call(agent, "Bash", {"command": "ls; touch PWNED"}))
            while not console.pending_approvals():
                await asyncio.sleep(0.005)
            [request] = console.pending_approvals()
            assert request.analysis is not None and request.cwd == str(workspace.resolve())
            flagged = [n.text for n in request.analysis.nodes if n.flag != "ok"]
            assert any("touch PWNED" in text for text in flagged) and not any(t == "ls" for t in flagged)
            assert request.impact.level in ("medium", "high") and request.sandbox
            console.deny(request.call_id, "no")
            assert (await call).status == RunStatus.DENIED

    run(scenario())
    assert not (workspace / "PWNED").exists()


def test_a_timed_out_command_is_reported_timed_out_with_its_output(workspace: Path) -> None:
    async def scenario() -> tuple[RunStatus, str]:
        async with Console(workspace) as console:
            await _allowing(console, "Bash(sleep:*)")
            agent = await console.start_agent("agent", "scripted")
            outcome = await console.call(agent, "Bash", {"command": "echo started; sleep 30", "timeout": 500})
            return outcome.status, outcome.text

    status, text = run(scenario())
    assert status == RunStatus.TIMED_OUT
    assert "timed out after 0.5 s" in text and "started" in text


@pytest.mark.timeout(RUNAWAY_S)  # a cancel that waited for the sleeps would wait a day
def test_cancel_from_the_window_stops_the_whole_tree(workspace: Path) -> None:
    marker = "98761"

    async def scenario() -> RunStatus:
        async with Console(workspace, bash=BashSettings(kill_grace_s=0.5)) as console:
            await _allowing(console, "Bash(sleep:*)")
            agent = await console.start_agent("agent", "scripted")
            call = asyncio.ensure_future(console.call(agent, "Bash", {"command": f"sleep {marker} & sleep {marker}"}))
            deadline = time.monotonic() + 5
            while len(processes_matching(f"sleep {marker}")) < 2 and time.monotonic() < deadline:
                await asyncio.sleep(0.02)
            [call_id] = list(console.timeline.runs)
            assert console.cancel(call_id)
            return (await call).status

    status = run(scenario())
    assert status == RunStatus.CANCELLED
    assert processes_matching(f"sleep {marker}") == []


def test_the_journal_keeps_more_output_than_the_agent_is_shown(workspace: Path) -> None:
    async def scenario() -> tuple[str, str | None]:
        async with Console(workspace) as console:
            await _allowing(console, "Bash(seq:*)")
            agent = await console.start_agent("agent", "scripted")
            outcome = await console.call(agent, "Bash", {"command": "seq 1 200000"})
            return outcome.text, await console.full_output(outcome.call_id)

    text, full = run(scenario())
    assert "cut" in text and "\n100000\n" not in text
    assert full is not None and "\n100000\n" in full and len(full) > len(text)


def test_background_shells_are_read_killed_and_ended_with_the_console(workspace: Path) -> None:
    marker = "98762"

    async def scenario() -> list[tuple[bool, int | None]]:
        async with Console(workspace) as console:
            await _allowing(console, "Bash(sleep:*)")
            agent = await console.start_agent("agent", "scripted")
            started = await console.call(agent, "Bash", {"command": f"echo ready; sleep {marker}",
                                                         "run_in_background": True})
            shell_id = started.data["shell_id"]
            for _ in range(100):
                read = await console.call(agent, "BashOutput", {"bash_id": shell_id})
                if "ready" in read.text:
                    break
                await asyncio.sleep(0.05)
            assert "ready" in read.text and "running" in read.text
            assert console.timeline.shells[shell_id].running
            await console.call(agent, "Bash", {"command": f"sleep {marker}", "run_in_background": True})
            killed = await console.call(agent, "KillShell", {"shell_id": shell_id})
            assert killed.status == RunStatus.DONE and "Killed" in killed.text
            await asyncio.sleep(0.1)  # the shell's end reaches the timeline
            return [(s.running, s.exit_code) for s in console.timeline.shells.values()]

    shells = run(scenario())
    assert shells[0] == (False, None)  # killed: no exit code
    assert processes_matching(f"sleep {marker}") == []  # the second one ended with the console


def _user_settings(text: str) -> None:
    config = Path(os.environ["BELAY_CONFIG_DIR"])
    config.mkdir(parents=True, exist_ok=True)
    (config / "settings.toml").write_text(text)


@pytest.mark.allow_warning_logs  # the console logs the settings it could not use
def test_the_user_can_turn_the_network_off_and_a_workspace_cannot_touch_bash_settings(workspace: Path) -> None:
    _user_settings("[bash]\nnetwork = false\n")
    (workspace / ".belay").mkdir()
    (workspace / ".belay" / "settings.toml").write_text('[bash]\nsandbox = "off"\n')

    async def scenario() -> tuple[bool, str, tuple[str, ...], str]:
        async with Console(workspace) as console:
            await _allowing(console, "Bash(cat:*)")
            agent = await console.start_agent("agent", "scripted")
            outcome = await console.call(agent, "Bash", {"command": "cat /proc/net/dev"})
            return console.bash_settings.network, outcome.text, console.settings_problems, console.sandbox.kind

    network, devices, problems, sandbox = run(scenario())
    assert network is False
    assert any("[bash] is ignored" in p for p in problems)
    if sandbox == "bubblewrap":  # the workspace did not switch it off; without the network only lo is there
        interfaces = [line.split(":")[0].strip() for line in devices.splitlines() if ":" in line]
        assert interfaces == ["lo"]


@pytest.mark.allow_warning_logs
def test_a_bad_bash_setting_is_reported_and_the_defaults_kept(workspace: Path) -> None:
    _user_settings("[bash]\nnetwork = \"sometimes\"\n")

    async def scenario() -> tuple[bool, tuple[str, ...]]:
        async with Console(workspace) as console:
            return console.bash_settings.network, console.settings_problems

    network, problems = run(scenario())
    assert network is True and any("[bash]" in p and "network" in p for p in problems)


def test_what_a_command_changes_is_recorded_against_it_and_undone(workspace: Path) -> None:
    readme, cart = workspace / "README.md", workspace / "src" / "shop" / "cart.py"
    before_readme, before_cart = readme.read_bytes(), cart.read_bytes()

    async def scenario() -> None:
        async with Console(workspace) as console:
            await console.add_rule("Bash(echo:*)", "allow", "session")
            await console.add_rule("Bash(rm:*)", "allow", "session")
            await console.add_rule("Bash(sed:*)", "allow", "session")
            await console.add_rule("Edit(./made.txt)", "allow", "session")  # the shell writes it for echo
            agent = await console.start_agent("agent", "scripted")
            (workspace / "notes.txt").write_text("the person's own file\n")  # not the agent's doing
            outcome = await console.call(agent, "Bash", {
                "command": "echo made > made.txt && rm README.md && sed -i 's/Cart/Basket/' src/shop/cart.py"})
            assert outcome.status == RunStatus.DONE
            run_ = console.timeline.runs[outcome.call_id]
            assert {(c.path, c.kind.value) for c in run_.changes} == {
                ("made.txt", "create"), ("README.md", "delete"), ("src/shop/cart.py", "modify")}
            [record] = [r for r in await console.history() if r.call_id == outcome.call_id]
            assert len(record.changes) == 3
            report = await console.undo(outcome.call_id)
            assert report.ok, report.message

    run(scenario())
    assert readme.read_bytes() == before_readme and cart.read_bytes() == before_cart
    assert not (workspace / "made.txt").exists()
    assert (workspace / "notes.txt").read_text() == "the person's own file\n"


def test_a_command_that_times_out_still_has_its_changes_recorded(workspace: Path) -> None:
    async def scenario() -> tuple[RunStatus, list[str]]:
        async with Console(workspace) as console:
            await console.add_rule("Bash(echo:*)", "allow", "session")
            await console.add_rule("Bash(sleep:*)", "allow", "session")
            await console.add_rule("Edit(./half.txt)", "allow", "session")  # the shell writes it for echo
            agent = await console.start_agent("agent", "scripted")
            outcome = await console.call(agent, "Bash", {"command": "echo partial > half.txt; sleep 30",
                                                         "timeout": 500})
            return outcome.status, [c.path for c in console.timeline.runs[outcome.call_id].changes]

    status, paths = run(scenario())
    assert status == RunStatus.TIMED_OUT and paths == ["half.txt"]


@pytest.mark.allow_warning_logs  # the names the journal cannot hold are logged
def test_a_file_whose_name_is_not_utf8_is_reported_not_a_crash_and_the_rest_is_recorded(workspace: Path) -> None:
    async def scenario() -> tuple[RunStatus, str, list[str]]:
        async with Console(workspace) as console:
            console.set_mode("bypass")
            agent = await console.start_agent("agent", "scripted")
            outcome = await console.call(agent, "Bash", {"command": "touch \"$(printf '\\375x')\" ok.txt"})
            return outcome.status, outcome.text, [c.path for c in console.timeline.runs[outcome.call_id].changes]

    status, text, paths = run(scenario())
    assert status == RunStatus.DONE and paths == ["ok.txt"]
    assert "not valid UTF-8" in text and "\\xfdx" in text
    assert (workspace / os.fsdecode(b"\xfdx")).exists()
