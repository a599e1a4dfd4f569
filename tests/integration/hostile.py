"""Support for the hostile-input harness: loading cases, expanding them, checking them.

The contract is ../shared/hostile/README.md.  A case names a tool, its input
(with `{WS}`, `{OUTSIDE}` and `{"$repeat": s, "count": n}` to expand), an
optional shell `setup`, optional `steps` made before the call (calls through
the same pipeline, and commands run outside Belay), rules assumed allowed or
denied, host environment variables, the expected outcome and post-conditions.
Everything here is pure or plain file/process inspection; running the calls
is the test module's job.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import resource
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
BUNDLED_CORPUS = Path(__file__).resolve().parent / "corpus"
"""A copy of the shared corpus kept with the tests, so a checkout on its own still runs every case."""
SHARED_CORPUS = ROOT.parent / "shared" / "hostile"
CORPUS_ENV = "BELAY_HOSTILE_DIR"

REFUSALS = frozenset({"ask", "deny"})
"""Outcomes where the call must not run: nobody is there to approve.  For every other outcome the harness
answers as a person who approves: `allowed` means a legitimate call runs and succeeds; an error, a limit, a
cut, a sanitised or redacted output is what must hold even when a person said yes."""
CUT_MARKERS = ("characters cut ...]", "bytes cut ...]", "[line cut: ")
"""How a capped output says it was cut (what an `allowed` call must not be): Belay's own tools, and the wall's
filter of an outside agent's command (core.outside.wall), say it in the same words."""
ROUTES = ("own", "hook")
"""Belay's own pipeline and tools; an outside agent's hook call, carried out by the agent (see test_hostile)."""

CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]")


def corpus_files() -> list[Path]:
    """The bundled copy, the shared folder beside the checkout when there is one, and $BELAY_HOSTILE_DIR."""
    dirs = [BUNDLED_CORPUS, SHARED_CORPUS]
    if os.environ.get(CORPUS_ENV):
        dirs.append(Path(os.environ[CORPUS_ENV]))
    return [f for d in dirs if d.is_dir() for f in sorted(d.glob("*.json"))]


def load_cases() -> Iterator[tuple[str, dict[str, Any]]]:
    """Every case once: a case found in several places (the bundled copy and its source) runs once."""
    seen: set[str] = set()
    for path in corpus_files():
        for case in json.loads(path.read_text(encoding="utf-8")):
            fingerprint = json.dumps(case, sort_keys=True)
            if fingerprint not in seen:
                seen.add(fingerprint)
                yield f"{path.stem}:{case['id']}", case


def expand(value: Any, ws: Path, outside: Path) -> Any:
    """Replace the placeholders, in keys too (`file_size` and `max_file_bytes` are keyed by path); a string
    input stays raw JSON text for the pipeline."""
    if isinstance(value, str):
        return value.replace("{WS}", str(ws)).replace("{OUTSIDE}", str(outside))
    if isinstance(value, list):
        return [expand(v, ws, outside) for v in value]
    if isinstance(value, dict):
        if set(value) == {"$repeat", "count"}:
            return expand(value["$repeat"], ws, outside) * int(value["count"])
        return {expand(k, ws, outside): expand(v, ws, outside) for k, v in value.items()}
    return value


_ASSUMED = re.compile(r"\b(allow|ask|deny) rules? ((?:[A-Za-z_][\w.-]*(?:\([^)]*\))?(?:,\s*|\s+and\s+)?)+?) "
                      r"(?:is |are )?assumed", re.IGNORECASE)
_RULE = re.compile(r"[A-Za-z_][\w.-]*(?:\([^)]*\))?")


def assumed_rules(case: dict[str, Any]) -> dict[str, list[str]]:
    """The rules a case assumes in effect, by action.

    `assume_allow` (and `assume_ask` / `assume_deny` where a corpus has them) are fields; a case may also
    state its assumption in its notes ("Deny rule Bash(curl:*) assumed."), which the harness honours too.
    """
    found: dict[str, list[str]] = {a: list(case.get(f"assume_{a}") or []) for a in ("allow", "ask", "deny")}
    for action, rules in _ASSUMED.findall(str(case.get("notes", ""))):
        found[action.lower()] += [r for r in _RULE.findall(rules) if r.lower() != "and"]
    return found


