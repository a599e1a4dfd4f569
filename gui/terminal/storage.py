"""The commands about what a workspace's state holds: `belay gc`, `belay export` and `belay verify`.

`belay gc` says which undo history retention ends, then ends it and says what
that freed.  The plan is printed before anything is removed (with --dry-run,
nothing is); at a terminal the person confirms it first.  A workspace a
console has open is refused, clearly: its snapshot lives in that console's
memory.

`belay export` writes the journal as JSON Lines (`core.store.export`), to
standard output or a file; it reads, so an open window does not stop it.

`belay verify` checks the journal's seals (`core.store.seals`) and names the
first row that does not match; it reads too.  Its exit status is 1 when
something does not match, so a scheduled job can alert on it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from core import config_dir, workspace_state_dir
from gui.terminal.calls import existing

if TYPE_CHECKING:
    from datetime import datetime

    from core import GcPlan, GcResult, Retention

SETTINGS_FILE = "settings.toml"
"""The user's settings file in `config_dir()` (core.policy.settings.settings_path), where [storage] is read."""


def storage_command(args: argparse.Namespace) -> int:
    """`belay export`, `belay verify` and `belay gc`, as parsed by gui.terminal.cli."""
    if args.command == "export":
        return export_command(args.workspace, args.state_dir, since=args.since, session=args.session,
                              contents=args.contents, output=args.output)
    if args.command == "verify":
        return verify_command(args.workspace, args.state_dir, args.expect)
    return gc_command(args.workspace, args.state_dir, args.dry_run, args.yes)


def export_command(workspace: str, state_dir: str | None, *, since: datetime | None, session: str | None,
                   contents: bool, output: str | None, out: TextIO | None = None) -> int:
    from core import export_journal

    root = Path(existing(workspace)).resolve()
    journal = workspace_state_dir(root, state_dir) / "journal.sqlite3"
    if output is None:
        export_journal(journal, out or sys.stdout, since=since, session=session, contents=contents)
        return 0
    target = Path(output)
    partial = target.with_name(f".{target.name}.partial")
    with partial.open("w", encoding="utf-8") as file:  # a failed export leaves no half-written file as the answer
        written = export_journal(journal, file, since=since, session=session, contents=contents)
    partial.replace(target)
    print(f"Exported {written} records to {target}.", file=sys.stderr)
    return 0


def verify_command(workspace: str, state_dir: str | None, expect: str | None, out: TextIO | None = None) -> int:
    """0 when every journal row matches its seal and the chain is whole (and holds `expect`), else 1."""
    from core import parse_head, verify_journal

    out = out or sys.stdout
    root = Path(existing(workspace)).resolve()
    journal = workspace_state_dir(root, state_dir) / "journal.sqlite3"
    verdict = verify_journal(journal, parse_head(expect) if expect else None)
    if verdict.ok:
        out.write(f"The journal {journal} verifies: {verdict.rows} rows, each as Belay last sealed it, "
                  f"{verdict.seals} seals in one chain.\n")
    else:
        out.write(f"The journal {journal} does NOT verify.\n")
        for mismatch in verdict.mismatches:
            out.write(f"- {mismatch.describe()}\n")
        if verdict.expected_missing and verdict.compacted_at is not None and expect is not None \
                and parse_head(expect)[0] < verdict.compacted_at:
            out.write(f"- the head {expect} is older than the last `belay gc`, which compacted the first "
                      f"{verdict.compacted_at} seals: it can no longer be checked (use a head printed since)\n")
        elif verdict.expected_missing:
            out.write(f"- the chain does not hold the head {expect}: the history up to it was rewritten or "
                      "removed\n")
    if verdict.adopted:
        out.write(f"Note: {verdict.adopted} rows were first sealed as found, written before this journal was sealed; "
                  "what they held before then cannot be checked.\n")
    out.write(f"Head: {verdict.seals}:{verdict.head}  (keep it elsewhere; `belay verify --expect` checks a later "
              "journal still holds it)\n")
    return 0 if verdict.ok else 1


