"""Run the benchmarks and write their figures into docs/benchmarks.md: the table is their output, not typing.

Each `bench/<name>.py` runs in a fresh interpreter, bounded by LIMIT_S; its output streams through, and the
machine's load average is printed before and after it.  Every `RESULT <figure> = <number> <unit> (<baseline>)`
line it printed becomes one row of the table between the RESULTS markers in docs/benchmarks.md, with the
bench that measured it, the date and the load.  A bench not run this time (`--only`) keeps its rows from the
last run; one that failed or ran out of time says so in its row.

Run: .venv/bin/python bench/report.py [--only NAME ...] [--no-write]   (`make bench` runs it whole)
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from datetime import date
from pathlib import Path

HERE = Path(__file__).resolve().parent
DOC = HERE.parent / "docs" / "benchmarks.md"
START, END = "<!-- RESULTS: written by bench/report.py -->", "<!-- /RESULTS -->"
LIMIT_S = 150.0
"""A bench is meant to end within two minutes; past this it is stopped and its row says so."""
RESULT = re.compile(r"^RESULT (?P<figure>.+?) = (?P<value>\S+) (?P<rest>.*)$")
HEADER = "| figure | value | against | bench | run |\n|---|---|---|---|---|"


def benches() -> list[str]:
    return sorted(p.stem for p in HERE.glob("*.py") if p.stem != "report")


def run(name: str) -> tuple[list[str], str]:
    """The RESULT rows one bench printed (its other output streams through), and how its run went."""
    before = os.getloadavg()[0]
    print(f"== bench/{name}.py (load average {before:.2f} on {os.cpu_count()} CPUs)", flush=True)
    started = time.monotonic()
    try:
        done = subprocess.run([sys.executable, str(HERE / f"{name}.py")], capture_output=True, text=True,
                              timeout=LIMIT_S, check=False)
        out, failed = done.stdout, f"exit {done.returncode}" if done.returncode else ""
    except subprocess.TimeoutExpired as e:
        out, failed = (e.stdout or b"").decode(errors="replace"), f"stopped after {LIMIT_S:.0f} s"
        done = None
    sys.stdout.write(out)
    if done is not None and done.returncode:
        sys.stdout.write(done.stderr[-3000:])
    took, after = time.monotonic() - started, os.getloadavg()[0]
    run_note = f"{date.today().isoformat()}, {took:.0f} s, load {before:.1f}-{after:.1f}"
    print(f"== bench/{name}.py took {took:.0f} s (load average {after:.2f})" + (f": {failed}" if failed else ""))
    rows = []
    for line in out.splitlines():
        m = RESULT.match(line.strip())
        if m:
            rest = m["rest"].strip()
            unit, _, against = rest.partition("(")
            rows.append(f"| {_cell(m['figure'])} | {_cell(m['value'])} {_cell(unit.strip())} | "
                        f"{_cell(against.rstrip(')').strip())} | {name} | {run_note} |")
    if failed:
        rows.append(f"| ({name}: no figures) | {failed} |  | {name} | {run_note} |")
    return rows, failed


def _bench_of(row: str) -> str:
    return row.split(" | ")[-2].strip()


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def table(doc: str, fresh: dict[str, list[str]]) -> str:
    """The document with its table rebuilt: this run's rows, and earlier rows of benches not run now."""
    if START not in doc or END not in doc:
        doc = doc.rstrip("\n") + f"\n\n## The figures of the last run\n\n{START}\n{END}\n"
    head, rest = doc.split(START, 1)
    old, tail = rest.split(END, 1)
    kept = [line for line in old.splitlines() if line.startswith("| ") and not line.startswith(("| figure", "|---"))
            and _bench_of(line) not in fresh]
    rows = sorted([row for name in sorted(fresh) for row in fresh[name]] + kept, key=_bench_of)
    return f"{head}{START}\n{HEADER}\n" + "\n".join(rows) + f"\n{END}{tail}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", metavar="NAME", choices=benches(), help="run only these benches")
    parser.add_argument("--no-write", action="store_true", help="leave docs/benchmarks.md as it is")
    args = parser.parse_args()
    fresh, failures = {}, []
    for name in args.only or benches():
        fresh[name], failed = run(name)
        if failed:
            failures.append(f"{name}: {failed}")
    if not args.no_write:
        DOC.write_text(table(DOC.read_text(encoding="utf-8"), fresh), encoding="utf-8")
        print(f"docs/benchmarks.md: {sum(len(r) for r in fresh.values())} figures written")
    if failures:
        print("failed: " + "; ".join(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