_REPEAT = re.compile(r"run\s*(?:>=|at least)\s*([0-9]+)\s*times", re.IGNORECASE)
MAX_REPEATS = 1000
REPEAT_BUDGET_S = 10.0
WALL_SLACK = 3
"""A case's `max_wall_s` times this is its deadline (see `_max_wall`): the smallest margin between a case's
figure and what it guards against is a 1 s timeout on `sleep 30` (figure 8 s)."""


def repeats(case: dict[str, Any]) -> int:
    """How many times to make the call: races ("Race: run >=1000 times") are tried many times, within a budget."""
    found = _REPEAT.search(str(case.get("notes", "")))
    return min(int(found.group(1)), MAX_REPEATS) if found else 1


def race_outcome_ok(expected: str, seen: Observed, route: str = "own") -> list[str]:
    """For a race, one try may also win cleanly: it succeeds or finds the path missing, never anything else."""
    if seen.status == "done" or (seen.status == "failed" and seen.error_kind == "not-found"):
        return []
    return check_expected(expected, seen, {}, route)


def routes(case: dict[str, Any]) -> list[str]:
    """The routes a case runs on: its `route` field (`own`, `hook` or `both`), both by default."""
    route = case.get("route") or "both"
    if route not in (*ROUTES, "both"):
        raise ValueError(f"{case['id']}: route must be own, hook or both, not {route!r}")
    return list(ROUTES) if route == "both" else [route]


def hook_route_gap(case: dict[str, Any]) -> str | None:
    """Why a case cannot arise as an outside agent's hook call (None: it can, and runs on that route).

    Each rule names one way the case's call differs from anything a hook ever carries; nothing else is left
    out of the hook route."""
    for rule in HOOK_ROUTE_GAPS:
        why = rule(case)
        if why is not None:
            return why
    return None


def _raw_json_input(case: dict[str, Any]) -> str | None:
    """A hook event carries the call's input as a JSON object Claude Code decoded and checked against its
    tool's schema; raw text to decode (malformed on purpose) tests only Belay's own decoding."""
    return "its input is raw JSON text, which Belay's own pipeline decodes" if isinstance(case["input"], str) else None


def _agent_shell_startup(case: dict[str, Any]) -> str | None:
    """A start-up variable in the agent's own environment (BASH_ENV, ENV) is read by the agent's own shell as
    it starts the command Belay answered with, before anything of Belay's runs: what it does is the agent's
    environment at work, which Belay's answer cannot reach (inside the wall the environment is allow-listed)."""
    found = sorted(set(case.get("host_env") or {}) & {"BASH_ENV", "ENV"})
    return f"{', '.join(found)} in the agent's environment is run by the agent's own shell first" if found else None


HOOK_ROUTE_GAPS = (_raw_json_input, _agent_shell_startup)


@dataclass(frozen=True)
class OpenOnHookRoute:
    """Cases Belay's hook handling does not hold yet, for one stated reason: expected to fail on the hook route
    (strictly: once one passes, the test says so and it comes off the list).  Issue 34 point 5."""

    why: str
    cases: frozenset[str]
    strict: bool = True
    """False for a race, which the agent may win or lose."""


