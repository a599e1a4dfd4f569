"""Generated hostile calls, and the checks that the console survived them: shared by tests/integration/test_fuzz.py
(a couple of thousand calls) and bench/fuzz.py (ten thousand, timed).

A seeded generator makes calls to every file tool and to Bash: right and wrong types, missing and extra
fields, JSON text (malformed, duplicated keys), huge strings, NUL bytes, lone surrogates, odd Unicode (a
right-to-left override, combining marks, zero-width characters), absolute and `..` paths, and symbolic and
hard links that lead out of the workspace.  Bash gets harmless commands only (every approval is granted, so a
destructive command would run): every generated value reaches the shell quoted, and its writes name fresh
files inside the workspace.

`run_fuzz` drives the calls through a real Console with a person approving everything it is asked, and
reports what escaped (an exception out of `Console.call`), what changed outside the workspace, and whether
the journal holds every call to its end with every blob its changes name.  `run_outside_fuzz` makes the
same calls as an outside agent (Claude Code's hooks) would, through the console's interceptor.
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import random
import shlex
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core import Console, RunStatus
from core.store.blobs import BlobStore
from core.tools.bash import BashSettings
from tests.integration import hostile

TOOLS = ("Read", "Write", "Edit", "MultiEdit", "Glob", "Grep", "LS", "NotebookRead", "NotebookEdit", "Bash")
FINAL = frozenset({RunStatus.DONE, RunStatus.FAILED, RunStatus.DENIED, RunStatus.CANCELLED, RunStatus.TIMED_OUT})
NOTEBOOK = {"nbformat": 4, "nbformat_minor": 5, "metadata": {},
            "cells": [{"id": "c1", "cell_type": "code", "source": "x = 1", "metadata": {}, "outputs": [],
                       "execution_count": None},
                      {"id": "c2", "cell_type": "markdown", "source": "# title", "metadata": {}}]}
BASH_TIMEOUT_S = 5.0
"""The console's cap on any command: a generated command is quick, and a slow one must not hold the run."""


@dataclass(frozen=True)
class Layout:
    """A workspace with links leading out of it, a directory beside it that nothing may change, and a HOME."""

    root: Path
    ws: Path
    outside: Path
    home: Path
    state: Path


def make_layout(root: Path) -> Layout:
    ws, outside, home, state = root / "ws", root / "outside", root / "home", root / "state"
    for d in (ws / "src", ws / "dir" / "sub", outside / "dir", home, state):
        d.mkdir(parents=True, exist_ok=True)
    (ws / "a.txt").write_text("alpha\nbeta\ngamma\n")
    (ws / "src" / "m.py").write_text("x = 1\ny = 2\nx = 1\n")
    (ws / "crlf.txt").write_bytes(b"one\r\ntwo\r\n")
    (ws / "nb.ipynb").write_text(json.dumps(NOTEBOOK))
    (ws / "book.ipynb").write_text(json.dumps(NOTEBOOK))  # a notebook only the notebook tools aim at
    (outside / "secret.txt").write_text("OUTSIDE_SECRET\n")
    (outside / "target.txt").write_text("target\n")
    (outside / "hard_target.txt").write_text("hard\n")
    (outside / "dir" / "x.txt").write_text("x\n")
    (outside / "nb.ipynb").write_text(json.dumps(NOTEBOOK))
    os.symlink(outside / "target.txt", ws / "out_link")
    os.symlink("../outside/secret.txt", ws / "out_rel")
    os.symlink(outside, ws / "out_dir")
    os.symlink(outside / "nb.ipynb", ws / "out_nb.ipynb")
    os.symlink(outside / "not_yet.txt", ws / "dangling")
    os.symlink("loop", ws / "loop")
    os.link(outside / "hard_target.txt", ws / "hard.txt")
    return Layout(root, ws, outside, home, state)


# -- values -----------------------------------------------------------------------------------------------

