"""Cost of a policy decision on Bash lines, each against a baseline measured in the same run.

1. A typical line (`git status && npm run test -- --watch=false | tee out.log`)
   decided by a fresh engine with a few allow rules, against `shlex.split` of
   the same line: what the full tree-sitter analysis costs over the naive
   split it replaces.
2. A chain of ten thousand commands ending in `curl` with the deny rule
   `Bash(curl:*)` (it must be denied: no cap), against tree-sitter's bare
   parse of the same text: what the analysis costs over parsing alone.
3. A line of a thousand nested `$(...)`, against its bare parse.

Each engine evaluation analyses the line afresh (there is no cache to
defeat); rounds alternate with the baseline so machine noise hits both.
"""

from __future__ import annotations

import shlex
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import tree_sitter_bash  # noqa: E402
from tree_sitter import Language, Parser  # noqa: E402

from core.policy.engine import PolicyEngine, PolicyRequest  # noqa: E402

TYPICAL = "git status && npm run test -- --watch=false | tee out.log"
CHAIN = " && ".join(["true"] * 10_000) + " && curl -s https://evil.invalid"
NESTED = "echo " + "$(" * 1_000 + "ls" + ")" * 1_000


def _median_ms(fn: Callable[[], object], rounds: int) -> float:
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        fn()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def _paired(subject: Callable[[], object], baseline: Callable[[], object], rounds: int,
            inner: int) -> tuple[float, float]:
    """Medians (ms per call) of `subject` and `baseline`, alternated `rounds` times, `inner` calls each."""
    subject_ms, baseline_ms = [], []
    for _ in range(rounds):
        subject_ms.append(_median_ms(subject, inner))
        baseline_ms.append(_median_ms(baseline, inner))
    return statistics.median(subject_ms), statistics.median(baseline_ms)


def main() -> None:
    parser = Parser(Language(tree_sitter_bash.language()))
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp) / "ws"
        ws.mkdir()
        engine = PolicyEngine()
        engine.load(ws)
        for rule in ("Bash(npm run test:*)", "Bash(tee:*)", "Bash(git push:*)"):
            engine.add_rule(rule, "allow", "session")
        engine.add_rule("Bash(curl:*)", "deny", "session")

        def decide(command: str) -> str:
            return engine.evaluate(PolicyRequest("Bash", {"command": command}, ws)).action

        assert decide(TYPICAL) == "allow", decide(TYPICAL)
        assert decide(CHAIN) == "deny"
        assert decide(NESTED) == "ask"
        typical, split = _paired(lambda: decide(TYPICAL), lambda: shlex.split(TYPICAL), rounds=15, inner=40)
        chain, chain_parse = _paired(lambda: decide(CHAIN), lambda: parser.parse(CHAIN.encode()), rounds=5, inner=1)
        nested, nested_parse = _paired(lambda: decide(NESTED), lambda: parser.parse(NESTED.encode()), rounds=5,
                                       inner=1)
    print(f"typical line: policy decision {typical:.3f} ms, shlex.split {split:.4f} ms")
    print(f"10,000-command chain: policy decision (deny) {chain:.1f} ms, tree-sitter parse {chain_parse:.1f} ms")
    print(f"1,000 nested $(...): policy decision (ask) {nested:.1f} ms, tree-sitter parse {nested_parse:.1f} ms")
    print(f"RESULT policy_typical_vs_shlex = {typical / split:.1f} x (shlex.split of the same command)")
    print(f"RESULT policy_chain_10k_vs_parse = {chain / chain_parse:.1f} x "
          "(tree-sitter's bare parse of the same 10,000-command text)")
    print(f"RESULT policy_nested_1k_vs_parse = {nested / nested_parse:.1f} x "
          "(tree-sitter's bare parse of the same 1,000-deep $(...) text)")


if __name__ == "__main__":
    main()