HOOK_ROUTE_OPEN = (
    OpenOnHookRoute("a link swapped in after Belay looked: the agent's tool follows it (a race)",
                    frozenset({"path-toctou-swap"}), strict=False),
    OpenOnHookRoute(
        "Belay does not follow what the agent read, so it cannot refuse an edit of a file changed since (Claude "
        "Code itself refuses one before its hook: 'File has been modified since read')",
        frozenset({"belay-path-stale-after-outside-edit", "belay-path-stale-same-size", "belay-path-stale-multiedit",
                   "belay-path-notebook-stale"})),
    OpenOnHookRoute(
        "Belay judges an input its model of the tool rejects by the tool's name, not as invalid (the agent's tool "
        "may take more than Belay's model): the policy asks, the person approves; Claude Code checks its own "
        "schema, and an Edit's old_string, before its hook",
        frozenset({"belay-args-multiedit-no-edits", "belay-args-notebook-bad-mode", "belay-args-grep-nul-pattern",
                   "args-command-not-string", "args-command-missing", "args-command-empty", "args-timeout-string",
                   "args-unknown-field", "args-10mb-command", "args-read-path-null", "args-write-missing-content",
                   "args-edit-identical", "args-edit-replace-all-wrong-type", "args-edit-crlf-mismatch",
                   "args-notebook-wrong-extension"})),
    OpenOnHookRoute(
        "what the agent's own Read, Grep, Glob and LS hand its model does not pass through Belay: files a Read "
        "deny rule hides, escape sequences in a file or a name, a binary file, reach it (Belay would have to "
        "refuse such a call, or narrow its input)",
        frozenset({"belay-path-grep-read-deny", "belay-path-glob-read-deny", "belay-path-ls-read-deny",
                   "belay-output-ls-escape-name", "belay-output-glob-escape-name", "belay-output-read-escape-content",
                   "out-read-binary-ws"})),
)


def open_on_hook_route(case: dict[str, Any]) -> OpenOnHookRoute | None:
    """The stated reason a case does not hold on the hook route yet, if it is one of those."""
    return next((o for o in HOOK_ROUTE_OPEN if case["id"] in o.cases), None)


def expected_parts(expected: str) -> set[str]:
    """'truncate+kill-process-group' -> {'truncate', 'kill-process-group'}."""
    return set(expected.split("+"))


def needs_a_person(expected: str) -> bool:
    return not expected_parts(expected) & REFUSALS


@dataclass(frozen=True)
class Step:
    """One of a case's `steps`: a call through the pipeline (`tool`, `input`) or a command outside (`shell`)."""

    tool: str | None = None
    input: Any = None
    shell: str | None = None


def steps(case: dict[str, Any], ws: Path, outside: Path) -> list[Step]:
    """The case's steps, expanded, in order; a step that is neither a call nor a command is a broken case."""
    found = []
    for raw in case.get("steps") or []:
        if "shell" in raw:
            found.append(Step(shell=expand(raw["shell"], ws, outside)))
        elif "tool" in raw:
            found.append(Step(tool=raw["tool"], input=expand(raw.get("input", {}), ws, outside)))
        else:
            raise ValueError(f"{case['id']}: a step must name a tool or a shell command: {raw!r}")
    return found


def rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize() / 2**20


def processes_matching(text: str) -> list[str]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if text in cmdline:
            found.append(f"{entry.name}: {cmdline.strip()}")
    return found


def processes_in(directory: Path) -> list[str]:
    """Live processes (not zombies) whose working directory lies in `directory`: what a command left behind."""
    root = os.path.realpath(directory)
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cwd = os.readlink(entry / "cwd")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except (OSError, IndexError):
            continue
        if state != "Z" and (cwd == root or cwd.startswith(root + "/")):
            found.append(f"{entry.name}: {cmdline.strip()}")
    return found


@dataclass
class Observed:
    """What the harness saw of one call."""

    status: str
    text: str
    error_kind: str | None
    asked: bool
    """The policy asked a person (answered by the harness or by the headless rule)."""
    wall_s: float
    rss_growth_mb: float
    window_text: str = ""
    """The output as the window's read model holds it."""
    exit_code: int | None = None
    """On the hook route, the exit code of the command the agent ran (None: not a command, or not run)."""
    snapshots: dict[str, bytes | None] = field(default_factory=dict)


def check_expected(expected: str, seen: Observed, host_env: dict[str, str], route: str = "own") -> list[str]:
    problems: list[str] = []
    for part in expected_parts(expected):
        if route == "hook" and part.startswith("error:"):
            problems += _check_hook_refusal(part, seen)
        else:
            problems += _check_part(part, seen, host_env)
    return problems