ODD = ["\u202e", "e\u0301\u0302", "\u200b", "\u200d", "\ufeff", "\u2066", "\U0001f600", "\x1b[31m", "\r\n",
       "\t", "\\", "'", '"', "$(touch PWNED)", "`id`", "; rm -rf ~", "%s%n", "*", "?", "[", "{", "~", "\u0000"]
"""Pieces of odd text: all valid Unicode except where a generator adds NUL or a lone surrogate on purpose."""
SURROGATES = ["\ud800", "\udfff", "\udcff", "a\ud83d"]
WORDS = ["alpha", "beta", "x = 1", "print(1)", "gamma", "one", "title", "y"]


class Gen:
    """One seeded stream of hostile values and calls."""

    def __init__(self, seed: int, layout: Layout) -> None:
        self.r = random.Random(seed)
        self.lay = layout
        self.fresh = 0

    def chance(self, p: float) -> bool:
        return self.r.random() < p

    def text(self, big: bool = True) -> str:
        r = self.r
        roll = r.random()
        if roll < 0.45:
            return r.choice(WORDS)
        if roll < 0.75:
            return "".join(r.choice(ODD + WORDS) for _ in range(r.randint(1, 6))).replace("\x00", "" if
                                                                                      self.chance(0.7) else "\x00")
        if roll < 0.8:
            return r.choice(WORDS) + r.choice(SURROGATES) + r.choice(WORDS)
        if roll < 0.87:
            return "a\x00b" if self.chance(0.5) else "\x00"
        if roll < 0.93 or not big:
            return ""
        size = r.choice([5_000, 70_000, 300_000]) if self.chance(0.97) else 2_500_000
        return r.choice(["x", "ab\n", "\u202e", "é"]) * (size // 2)

    def name(self) -> str:
        """A fresh file name inside the workspace, sometimes with odd characters."""
        self.fresh += 1
        odd = self.r.choice(["", "", "\u202e", "e\u0301", "\u200b", " ", "-", "\U0001f600", "\\"])
        return f"fz{self.fresh}{odd}.txt"

    def earlier(self) -> str:
        """The name of a file made earlier (it exists, unless its call failed or it had odd characters)."""
        return f"fz{self.r.randint(0, self.fresh)}.txt"

    def path(self) -> str:
        lay, r = self.lay, self.r
        ws, out = str(lay.ws), str(lay.outside)
        choices: list[Callable[[], str]] = [
            lambda: f"{ws}/a.txt", lambda: f"{ws}/src/m.py", lambda: f"{ws}/crlf.txt", lambda: f"{ws}/nb.ipynb",
            lambda: f"{ws}/{self.name()}", lambda: f"{ws}/{self.name()}", lambda: f"{ws}/{self.earlier()}",
            lambda: f"{ws}/a.txt", lambda: f"{ws}/dir", lambda: ws, lambda: f"{ws}/dir/sub/{self.name()}",
            lambda: f"{ws}/out_link", lambda: f"{ws}/out_rel", lambda: f"{ws}/out_dir/target.txt",
            lambda: f"{ws}/out_dir", lambda: f"{ws}/hard.txt", lambda: f"{ws}/dangling", lambda: f"{ws}/loop",
            lambda: f"{ws}/out_nb.ipynb", lambda: f"{ws}/../outside/secret.txt",
            lambda: f"{ws}/dir/../../outside/new.txt", lambda: "../outside/target.txt", lambda: "a.txt",
            lambda: f"{out}/secret.txt", lambda: f"{out}/new_{self.fresh}.txt", lambda: f"{out}/nb.ipynb",
            lambda: f"{lay.root}/sibling.txt", lambda: f"{ws}/" + "n" * 300, lambda: f"{ws}/{self.text(big=False)}",
            lambda: f"{ws}/a.txt\x00/../../outside/secret.txt", lambda: f"{ws}/x{r.choice(SURROGATES)}.txt",
            lambda: "", lambda: "~/.bashrc", lambda: f"{ws}/./a.txt", lambda: f"{ws}//src///m.py",
            lambda: f"{ws}/nope/deeper/file.txt", lambda: f"{lay.home}/.profile",
        ]
        return r.choice(choices)()

    def wrong(self) -> Any:
        """A value of a type nobody asked for."""
        r = self.r
        nested: Any = "x"
        for _ in range(r.choice([1, 3, 200])):
            nested = [nested] if self.chance(0.5) else {"k": nested}
        return r.choice([None, True, 0, -1, 10**40, 1.5, float("nan"), float("inf"), [], {}, ["a", 1],
                         {"\ud800": 1}, nested, b"bytes", ("t", 1)])

    def pattern(self) -> str:
        return self.r.choice(["*", "**/*", "*.txt", "../*", "../../**", f"{self.lay.outside}/*", "src/**/*.py",
                              "**/" + self.text(big=False), "[", "{a,b}", "*" * 50, "**/.*", "out_dir/*"])

    def regex(self) -> str:
        return self.r.choice(["alpha", "x = 1", "(a+)+$", "(", "[", ".*", "^", "\\", "OUTSIDE", "é", "\u202e",
                              self.text(big=False) or "a", "(?i)BETA", "a{99999}"])

    # -- calls ------------------------------------------------------------------------------------------

    def call(self) -> tuple[str, object]:
        """(tool name, arguments): a plausible call, then perhaps broken in one or more ways."""
        tool = self.r.choices(TOOLS, weights=[14, 12, 12, 8, 8, 8, 8, 5, 8, 7])[0]
        args = getattr(self, "_" + tool.lower())()
        if self.chance(0.35):
            args = self.break_args(args)
        return self.break_name(tool), args

    def break_args(self, args: dict[str, Any]) -> object:
        r = self.r
        roll = r.random()
        if roll < 0.2 and args:
            del args[r.choice(sorted(args))]
        elif roll < 0.4:
            args[r.choice(["extra", "cwd", "dangerouslyDisableSandbox", self.text(big=False) or "k"])] = self.wrong()
        elif roll < 0.65 and args:
            args[r.choice(sorted(args))] = self.wrong()
        elif roll < 0.8:
            return self.as_json_text(args)
        elif roll < 0.9:
            return r.choice([None, [], "", "[1, 2]", 7, "null", "{", '"text"', list(args.items())])
        else:
            for key in list(args)[:2]:
                if isinstance(args[key], str):
                    args[key] += r.choice(SURROGATES)
        return args

    def as_json_text(self, args: dict[str, Any]) -> str:
        try:
            text = json.dumps(args, ensure_ascii=self.chance(0.5))
        except ValueError:
            return "{"
        roll = self.r.random()
        if roll < 0.3:
            return text[: self.r.randint(0, len(text))]
        if roll < 0.5 and args:
            key = json.dumps(next(iter(args)))
            return text[:-1] + f", {key}: \"{self.lay.outside}/secret.txt\"}}"
        if roll < 0.6:
            return text.replace("a", "\\ud800", 1)
        return text

    def break_name(self, tool: str) -> str:
        if not self.chance(0.02):
            return tool
        return self.r.choice([tool.lower(), tool + "\ud800", "", "Frobnicate", tool + " ", "mcp__x__y"])

    def _read(self) -> dict[str, Any]:
        args: dict[str, Any] = {"file_path": self.path()}
        if self.chance(0.3):
            args["offset"] = self.r.choice([0, 1, 2, 10**6])
        if self.chance(0.3):
            args["limit"] = self.r.choice([1, 2, 10**9])
        return args

    def _write(self) -> dict[str, Any]:
        return {"file_path": self.path(), "content": self.text()}

    def _edit(self) -> dict[str, Any]:
        args: dict[str, Any] = {"file_path": self.path(), "old_string": self.r.choice(WORDS + ["", self.text()]),
                                "new_string": self.text()}
        if self.chance(0.3):
            args["replace_all"] = self.chance(0.5)
        return args

    def _multiedit(self) -> dict[str, Any]:
        edits = [{"old_string": self.r.choice(WORDS + [""]), "new_string": self.text(big=False)}
                 for _ in range(self.r.choice([0, 1, 1, 1, 2, 3]))]
        if edits and self.chance(0.4):  # create a file, then edit what was just written
            edits[0] = {"old_string": "", "new_string": "alpha beta\n"}
            return {"file_path": f"{self.lay.ws}/{self.name()}", "edits": edits}
        return {"file_path": self.path(), "edits": edits}

    def _glob(self) -> dict[str, Any]:
        args: dict[str, Any] = {"pattern": self.pattern()}
        if self.chance(0.4):
            args["path"] = self.path()
        return args

    def _grep(self) -> dict[str, Any]:
        args: dict[str, Any] = {"pattern": self.regex()}
        if self.chance(0.5):
            args["path"] = self.path()
        if self.chance(0.3):
            args["glob"] = self.pattern()
        if self.chance(0.4):
            args["output_mode"] = self.r.choice(["content", "files_with_matches", "count", "lines"])
        if self.chance(0.2):
            args[self.r.choice(["-A", "-B", "-C"])] = self.r.choice([0, 2, 10**6])
        if self.chance(0.2):
            args["-i"] = True
        return args

    def _ls(self) -> dict[str, Any]:
        args: dict[str, Any] = {"path": self.path()}
        if self.chance(0.2):
            args["ignore"] = [self.pattern() for _ in range(2)]
        return args

    def notebook(self) -> str:
        return f"{self.lay.ws}/book.ipynb" if self.chance(0.6) else self.path()

    def _notebookread(self) -> dict[str, Any]:
        args: dict[str, Any] = {"notebook_path": self.notebook()}
        if self.chance(0.4):
            args["cell_id"] = self.r.choice(["c1", "c2", "cell-0", "cell-9", self.text(big=False)])
        return args

    def _notebookedit(self) -> dict[str, Any]:
        args: dict[str, Any] = {"notebook_path": self.notebook(), "new_source": self.text()}
        if self.chance(0.7):
            args["cell_id"] = self.r.choice(["c1", "c2", "cell-0", "cell-9", self.text(big=False)])
        if self.chance(0.3):
            args["edit_mode"] = self.r.choice(["replace", "insert", "delete", "explode"])
        if self.chance(0.3):
            args["cell_type"] = self.r.choice(["code", "markdown", "raw"])
        return args

    def _bash(self) -> dict[str, Any]:
        """A harmless command: generated values only ever quoted, writes only to fresh names in the workspace."""
        q = shlex.quote
        fresh = q(self.name())
        value = self.text(big=False)[:2000]
        command = self.r.choice([
            f"echo {q(value)}", f"printf %s {q(value)} > {fresh}", f"cat {q(self.path())}",
            f"ls -la {q(self.path())}", f"wc -c {q(self.path())} || true", f"mkdir -p {q('d' + str(self.fresh))}",
            "true", "pwd", "exit 3", "head -c 60000 /dev/urandom | base64", f"printf '\\033]0;%s\\007' {q(value)}",
            f"touch {fresh} && rm -f {fresh}", "echo " + "y" * 200_000, "no_such_command_here",
        ])
        args: dict[str, Any] = {"command": command}
        if self.chance(0.2):
            args["timeout"] = self.r.choice([1000, 5000, 0, -5])
        if self.chance(0.2):
            args["description"] = self.text(big=False)
        return args


# -- observing --------------------------------------------------------------------------------------------

def outside_state(lay: Layout) -> dict[str, Any]:
    """What no call may change: the directory beside the workspace (where every link out of it leads), HOME,
    and the entries beside both."""
    return {"outside": hostile.tree_state(lay.outside), "home": hostile.tree_state(lay.home),
            "beside": sorted(os.listdir(lay.root))}


def differences(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """Paths outside the workspace that were created, removed or changed."""
    found = [*hostile.tree_changes(before["outside"], after["outside"]),
             *hostile.tree_changes(before["home"], after["home"])]
    if before["beside"] != after["beside"]:
        found.append(f"beside the workspace: {before['beside']} -> {after['beside']}")
    return found


def rss_mb() -> float:
    """This process's resident set size now, after a full garbage collection."""
    gc.collect()
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


@dataclass
class Report:
    """What one fuzz run found."""

    calls: int = 0
    escapes: list[str] = field(default_factory=list)
    """Calls that raised out of Console.call, with the exception."""
    unfinished: list[str] = field(default_factory=list)
    """Calls whose outcome, journal row or timeline run is not in a final state, or disagree."""
    unwritable: list[str] = field(default_factory=list)
    """Calls whose text to the agent cannot be encoded as UTF-8."""
    crashes: list[str] = field(default_factory=list)
    """Calls that failed with a system error: a tool or the pipeline met something it did not expect."""
    outside_writes: list[str] = field(default_factory=list)
    missing_blobs: list[str] = field(default_factory=list)
    rss_before_mb: float = 0.0
    """The console's process once the console is open, before the first call."""
    rss_after_mb: float = 0.0
    """The same after the last call, before the console closes."""
    statuses: dict[str, int] = field(default_factory=dict)
    """How many calls ended how, by "tool:status:error kind"."""
    samples: dict[str, list[str]] = field(default_factory=dict)
    """Calls and what the agent was told, by the same key."""
    seconds: float = 0.0

    def problems(self) -> list[str]:
        return [*self.escapes, *self.unfinished, *self.unwritable, *self.crashes, *self.outside_writes,
                *self.missing_blobs]


async def run_fuzz(lay: Layout, seed: int, count: int, concurrency: int = 4) -> Report:
    """Make `count` generated calls through a real console, a person approving everything; report the damage."""
    report, gen = Report(), Gen(seed, lay)
    before = outside_state(lay)
    console = Console(lay.ws, state_dir=lay.state,
                      bash=BashSettings(default_timeout_s=BASH_TIMEOUT_S, max_timeout_s=BASH_TIMEOUT_S))
    await console.open()
    try:
        report.rss_before_mb = rss_mb()
        outcomes = await _make_calls(console, gen, count, concurrency, report)
        report.rss_after_mb = rss_mb()
        named = await _check_journal(console, outcomes, report)
    finally:
        await console.close()
    store = BlobStore(console.state_dir / "blobs")  # read afresh: what a console opened later would find
    report.missing_blobs = [f"{where}: {digest}" for where, digest in named if not store.has(digest)]
    report.outside_writes = differences(before, outside_state(lay))
    return report


async def _make_calls(console: Console, gen: Gen, count: int, concurrency: int, report: Report) -> dict[str, str]:
    """Run the calls `concurrency` at a time; outcome status by call id."""
    unregister = console.register_approver("fuzz")
    sub = console.subscribe()
    approving = asyncio.ensure_future(_approve_all(console, sub))
    agent = await console.start_agent("fuzz", "scripted")
    outcomes: dict[str, str] = {}
    queue = [gen.call() for _ in range(count)]
    started = time.monotonic()

    async def worker() -> None:
        while queue:
            index = count - len(queue)
            tool, args = queue.pop(0)
            await _one(console, agent, index, tool, args, report, outcomes)

    try:
        await asyncio.gather(*(worker() for _ in range(concurrency)))
    finally:
        report.seconds = time.monotonic() - started
        unregister()
        sub.close()
        await approving
    return outcomes


async def _one(console: Console, agent: Any, index: int, tool: str, args: object, report: Report,
               outcomes: dict[str, str]) -> None:
    shown = ascii(args)[:160]
    report.calls += 1
    try:
        outcome = await console.call(agent, tool, args)
    except Exception as e:  # noqa: BLE001 - this is what the fuzz looks for
        report.escapes.append(f"#{index} {tool!a}{shown}: {e!r:.300}")
        return
    outcomes[outcome.call_id] = outcome.status.value
    seen = f"{tool}:{outcome.status.value}" + (f":{outcome.error.kind.value}" if outcome.error else "")
    report.statuses[seen] = report.statuses.get(seen, 0) + 1
    report.samples.setdefault(seen, []).append(f"{shown} -> {outcome.text[:160]!a}")
    if outcome.status not in FINAL:
        report.unfinished.append(f"#{index} {tool!a}{shown}: the agent was told {outcome.status.value}")
    try:
        outcome.text.encode("utf-8")
    except UnicodeEncodeError:
        report.unwritable.append(f"#{index} {tool!a}{shown}: {outcome.text[:200]!a}")
    if outcome.error is not None and outcome.error.kind.value == "system":
        report.crashes.append(f"#{index} {tool!a}{shown}: {outcome.text[:300]!a}")


async def _check_journal(console: Console, outcomes: dict[str, str], report: Report) -> list[tuple[str, str]]:
    """Every call is journaled, ended, as the agent was told and as the window shows it.  Returns the blobs
    the journal's changes name, as (call and path, hash)."""
    records = {r.call_id: r for r in await console.history()}
    for call_id, status in outcomes.items():
        record, run = records.get(call_id), console.timeline.runs.get(call_id)
        if record is None:
            report.unfinished.append(f"{call_id}: not in the journal")
        elif record.status.value != status or record.status not in FINAL:
            report.unfinished.append(f"{call_id}: journaled {record.status.value}, the agent was told {status}")
        if run is None or run.status.value != status:
            report.unfinished.append(f"{call_id}: the window shows {run.status.value if run else 'nothing'}")
    open_ones = [r.call_id for r in records.values() if r.status not in FINAL]
    report.unfinished += [f"{c}: left {records[c].status.value} in the journal" for c in open_ones]
    return [(f"{r.call_id} {c.path!a}", h) for r in records.values() for c in r.changes if c.stored
            for h in (c.before_hash, c.after_hash) if h]


async def run_outside_fuzz(lay: Layout, seed: int, count: int) -> Report:
    """The same calls as an outside agent's (Claude Code's hooks): asked before it runs its own tool, told after.

    Whatever Belay allows is reported back with generated output (or an error), as the agent would; Belay's
    tools never run, so nothing is written: what is checked is that nothing escapes and every call ends."""
    report, gen = Report(), Gen(seed, lay)
    console = Console(lay.ws, state_dir=lay.state)
    await console.open()
    try:
        assert console.interceptor is not None
        unregister, sub = console.register_approver("fuzz"), console.subscribe()
        approving = asyncio.ensure_future(_approve_all(console, sub))
        agent = await console.start_agent("outside", "claude-code")
        started = time.monotonic()
        for index in range(count):
            tool, args = gen.call()
            if isinstance(args, dict):  # a hook's tool_input is always an object
                await _one_outside(console, agent, index, tool, args, gen, report)
        report.seconds = time.monotonic() - started
        unregister()
        sub.close()
        await approving
        open_ones = [r for r in await console.history() if r.status not in FINAL]
        report.unfinished += [f"{r.call_id} {r.tool!a}: left {r.status.value}" for r in open_ones]
    finally:
        await console.close()
    return report


async def _approve_all(console: Console, sub: Any) -> None:
    while batch := await sub.next_batch():
        for event in batch:
            if event.kind == "approval_requested":
                console.approve(event.call_id)


async def _one_outside(console: Console, agent: Any, index: int, tool: str, args: dict[str, Any], gen: Gen,
                       report: Report) -> None:
    interceptor = console.interceptor
    assert interceptor is not None
    report.calls += 1
    try:
        verdict = await interceptor.before(agent, f"use{index}", tool, args)
        if verdict.decision == "allow":
            error = (gen.text(big=False) or "failed") if gen.chance(0.2) else None
            await interceptor.after(f"use{index}", response=gen.text(big=False), error=error)
    except Exception as e:  # noqa: BLE001 - this is what the fuzz looks for
        report.escapes.append(f"#{index} {tool!a}{ascii(args)[:160]}: {e!r:.300}")
