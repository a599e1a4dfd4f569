"""The hostile-input harness: every case of ../shared/hostile/*.json (and $BELAY_HOSTILE_DIR).

Each case runs through the real console and pipeline (validation, policy,
approval, tools, sandbox) in a fresh workspace with a fresh directory
outside it and a throwaway HOME.  Nobody is attached to approve, so the
policy's "ask" means the call does not run; cases whose expectation is about
what happens when the command runs (killed by its limit, truncated,
sanitised, redacted, out of memory) are run with the harness approving, as
the person who wants to see the limit hold.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from core import Console, RunStatus
from core.tools.bash import BashSettings
from tests.integration import hostile

CASES = list(hostile.load_cases())
HARNESS_BASH_TIMEOUT_S = 5.0


def test_the_corpus_is_found() -> None:
    assert hostile.corpus_files(), f"no corpus in {hostile.SHARED_CORPUS}"
    assert len(CASES) >= 60


def _setup(script: str, ws: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    """Run a case's setup; what it leaves running stays in its process group until the case ends."""
    proc = subprocess.Popen(["bash", "-c", script], cwd=ws, env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    proc.wait(timeout=30)
    return proc


def _end_setup(proc: subprocess.Popen[bytes] | None) -> None:
    if proc is not None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


async def _run_case(case: dict[str, Any], ws: Path, outside: Path, approve: bool) -> list[hostile.Observed]:
    """Make the case's call (a race case: many times, within a budget) and observe each outcome."""
    # The machine's settings for the run: any call's timeout is capped, so a case cannot hold CI for minutes.
    console = Console(ws, bash=BashSettings(default_timeout_s=HARNESS_BASH_TIMEOUT_S,
                                            max_timeout_s=HARNESS_BASH_TIMEOUT_S))
    await console.open()
    try:
        for action, rules in hostile.assumed_rules(case).items():
            for rule in rules:
                await console.add_rule(rule, action, "session")
        unregister = console.register_approver("harness") if approve else (lambda: None)
        sub = console.subscribe()
        asked: set[str] = set()

        async def answer() -> None:
            while batch := await sub.next_batch():
                for event in batch:
                    if event.kind == "approval_requested":
                        asked.add(event.call_id)
                        console.approve(event.call_id)
                    elif event.kind == "approval_resolved" and event.by == "headless":
                        asked.add(event.call_id)

        answering = asyncio.ensure_future(answer())
        agent = await console.start_agent("hostile", "scripted")
        raw = hostile.expand(case["input"], ws, outside)
        outcomes = []
        deadline = time.monotonic() + hostile.REPEAT_BUDGET_S
        for _ in range(hostile.repeats(case)):
            rss, started = hostile.rss_mb(), time.monotonic()
            outcomes.append((await console.call(agent, case["tool"], raw), time.monotonic() - started, rss))
            if time.monotonic() > deadline:
                break
        await asyncio.sleep(0.05)  # let the last events reach the subscriber
        unregister()
        sub.close()
        await answering
        return [_observed(console, outcome, wall, rss, asked) for outcome, wall, rss in outcomes]
    finally:
        await console.close()


def _observed(console: Console, outcome: Any, wall: float, rss: float, asked: set[str]) -> hostile.Observed:
    run = console.timeline.runs.get(outcome.call_id)
    window_text = (run.output + run.live_output) if run else ""
    return hostile.Observed(status=outcome.status.value, text=outcome.text,
                            error_kind=outcome.error.kind.value if outcome.error else None,
                            asked=outcome.call_id in asked, wall_s=wall,
                            rss_growth_mb=hostile.rss_mb() - rss, window_text=window_text)


def _left_behind(ws: Path) -> list[str]:
    """Processes still working in the workspace after a moment's grace for the kernel to reap them."""
    deadline = time.monotonic() + 2.0
    while (left := hostile.processes_in(ws)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


@pytest.mark.parametrize("case", [c for _, c in CASES], ids=[name for name, _ in CASES])
def test_hostile_case(case: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws, outside, home = tmp_path / "ws", tmp_path / "outside", tmp_path / "home"
    for d in (ws, outside, home):
        d.mkdir()
    monkeypatch.setenv("HOME", str(home))
    host_env = {k: hostile.expand(v, ws, outside) for k, v in case.get("host_env", {}).items()}
    for key, value in host_env.items():
        monkeypatch.setenv(key, value)
    setup = None
    try:
        if case.get("setup"):
            setup = _setup(hostile.expand(case["setup"], ws, outside), ws, dict(os.environ))
        asserts = hostile.expand(case.get("assert", {}), ws, outside)
        snapshots = {p: Path(p).read_bytes() if Path(p).is_file() else None
                     for p in ([asserts["file_unchanged"]] if "file_unchanged" in asserts else [])}
        tries = asyncio.run(_run_case(case, ws, outside, hostile.needs_a_person(case["expected"])))
    finally:
        _end_setup(setup)
    for seen in tries:
        seen.snapshots = snapshots
        if len(tries) == 1:
            problems = hostile.check_expected(case["expected"], seen, host_env)
        else:
            problems = hostile.race_outcome_ok(case["expected"], seen)
        problems += hostile.check_asserts(asserts, seen, ws)
        assert not problems, f"{case['id']}: {problems}; the agent was told: {seen.text[:300]!r}"
        assert seen.status in {s.value for s in RunStatus}
    if len(tries) > 1:
        hits = sum(not hostile.check_expected(case["expected"], t, host_env) for t in tries)
        assert hits, f"{case['id']}: the race never produced {case['expected']} in {len(tries)} tries"
    if "kill-process-group" in hostile.expected_parts(case["expected"]):
        assert not _left_behind(ws), f"{case['id']}: processes outlived the call: {_left_behind(ws)}"