def _check_hook_refusal(part: str, seen: Observed) -> list[str]:
    """An error on the hook route: Belay refuses the call (a person approving or not), saying why in a sentence
    the model can act on; the agent's tool never starts, so nothing of it runs or changes.  Except a limit
    (`error:resource-limit`), which is not known before the command runs: the wall's limit stops it, and it
    fails (a non-zero exit code, or the agent's timeout)."""
    if part == "error:resource-limit":
        if seen.status == "timed_out" or (seen.status == "done" and seen.exit_code):
            return []
        return [f"expected {part} (the command stopped by the wall's limit), got {seen.status}, "
                f"exit code {seen.exit_code}: {seen.text[:200]!r}"]
    if seen.status == "denied" and len(seen.text.strip()) > 10:
        return []
    return [f"expected {part} (Belay refusing the call with a reason), got {seen.status}: {seen.text[:200]!r}"]


def _check_part(part: str, seen: Observed, host_env: dict[str, str]) -> list[str]:
    if part == "allowed":  # a person approved where asked: nothing may refuse, break or cut a legitimate call
        if seen.status != "done":
            return [f"expected allowed (run and succeed), got {seen.status}/{seen.error_kind} (asked={seen.asked})"]
        return [f"a legitimate call's output was cut: {seen.text[-200:]!r}"] if any(
            m in seen.text for m in CUT_MARKERS) else []
    if part == "ask":
        return [] if seen.asked and seen.status in ("denied", "timed_out") else [f"expected ask, got {seen.status} (asked={seen.asked})"]
    if part == "deny":
        return [] if seen.status == "denied" and not seen.asked else [f"expected deny, got {seen.status} (asked={seen.asked})"]
    if part.startswith("error:"):
        kind = part.split(":", 1)[1]
        ok = seen.status == "failed" and seen.error_kind == kind and len(seen.text) > 10
        return [] if ok else [f"expected {part}, got {seen.status}/{seen.error_kind}: {seen.text[:200]!r}"]
    if part == "kill-process-group":
        return [] if seen.status in ("done", "timed_out", "failed", "cancelled") else [f"did not run: {seen.status}"]
    if part == "truncate":
        cut = "cut" in seen.text or "inary" in seen.text
        return [] if seen.status != "denied" and cut and len(seen.text) <= 30_000 else [f"not truncated: {len(seen.text)} chars"]
    if part == "sanitize":
        bad = [t for t in (seen.text, seen.window_text) if CONTROL.search(t)]
        return [f"control characters reached the agent or window: {bad[0][:120]!r}"] if bad else []
    if part == "redact":
        leaked = [k for k, v in host_env.items() if len(v) >= 6 and (v in seen.text or v in seen.window_text)]
        return [f"secrets leaked: {leaked}"] if leaked else []
    return [f"unknown expectation {part!r}"]


def check_asserts(asserts: dict[str, Any], seen: Observed, ws: Path) -> list[str]:
    problems: list[str] = []
    for key, value in asserts.items():
        checker = _ASSERTS.get(key)
        if checker is None:
            problems.append(f"unknown assert {key!r}")
        else:
            problems += checker(value, seen, ws)
    return problems


def _file_absent(value: Any, seen: Observed, ws: Path) -> list[str]:
    return [f"{value} exists"] if os.path.lexists(value) else []


def _file_unchanged(value: Any, seen: Observed, ws: Path) -> list[str]:
    before = seen.snapshots.get(value)
    now = Path(value).read_bytes() if Path(value).is_file() else None
    return [] if before == now else [f"{value} changed"]


def _file_size(value: Any, seen: Observed, ws: Path) -> list[str]:
    return [f"{p} is {os.path.getsize(p) if os.path.exists(p) else 'absent'}, expected {n}"
            for p, n in value.items() if not os.path.exists(p) or os.path.getsize(p) != n]


def _max_file_bytes(value: Any, seen: Observed, ws: Path) -> list[str]:
    return [f"{p} is {os.path.getsize(p)} bytes > {n}" for p, n in value.items()
            if os.path.exists(p) and os.path.getsize(p) > n]


def _no_partial_file(value: Any, seen: Observed, ws: Path) -> list[str]:
    partial = [str(p) for p in ws.rglob("*.tmp") if ".belay-" in p.name]
    return [f"partial files left: {partial}"] if partial else []


def _not_contains(value: Any, seen: Observed, ws: Path) -> list[str]:
    needles = [value] if isinstance(value, str) else list(value)
    return [f"output contains {n!r}" for n in needles if n in seen.text or n in seen.window_text]


