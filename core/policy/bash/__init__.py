"""Reading a Bash command line the way Bash will, to decide whether a person must see it first.

`analyse(command, workspace)` returns a `BashAnalysis` (core.models.bash):
every simple command that would run (wherever it hides), what each reads,
writes or runs, a display tree with the offending parts flagged, and an
impact estimate.
"""

from core.policy.bash.analysis import analyse
from core.policy.bash.chars import hidden_character

__all__ = ["analyse", "hidden_character"]
