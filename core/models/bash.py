"""What the Bash analysis found: simple commands, a display tree, and an impact estimate.

These are frozen records.  The display tree is stored flat (`nodes`, children
by index, the root first) so that a command nested ten thousand levels deep
never needs a recursive walk to build, validate, serialise or draw.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

Flag = Literal["ok", "ask", "deny"]
Effect = Literal["read", "edit", "run", "ask", "deny"]
Level = Literal["low", "medium", "high"]
LEVELS: tuple[Level, ...] = ("low", "medium", "high")


class Impact(BaseModel):
    """How much a call could hurt if it went wrong: a level and the reasons for it."""

    model_config = ConfigDict(frozen=True)

    level: Level = "low"
    reasons: tuple[str, ...] = ()
    """Short facts, most serious first, e.g. "deletes recursively: rm -rf build"."""


class Redirect(BaseModel):
    """One redirection of a simple command."""

    model_config = ConfigDict(frozen=True)

    op: str
    """The operator as written: ">", ">>", "&>", "2>&1", "<", "<<", "<<<"..."""
    target: str
    """The target after quote removal, or as written when it is computed at run time."""
    dynamic: bool = False
    writes_file: bool = False
    """Whether it opens a file for writing (not /dev/null, not a descriptor duplication)."""
    start: int
    end: int


class SimpleCommand(BaseModel):
    """One command that would run, wherever it sits (pipeline, substitution, heredoc...)."""

    model_config = ConfigDict(frozen=True)

    argv: tuple[str, ...]
    """Words after quote removal, wrappers (nohup, nice...) removed; a dynamic word as written (cut past
    2,000 characters)."""
    dynamic: tuple[int, ...] = ()
    """Indices into `argv` of words only known at run time; such a command never matches an allow rule."""
    wrappers: tuple[str, ...] = ()
    """Transparent wrapper words that preceded `argv`, e.g. ("nice", "-n", "5")."""
    assignments: tuple[str, ...] = ()
    """Variable assignments before the command or on their own, as written."""
    redirects: tuple[Redirect, ...] = ()
    text: str
    """The command as written (for nested strings such as `bash -c '...'`, the inner text); past 2,000
    characters it is cut and ends with "…" (`start`/`end` still span all of it)."""
    start: int
    end: int
    """Byte offsets into the analysed command line."""
    context: str = ""
    """Where it sits, e.g. "pipeline › command substitution"; empty at the top level."""
    effect: Effect
    """read: only reads; edit: writes files in the workspace; run: needs a rule or a person;
    ask: a form no rule may allow; deny: refused outright."""
    why: str
    writes: tuple[str, ...] = ()
    """Absolute paths it writes or deletes, when they are known."""
    reads: tuple[str, ...] = ()
    """Absolute paths it reads (inside the workspace or not), as far as they can be told from its arguments."""
    beyond_files: bool = False
    """For "run": it needs more than reading known paths outside the workspace (it runs a program, reaches
    the network...), so only a Bash rule may allow it, never a `Read(...)` rule."""
    protected: str | None = None
    """Why a path it writes is protected (asked even in bypass mode), if one is."""
    node: int = 0
    """Index of its node in `BashAnalysis.nodes`."""

    @property
    def static(self) -> bool:
        """Every word is known before it runs."""
        return not self.dynamic

    @property
    def line(self) -> str:
        """The words joined by spaces: what rules are matched against."""
        return " ".join(self.argv)


class DisplayNode(BaseModel):
    """One node of the parsed command as the window draws it."""

    model_config = ConfigDict(frozen=True)

    kind: str
    """"script", "list", "pipeline", "subshell", "command", "word", "redirect", "command substitution"..."""
    text: str
    """A label: the node's source text, cut to a few hundred characters for big containers."""
    start: int
    end: int
    flag: Flag = "ok"
    why: str = ""
    children: tuple[int, ...] = ()
    """Indices into `BashAnalysis.nodes`."""


class BashAnalysis(BaseModel):
    """Everything the policy and the window need to know about one Bash command line."""

    model_config = ConfigDict(frozen=True)

    command: str
    workspace: str = ""
    """The workspace root (real path) the command was judged against."""
    nodes: tuple[DisplayNode, ...] = ()
    """The display tree, flat; `nodes[0]` is the root."""
    commands: tuple[SimpleCommand, ...] = ()
    hidden_character: str | None = None
    """Set when the line holds a control or invisible character; nothing else is analysed then."""
    syntax_error: str | None = None
    """Set when the line (or a string run by `bash -c`/`eval`) cannot be parsed."""
    verdict_hint: Literal["allow", "ask", "deny"]
    """The verdict in the default mode with no rules."""
    reason: str
    impact: Impact = Impact()

    @property
    def read_only(self) -> bool:
        """Every part of the command only reads: it runs beside changing calls, and nothing is captured."""
        return (self.hidden_character is None and self.syntax_error is None and bool(self.commands)
                and all(c.effect == "read" for c in self.commands))