def _max_chars(value: Any, seen: Observed, ws: Path) -> list[str]:
    return [f"{len(seen.text)} chars reached the agent (max {value})"] if len(seen.text) > value else []


def _max_line(value: Any, seen: Observed, ws: Path) -> list[str]:
    longest = max((len(line) for line in seen.text.splitlines()), default=0)
    return [f"a line of {longest} chars (max {value})"] if longest > value else []


def _max_wall(value: Any, seen: Observed, ws: Path) -> list[str]:
    """`max_wall_s` is the call's cost on a quiet machine; what the case guards against (a read that never ends,
    a sleep of a day, 2^40 regex steps, a child kept for a minute) costs far more.  So the call must end by its
    own mechanism (`expected` says which) within WALL_SLACK times the figure: a loaded machine stretches the
    figure, and no test here asserts one wall-clock figure as it was measured."""
    deadline = value * WALL_SLACK
    return [f"took {seen.wall_s:.1f} s: still running past {deadline:g} s ({WALL_SLACK} times its {value} s)"] \
        if seen.wall_s > deadline else []


def _max_rss(value: Any, seen: Observed, ws: Path) -> list[str]:
    return [f"the console grew by {seen.rss_growth_mb:.0f} MB (max {value})"] if seen.rss_growth_mb > value else []


def _no_process(value: Any, seen: Observed, ws: Path) -> list[str]:
    left = processes_matching(value)
    return [f"processes left: {left}"] if left else []


def _env_absent(value: Any, seen: Observed, ws: Path) -> list[str]:
    return [f"{value} reached the child"] if f"{value}=" in seen.text else []


def _trivially_alive(value: Any, seen: Observed, ws: Path) -> list[str]:
    return []  # the harness runs in the console's process: reaching this line is the proof


def _no_exception(value: Any, seen: Observed, ws: Path) -> list[str]:
    """Nothing escaped (reaching this line), and nothing was caught as a crash of a tool or the pipeline."""
    return [f"an exception was caught as a crash: {seen.text[:300]!r}"] if "failed unexpectedly" in seen.text else []


def tree_state(root: Path) -> dict[str, tuple[Any, ...]]:
    """Every entry under `root` (links not followed): kind, permission bits, and content or link target.

    Git's index is left out: reading a repository's state may refresh it without changing anything.
    An entry that goes away between listing and reading is left out too: a case's setup may still be
    moving files about (a swap race), and its tree is then not compared."""
    found: dict[str, tuple[Any, ...]] = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = os.path.join(folder, name)
            if path.endswith(f"{os.sep}.git{os.sep}index"):
                continue
            try:
                found[path] = _entry_state(path)
            except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
                continue  # moved, or swapped for a directory, while the snapshot was taken
    return found


def _entry_state(path: str) -> tuple[Any, ...]:
    st = os.lstat(path)
    if stat.S_ISLNK(st.st_mode):
        return ("link", os.readlink(path))
    if stat.S_ISREG(st.st_mode):
        with open(path, "rb") as f:
            return ("file", st.st_mode, hashlib.sha256(f.read()).hexdigest())
    return ("other", st.st_mode)


def tree_changes(before: dict[str, tuple[Any, ...]], after: dict[str, tuple[Any, ...]]) -> list[str]:
    """Paths created, removed or changed between two `tree_state`s."""
    return [f"{p} {'created' if p not in before else 'removed' if p not in after else 'changed'}"
            for p in sorted(set(before) | set(after)) if before.get(p) != after.get(p)]


_ASSERTS = {
    "file_absent": _file_absent, "file_unchanged": _file_unchanged, "file_size": _file_size,
    "max_file_bytes": _max_file_bytes, "no_partial_file": _no_partial_file,
    "output_not_contains": _not_contains, "output_not_contains_any": _not_contains,
    "max_output_chars_to_model": _max_chars, "max_line_chars": _max_line, "max_wall_s": _max_wall,
    "max_rss_mb": _max_rss, "no_process_matching": _no_process, "env_var_absent_in_child": _env_absent,
    "host_alive": _trivially_alive, "no_exception": _no_exception,
}
