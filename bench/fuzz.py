"""Ten thousand generated hostile calls through one console, a person approving everything it asks.

The calls are tests/integration/fuzzing.py's (every file tool and harmless Bash; wrong types, missing and extra
fields, malformed JSON, huge strings, NUL bytes, lone surrogates, odd Unicode, `..` and absolute paths, links
leading out of the workspace), eight at a time.  Figures:
- escapes: exceptions out of Console.call (the target is 0);
- outside writes: files created, removed or changed beside the workspace, in HOME, or through the links;
- RSS growth: what the console's process grew by over the calls (the timeline and journal keep every call);
- throughput: calls per second end to end (validation, policy, approval, tool, change capture, journal).
Also checked, and printed when not clean: every call ended in the journal as the agent was told, every blob
a change names exists.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.integration import fuzzing  # noqa: E402

CALLS = int(os.environ.get("BELAY_FUZZ_CALLS", "10000"))
SEED = int(os.environ.get("BELAY_FUZZ_SEED", "1"))
CONCURRENCY = 8


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        lay = fuzzing.make_layout(Path(tmp))
        os.environ["HOME"] = str(lay.home)  # nothing the calls do may reach the real one
        os.environ["BELAY_CONFIG_DIR"] = str(lay.state / "config")
        report = asyncio.run(fuzzing.run_fuzz(lay, SEED, CALLS, concurrency=CONCURRENCY))
    for problem in report.problems()[:20]:
        print(f"PROBLEM {problem[:400]!a}")
    done = sum(n for key, n in report.statuses.items() if ":done" in key)
    print(f"RESULT fuzz_escapes = {len(report.escapes)} escapes ({report.calls} calls)")
    print(f"RESULT fuzz_outside_writes = {len(report.outside_writes)} files ({report.calls} calls)")
    print(f"RESULT fuzz_rss_growth = {report.rss_after_mb - report.rss_before_mb:.1f} MB "
          f"(RSS before {report.rss_before_mb:.0f} MB)")
    print(f"RESULT fuzz_calls_per_s = {report.calls / report.seconds:.0f} calls/s ({report.calls} calls in "
          f"{report.seconds:.1f} s, {done} of them done, {CONCURRENCY} at a time, seed {SEED})")
    if report.problems():
        sys.exit(1)


if __name__ == "__main__":
    main()
