"""The hostile-input harness: every case of ../shared/hostile/*.json (and $BELAY_HOSTILE_DIR), on two routes.

Each case runs against a real console in a fresh workspace with a fresh
directory outside it and a throwaway HOME, in its permission `mode`
(accept_edits, bypass...: default unless it says), after its `setup` and its
`steps` (calls made first by the same agent, approved if asked; commands run
outside Belay, as a person's editor would).  Where the case expects the
policy to ask or deny, nobody is attached to approve, so the call does not
run; for every other outcome the harness approves as a person would: an
`allowed` call must then run and succeed, and an error, a limit, a cut or a
redaction must hold even though a person said yes.  A call that must not
run, or must fail, leaves the workspace and the directory outside it as
they were.

Routes (a case's `route` field names one, else both):
- `own`: through Belay's own pipeline and tools (validation, policy,
  approval, tools, sandbox).
- `hook`: the same calls (its steps' too) as Claude Code's PreToolUse over
  the console's real endpoint; what Belay allows is carried out as Claude
  Code would, with Belay's answer (its `updatedInput`, the wall) applied
  (tests/integration/hostile_hook.py), then reported back.  The expectations
  read so there: `ask` is an approval asked and, with nobody there, a deny;
  `deny` a deny with no approval asked; `error:<kind>` is Belay refusing the
  call although a person approved (deny, the reason a sentence the model can
  act on): the agent's own tool never starts, so it can have no side effect
  and the kind is in the reason, not in a field; `allowed` a command that
  exits 0 or a file tool that works; `truncate`, `sanitize`, `redact` and
  the output asserts are checked on what the agent's tool hands the model.
  Where a case cannot arise on this route, a named rule in `hook_route_gap`
  says why; no other case is left out.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from core import AgentHandle, Console, RunStatus
from core.tools.bash import BashSettings
from tests.integration import hostile
from tests.integration.hostile_hook import HookAgent

CASES = list(hostile.load_cases())
HARNESS_BASH_TIMEOUT_S = 5.0
ROUTED = [(name, case, route) for name, case in CASES for route in hostile.routes(case)]


def test_the_corpus_is_found() -> None:
    assert hostile.corpus_files(), f"no corpus in {hostile.SHARED_CORPUS}"
    assert len(CASES) >= 60
    assert {route for _, _, route in ROUTED} == {"own", "hook"}


def test_the_tree_snapshot_skips_an_entry_that_goes_away_while_it_is_taken(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A case's setup may still be swapping files when the harness looks (path-toctou-swap failed CI so)."""
    (tmp_path / "kept.txt").write_text("kept")
    real_walk = os.walk

    def walk_listing_a_moved_file(root: Any) -> Any:
        for folder, dirs, files in real_walk(root):
            yield folder, dirs, [*files, "moved-away.txt"]

    monkeypatch.setattr(hostile.os, "walk", walk_listing_a_moved_file)
    assert list(hostile.tree_state(tmp_path)) == [str(tmp_path / "kept.txt")]


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


async def _run_case(case: dict[str, Any], route: str, ws: Path, outside: Path, approve: bool,
                    watched: list[str]) -> Tried:
    """Make the case's steps, then its call (a race case: many times, within a budget), observing each outcome.

    `watched` files are read just before the call, for `file_unchanged`."""
    # The machine's settings for the run: any call's timeout is capped, so a case cannot hold CI for minutes.
    console = Console(ws, bash=BashSettings(default_timeout_s=HARNESS_BASH_TIMEOUT_S,
                                            max_timeout_s=HARNESS_BASH_TIMEOUT_S))
    await console.open()
    try:
        for action, rules in hostile.assumed_rules(case).items():
            for rule in rules:
                await console.add_rule(rule, action, "session")
        if case.get("mode"):  # the permission mode in force, as the settings would set it
            console.set_mode(case["mode"])
        sub = console.subscribe()
        asked: set[str] = set()

        async def answer() -> None:  # answers whatever is asked while an approver is registered
            while batch := await sub.next_batch():
                for event in batch:
                    if event.kind == "approval_requested":
                        asked.add(event.call_id)
                        console.approve(event.call_id)
                    elif event.kind == "approval_resolved" and event.by == "headless":
                        asked.add(event.call_id)

        answering = asyncio.ensure_future(answer())
        caller = await _Own.start(console) if route == "own" else _Hook(console, case.get("mode") or "default")
        tried = Tried()
        try:
            await _make_steps(console, caller, hostile.steps(case, ws, outside), tried)
            unregister = console.register_approver("harness") if approve else (lambda: None)
            tried.before = _trees(ws, outside)
            tried.snapshots = {p: Path(p).read_bytes() if Path(p).is_file() else None for p in watched}
            await _make_calls(caller, case, hostile.expand(case["input"], ws, outside), asked, tried)
            unregister()
        finally:
            await asyncio.sleep(0.05)  # let the last events reach the subscriber
            sub.close()
            await answering
        return tried
    finally:
        await console.close()


