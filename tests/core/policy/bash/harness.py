"""Evaluating command lines the way the tests here need: placeholders filled, one engine, one workspace."""

from __future__ import annotations

from pathlib import Path

from core.models.bash import BashAnalysis
from core.policy.bash import analyse
from core.policy.engine import PolicyEngine, PolicyRequest, Verdict


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
