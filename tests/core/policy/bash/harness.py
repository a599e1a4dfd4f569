"""Evaluating command lines the way the tests here need: placeholders filled, one engine, one workspace."""

from __future__ import annotations

from pathlib import Path

from core.models.bash import BashAnalysis
from core.policy.bash import analyse
from core.policy.bash.findings import Env
from core.policy.bash.words import WordValue
from core.policy.engine import PolicyEngine, PolicyRequest, Verdict


def fill(line: str, outside: Path, home: Path) -> str:
    """A test's command line with `{OUT}` (a directory outside the workspace) and `{HOME}` filled in."""
    return line.replace("{OUT}", str(outside)).replace("{HOME}", str(home))


def word(text: str) -> WordValue:
    """One word as the judge gets it from the walk: `$...` is known only at run time."""
    return WordValue(text, text, 0, 0, frozenset({"variable"}) if text.startswith("$") else frozenset())


def env_at(ws: Path, home: Path) -> Env:
    """Where the judge takes a command to run: the workspace root, with this home."""
    return Env(ws.resolve(), str(home), ws.resolve())


class Bash:
    """Evaluates command lines against one engine and workspace, with `{WS}`, `{OUT}` and `{HOME}` filled in."""

    def __init__(self, engine: PolicyEngine, ws: Path, outside: Path, home: Path) -> None:
        self.engine, self.ws, self.outside, self.home = engine, ws, outside, home

    def text(self, command: str) -> str:
        return command.replace("{WS}", str(self.ws)).replace("{OUT}", str(self.outside)).replace("{HOME}",
                                                                                                   str(self.home))

    def __call__(self, command: str) -> Verdict:
        return self.engine.evaluate(PolicyRequest("Bash", {"command": self.text(command)}, self.ws))

    def analysis(self, command: str) -> BashAnalysis:
        return analyse(self.text(command), self.ws, str(self.home))

    def rules(self, allow: tuple[str, ...] = (), deny: tuple[str, ...] = (), ask: tuple[str, ...] = ()) -> Bash:
        """Adds session rules; returns itself so a test reads `bash.rules(allow=(...,))("ls")`."""
        for action, rules in (("allow", allow), ("deny", deny), ("ask", ask)):
            for rule in rules:
                self.engine.add_rule(rule, action, "session")  # type: ignore[arg-type]
        return self