def gc_command(workspace: str, state_dir: str | None, dry_run: bool, yes: bool, out: TextIO | None = None,
               stdin: TextIO | None = None) -> int:
    from core import collect_garbage, plan_gc, workspace_open_in_console

    out, stdin = out or sys.stdout, stdin or sys.stdin
    root = Path(existing(workspace)).resolve()
    retention, problems = _retention()
    for problem in problems:
        out.write(f"Note: settings: {problem}\n")
    state = workspace_state_dir(root, state_dir)
    if not state.exists():
        out.write(f"Nothing is stored for {root} yet.\n")
        return 0
    plan = plan_gc(state, retention)
    out.write(describe_plan(root, state, retention, plan))
    open_now = workspace_open_in_console(state)
    if dry_run:
        out.write("Dry run: nothing was removed." + (" A window has this workspace open now: close it before "
                                                      "running `belay gc`.\n" if open_now else "\n"))
        return 0
    if open_now:
        out.write("Nothing was removed: a Belay window (or `belay run`) has this workspace open. Close it, or wait "
                  "for it to finish, then run `belay gc` again.\n")
        return 2
    if plan.removed and not yes and stdin.isatty():
        out.write("End this undo history? [y/N] ")
        out.flush()
        if stdin.readline().strip().lower() not in ("y", "yes"):
            out.write("Nothing was removed.\n")
            return 1
    out.write(describe_result(collect_garbage(state, retention, shown=plan)))
    return 0


def _retention() -> tuple[Retention, list[str]]:
    """The user's [storage] settings and their problems; without a settings file, the defaults, read without
    loading the policy's settings (its rules, MCP servers and telemetry bring their models: a third of a gc)."""
    if not (config_dir() / SETTINGS_FILE).exists():
        from core import Retention

        return Retention(), []
    from core import load_retention

    return load_retention()


def describe_plan(root: Path, state: Path, retention: Retention, plan: GcPlan) -> str:
    lines = [f"{root}: its undo history and copies take {_size(plan.state_bytes)} ({state}).",
             f"Retention: {retention.keep_days:g} days of undo history, at most {_size(retention.max_bytes)} "
             "([storage] in your settings)."]
    if plan.removed:
        first, last = plan.removed[0], plan.removed[-1]
        lines.append(f"This ends the undo history of {_count(len(plan.removed), 'session')} "
                     f"({_count(plan.calls_removed, 'call')}), from {_when(first.started_at)} "
                     f"to {_when(last.last_at)}:")
        lines += [f"  {_when(s.started_at)} to {_when(s.last_at)}  {_count(s.calls, 'call'):>10}  session "
                  f"{s.session_id}" for s in plan.removed]
    else:
        lines.append("No undo history is past the horizon.")
    if plan.oldest_kept is not None:
        kept_calls = sum(s.calls for s in plan.kept)
        lines.append(f"Still undoable: {_count(kept_calls, 'call')}, back to {_when(plan.oldest_kept.created_at)} "
                     f"({plan.oldest_kept.tool} {plan.oldest_kept.summary}).")
    else:
        lines.append("No call stays undoable.")
    lines.append(f"Frees about {_size(plan.bytes_freed)}: {_count(plan.blobs_freed, 'stored copy', 'stored copies')}"
                 " of file contents that no kept record refers to.")
    lines += [f"Note: {note}." for note in plan.notes]
    return "\n".join(lines) + "\n"


def describe_result(result: GcResult) -> str:
    lines = [f"Removed {_count(len(result.plan.removed), 'session')} ({_count(result.plan.calls_removed, 'call')}) "
             f"and {_count(result.blobs_removed, 'stored copy', 'stored copies')}, and compacted the journal.",
             f"Freed {_size(result.freed)}: the state now takes {_size(result.state_bytes)}."]
    lines += [f"Note: {note}." for note in result.notes if note not in result.plan.notes]
    return "\n".join(lines) + "\n"


def _count(n: int, one: str, many: str | None = None) -> str:
    return f"{n:,} {one if n == 1 else many or one + 's'}"


def _size(n: float) -> str:
    for unit, scale in (("GB", 1 << 30), ("MB", 1 << 20), ("kB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:,.1f} {unit}"
    return f"{int(n)} bytes"


def _when(moment: datetime) -> str:
    return moment.astimezone().strftime("%Y-%m-%d %H:%M")