class _Own:
    """Calls through Belay's own pipeline, by a scripted agent."""

    def __init__(self, console: Console, agent: AgentHandle) -> None:
        self.console, self.agent = console, agent

    @classmethod
    async def start(cls, console: Console) -> _Own:
        return cls(console, await console.start_agent("hostile", "scripted"))

    async def call(self, tool: str, raw: Any, asked: set[str]) -> hostile.Observed:
        rss, started = hostile.rss_mb(), time.monotonic()
        outcome = await self.console.call(self.agent, tool, raw)
        wall = time.monotonic() - started
        run = self.console.timeline.runs.get(outcome.call_id)
        return hostile.Observed(status=outcome.status.value, text=outcome.text,
                                error_kind=outcome.error.kind.value if outcome.error else None,
                                asked=outcome.call_id in asked, wall_s=wall, rss_growth_mb=hostile.rss_mb() - rss,
                                window_text=_window_text(run))


class _Hook:
    """Calls as Claude Code's hooks bring them, carried out by the agent once Belay allows them."""

    def __init__(self, console: Console, mode: str) -> None:
        assert console.endpoint is not None, "the console serves no endpoint"
        self.console = console
        self.agent = HookAgent(console.endpoint.path, console.workspace.root, mode, HARNESS_BASH_TIMEOUT_S)

    async def call(self, tool: str, raw: Any, asked: set[str]) -> hostile.Observed:
        rss, started = hostile.rss_mb(), time.monotonic()
        known = set(self.console.timeline.runs)
        use_id, answer = await asyncio.to_thread(self.agent.pre, tool, raw)
        call_ids = [c for c in self.console.timeline.runs if c not in known]
        if answer.decision == "allow":
            given = answer.updated if answer.updated is not None else raw
            carried = await asyncio.to_thread(self.agent.carry_out, tool, given)
            await asyncio.to_thread(self.agent.post, use_id, tool, given, carried)
            status, text, code = carried.status, carried.text, carried.exit_code
        else:
            status, text, code = "denied", answer.reason, None
        wall = time.monotonic() - started
        run = self.console.timeline.runs.get(call_ids[-1]) if call_ids else None
        return hostile.Observed(status=status, text=text, error_kind=None, asked=bool(asked & set(call_ids)),
                                wall_s=wall, rss_growth_mb=hostile.rss_mb() - rss, window_text=_window_text(run),
                                exit_code=code)


def _window_text(run: Any) -> str:
    return (run.output + run.live_output) if run else ""


@dataclass
class Tried:
    """What happened in one case: its steps, the tries of its call, and the trees before the call."""

    steps: list[str] = field(default_factory=list)
    seen: list[hostile.Observed] = field(default_factory=list)
    before: dict[str, tuple[Any, ...]] = field(default_factory=dict)
    snapshots: dict[str, bytes | None] = field(default_factory=dict)
    shells: list[subprocess.Popen[bytes]] = field(default_factory=list)


async def _make_steps(console: Console, caller: _Own | _Hook, steps: list[hostile.Step], tried: Tried) -> None:
    """Calls by the same agent, approved if asked; commands run outside Belay, as a person would run them."""
    stop = console.register_approver("harness")
    try:
        for step in steps:
            if step.shell is not None:
                # A person's edit does not land in the same clock tick as the agent's last look at the file.
                await asyncio.sleep(0.05)
                proc = await asyncio.to_thread(_setup, step.shell, console.workspace.root, dict(os.environ))
                tried.shells.append(proc)
                tried.steps.append(f"shell {step.shell[:80]!r}: exit {proc.returncode}")
            else:
                assert step.tool is not None
                seen = await caller.call(step.tool, step.input, set())
                tried.steps.append(f"{step.tool} {str(step.input)[:80]!r}: {seen.status} {seen.text[:120]!r}")
    finally:
        stop()


