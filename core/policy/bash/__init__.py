"""Reading a Bash command line the way Bash will, to decide whether a person must see it first.

`analyse(command, workspace)` returns a `BashAnalysis`: every simple command
that would run (wherever it hides), what each reads, writes or runs, a
display tree with the offending parts flagged, and an impact estimate.
"""

from core.policy.bash.analysis import analyse
from core.policy.bash.chars import hidden_character
from core.policy.bash.models import BashAnalysis, DisplayNode, Effect, Flag, Impact, Level, Redirect, SimpleCommand

__all__ = ["BashAnalysis", "DisplayNode", "Effect", "Flag", "Impact", "Level", "Redirect", "SimpleCommand",
           "analyse", "hidden_character"]