async def _make_calls(caller: _Own | _Hook, case: dict[str, Any], raw: Any, asked: set[str], tried: Tried) -> None:
    deadline = time.monotonic() + hostile.REPEAT_BUDGET_S
    for _ in range(hostile.repeats(case)):
        tried.seen.append(await caller.call(case["tool"], raw, asked))
        if time.monotonic() > deadline:
            break


def _trees(ws: Path, outside: Path) -> dict[str, tuple[Any, ...]]:
    return {**hostile.tree_state(ws), **hostile.tree_state(outside)}


def _left_behind(ws: Path) -> list[str]:
    """Processes still working in the workspace after a moment's grace for the kernel to reap them."""
    deadline = time.monotonic() + 2.0
    while (left := hostile.processes_in(ws)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


@pytest.mark.parametrize(("case", "route"), [(c, r) for _, c, r in ROUTED], ids=[f"{n}@{r}" for n, _, r in ROUTED])
def test_hostile_case(case: dict[str, Any], route: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                      request: pytest.FixtureRequest) -> None:
    if route == "hook":
        gap = hostile.hook_route_gap(case)
        if gap is not None:
            pytest.skip(f"not a hook call: {gap}")
        still_open = hostile.open_on_hook_route(case)
        if still_open is not None:
            request.applymarker(pytest.mark.xfail(reason=still_open.why, strict=still_open.strict))
    ws, outside, home = tmp_path / "ws", tmp_path / "outside", tmp_path / "home"
    for d in (ws, outside, home):
        d.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(home / ".gitconfig"))  # the throwaway HOME's, as a user's would be
    host_env = {k: hostile.expand(v, ws, outside) for k, v in case.get("host_env", {}).items()}
    for key, value in host_env.items():
        monkeypatch.setenv(key, value)
    setup, tried = None, Tried()
    try:
        if case.get("setup"):
            setup = _setup(hostile.expand(case["setup"], ws, outside), ws, dict(os.environ))
        asserts = hostile.expand(case.get("assert", {}), ws, outside)
        watched = [asserts["file_unchanged"]] if "file_unchanged" in asserts else []
        tried = asyncio.run(_run_case(case, route, ws, outside, hostile.needs_a_person(case["expected"]), watched))
        changed = hostile.tree_changes(tried.before, _trees(ws, outside))
        still_running = hostile.processes_in(ws)  # a setup still at work changes the tree itself
    finally:
        for proc in [setup, *tried.shells]:
            _end_setup(proc)
    context = f"; steps: {tried.steps}" if tried.steps else ""
    for seen in tried.seen:
        seen.snapshots = tried.snapshots
        if len(tried.seen) == 1:
            problems = hostile.check_expected(case["expected"], seen, host_env, route)
        else:
            problems = hostile.race_outcome_ok(case["expected"], seen, route)
        problems += hostile.check_asserts(asserts, seen, ws)
        assert not problems, f"{case['id']}@{route}: {problems}; the agent was told: {seen.text[:300]!r}{context}"
        assert seen.status in {s.value for s in RunStatus}
    if len(tried.seen) > 1:
        hits = sum(not hostile.check_expected(case["expected"], t, host_env, route) for t in tried.seen)
        assert hits, f"{case['id']}: the race never produced {case['expected']} in {len(tried.seen)} tries"
    if _leaves_no_trace(case["expected"]) and len(tried.seen) == 1 and not still_running:
        assert not changed, f"{case['id']}: expected {case['expected']}, yet the call changed {changed[:5]}"
    if "kill-process-group" in hostile.expected_parts(case["expected"]):
        assert not _left_behind(ws), f"{case['id']}: processes outlived the call: {_left_behind(ws)}"


def _leaves_no_trace(expected: str) -> bool:
    """A call the policy stops, or one that fails, has no side effect (a limit may stop one halfway)."""
    parts = hostile.expected_parts(expected)
    return all(p in hostile.REFUSALS or (p.startswith("error:") and p != "error:resource-limit") for p in parts)
