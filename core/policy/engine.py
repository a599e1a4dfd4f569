"""The policy engine: layered settings, Claude Code rules, modes, and the verdict for each call.

Layers, later ones adding rules and the most specific one that sets a value winning:
  user       <config dir>/settings.toml  ($BELAY_CONFIG_DIR, else platformdirs' user config dir for "belay")
  workspace  <workspace>/.belay/settings.toml
  session    in memory ("Always allow" for this session)

Settings file format (TOML):

    mode = "default"            # default | accept_edits | plan | bypass
    [permissions]
    allow = ["Bash(npm run test:*)", "Read(./src/**)"]
    ask = ["Bash(git push:*)", { rule = "Bash(npm publish:*)", timeout_s = 60, on_timeout = "deny" }]
    deny = ["Bash(curl:*)", "Read(./.env)"]
    [tools]
    disable = ["mcp:*"]         # "*", tool names, "mcp:*", "mcp:<server>"
    [approval]
    timeout_s = 0               # 0 = wait forever
    on_timeout = "deny"         # deny | allow
    [mcp.servers.github]        # user settings only: see core.mcp.settings
    command = "npx"
    args = ["-y", "@modelcontextprotocol/server-github"]

A workspace's file tightens at once but loosens (allow rules, a looser mode,
`on_timeout = "allow"`, `[changes] ignore`) only once the person trusts the
workspace (`core.policy.trust`).

Rule syntax: see `core.policy.rules`.  Deny beats ask beats allow; the order of
the decision is in `core.policy.decide`.  A file that cannot be read is
ignored and reported by `load`; adding or removing a rule rewrites the file
keeping its other settings (but not its comments).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Sequence
from pathlib import Path

from core.mcp.settings import ServerSettings
from core.models.bash import BashAnalysis
from core.models.policy import Mode, OnTimeout, RuleAction, RuleEntry, Scope
from core.paths import settled_realpath
from core.policy.bash import analyse
from core.policy.decide import RuleSet, decide_bash, decide_tool, read_refusal, slow
from core.policy.rules import Rule, parse_rule
from core.policy.settings import ACTIONS, MODES, SettingsLayer, edit_rules, entry_from, load_layer, settings_path
from core.policy.suggest import suggest_for_bash, suggest_for_tool
from core.policy.trust import is_trusted, trust
from core.policy.verdicts import PolicyRequest, Verdict
from core.telemetry.settings import TelemetrySettings
from core.tools.names import ToolName
from core.transcripts.budget import BudgetSettings

__all__ = ["PolicyEngine", "PolicyRequest", "RuleEntry", "Verdict"]
SCOPES: tuple[Scope, ...] = ("user", "workspace", "session")


_Analyses = dict[tuple[str, str, str], BashAnalysis]
ReadFilter = Callable[[Path], str | None]
"""Why reading a path is refused, or None (see `PolicyEngine.read_filter`)."""


class PolicyEngine:
    """Decides allow / ask / deny for each call from the layered rules and the mode."""

    def __init__(self) -> None:
        self._layers: dict[Scope, SettingsLayer] = {scope: SettingsLayer(scope) for scope in SCOPES}
        self._workspace: Path | None = None
        self._session_mode: Mode | None = None
        self._trusted = False
        self._flat: RuleSet | None = None
        """The rules in force, flattened once for every verdict until something changes them (`_changed`)."""
        self._held: str | None = None
        """Why the next call allowed is to be asked about instead (`hold_next`); None: nothing held."""

    def load(self, workspace: str | os.PathLike[str]) -> list[str]:
        """(Re)reads the user and workspace files; returns the problems found, for the console to show."""
        self._workspace = Path(os.path.realpath(workspace))
        self._trusted = is_trusted(self._workspace)
        problems: list[str] = []
        for scope in ("user", "workspace"):
            layer, found = load_layer(scope, settings_path(scope, self._workspace))
            self._layers[scope] = layer
            problems += found
        self._changed()
        return problems

    def bash_overrides(self) -> dict[str, object]:
        """The user's `[bash]` settings (network, sandbox, env_passthrough, limits), unvalidated."""
        return dict(self._layers["user"].bash)

    def mcp_servers(self) -> dict[str, ServerSettings]:
        """The MCP servers to start: the user's `[mcp.servers]` (a workspace's file cannot declare any), less
        those whose tools `[tools] disable` switches off ("*", "mcp:*", "mcp:<server>") in any layer."""
        servers = self._layers["user"].mcp_servers
        return {name: s for name, s in servers.items() if self.disabled_reason(f"mcp__{name}__") is None}

    def budget(self) -> BudgetSettings:
        """`[budget]` of the user settings, tightened by the workspace's (core.transcripts.budget)."""
        return (self._layers["user"].budget or BudgetSettings()).tightened(self._layers["workspace"].budget)

    def hold_next(self, reason: str) -> None:
        """The next call the policy would allow is put to a person instead, saying `reason` (a budget reached)."""
        self._held = reason

    def telemetry(self) -> TelemetrySettings:
        """The user's `[telemetry]` settings (a workspace's file cannot send its calls anywhere)."""
        return self._layers["user"].telemetry or TelemetrySettings()

    def timeouts(self) -> dict[str, float]:
        """`[timeouts]` of the user settings, then the workspace's over them: tool -> seconds (0: none)."""
        return {**self._layers["user"].timeouts, **self._layers["workspace"].timeouts}

    def ignore_patterns(self) -> list[str]:
        """`[changes] ignore` of the user and (trusted) workspace settings: paths reported as changed but not
        stored."""
        return [*self._layers["user"].ignore, *(self._layers["workspace"].ignore if self._trusted else [])]

    @property
    def trusted(self) -> bool:
        """Whether the person trusts this workspace, so its settings file may loosen the rules."""
        return self._trusted

    def trust_workspace(self) -> None:
        """The person trusts this workspace: remembered, and its file's allow rules and mode apply now."""
        if self._workspace is None:
            raise ValueError("load a workspace before trusting it")
        trust(self._workspace)
        self._trusted = True
        self._changed()

    def held_back(self) -> list[str]:
        """What this workspace's settings file would loosen, waiting for the person to trust the workspace."""
        if self._trusted:
            return []
        layer = self._layers["workspace"]
        held = [f"allow rule {e.rule}" for e, _ in layer.entries if e.action == "allow"]
        if layer.mode not in (None, "default", "plan"):
            held.append(f"mode {layer.mode}")
        if layer.on_timeout == "allow":
            held.append('on_timeout = "allow"')
        held += [f"[changes] ignore {pattern}" for pattern in layer.ignore]
        return held

    @property
    def mode(self) -> Mode:
        if self._session_mode is not None:
            return self._session_mode
        return next((mode for s in ("workspace", "user") if (mode := self._layer_mode(s))), "default")

    def _layer_mode(self, scope: Scope) -> Mode | None:
        mode = self._layers[scope].mode
        if scope == "workspace" and not self._trusted and mode not in ("default", "plan"):
            return None  # a looser mode waits for trust
        return mode

    def set_mode(self, mode: str) -> None:
        """Sets the mode for this session (not written to any file)."""
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r}: use default, accept_edits, plan or bypass")
        self._session_mode = MODES[mode]
        self._changed()

    def evaluate(self, request: PolicyRequest) -> Verdict:
        """The verdict for one call.

        A Bash line is analysed afresh each time: what it reads and writes
        depends on the disk (a `cd` target, a symlink a pattern matches),
        which may have changed since the same line was last seen.
        """
        verdict = self._evaluate(request, {})
        held = self._held
        if held is None or verdict.action != "allow":
            return verdict
        self._held = None  # the next call only: the person decides, and then knows
        return verdict.model_copy(update={"action": "ask", "timeout_s": None, "reason": f"{held}; the call is held "
                                          f"for you to decide (the policy alone would allow it: {verdict.reason})"})

    def quick(self, request: PolicyRequest) -> bool:
        """Whether `evaluate(request)` may run on the event loop: every call but a Bash line and an outside
        agent's folder reader, which take a thread (see `core.policy.decide.slow`)."""
        return not slow(request)

    def _evaluate(self, request: PolicyRequest, analyses: _Analyses) -> Verdict:
        disabled = self.disabled_reason(request.tool)
        rules = self._ruleset()
        if disabled is not None:
            return rules.verdict("deny", disabled)
        if request.tool != ToolName.BASH:
            verdict = decide_tool(request, rules)
            if verdict.action == "ask":
                return verdict.model_copy(update={"suggested_rule": suggest_for_tool(request)})
            return verdict
        analysis = _analysis(request, rules.home, analyses)
        if analysis is None:
            return rules.verdict("ask", "the Bash call has no command string", strict=True)
        return decide_bash(analysis, rules, suggest_for_bash(analysis))

    def read_filter(self) -> ReadFilter:
        """A check of the rules in force now: why reading a path is refused (a Read deny rule, a secret), or
        None.  Taken once per call, at its first file (most calls read none through it), used for every file a
        reading tool would open or list."""
        taken: list[RuleSet] = []
        workspace = str(self._workspace) if self._workspace else "/"

        def refusal(path: Path) -> str | None:
            if not taken:
                taken.append(self._ruleset())
            rules = taken[0]
            named = os.path.normpath(path)
            real = settled_realpath(named)
            if real is None:  # a link on the way vanished while it was followed: where it leads is unknown
                return f"{named} changed while it was being resolved"
            return read_refusal(named, rules, workspace) or (read_refusal(real, rules, workspace)
                                                              if real != named else None)
        return refusal

    def suggest_rule(self, request: PolicyRequest) -> str | None:
        """The rule "Always allow" would add for this call; None when no rule could allow it."""
        if request.tool == ToolName.BASH:
            analysis = _analysis(request, self._home(), {})
            return suggest_for_bash(analysis) if analysis is not None else None
        return suggest_for_tool(request)

    def add_rule(self, rule: str, action: RuleAction, scope: Scope) -> str:
        """Adds a rule (validated, normalised) to a layer; returns it as stored."""
        if action not in ACTIONS or scope not in SCOPES:
            raise ValueError(f"action must be one of {ACTIONS} and scope one of {SCOPES}")
        entry, parsed = entry_from(rule, action, scope, None)
        if scope == "workspace" and action == "allow" and not self._trusted:
            self.trust_workspace()  # the person adds it: their own allow rule for this workspace is meant to apply
        if scope == "session":
            layer = self._layers["session"]
            if all((e.rule, e.action) != (entry.rule, action) for e, _ in layer.entries):
                layer.entries.append((entry, parsed))
                self._changed()
            return entry.rule
        path = self._path(scope)
        edit_rules(path, action, entry.rule, add=True)
        self._reload(scope)
        return entry.rule

    def remove_rule(self, rule: str, action: RuleAction, scope: Scope) -> bool:
        """Removes a rule from a layer; False when it was not there."""
        try:
            text = parse_rule(rule).text
        except ValueError:
            text = rule.strip()
        if scope == "session":
            layer = self._layers["session"]
            before = len(layer.entries)
            layer.entries = [(e, r) for e, r in layer.entries if (e.rule, e.action) != (text, action)]
            self._changed()
            return len(layer.entries) != before
        changed = edit_rules(self._path(scope), action, text, add=False)
        self._reload(scope)
        return changed

    def rules(self) -> list[RuleEntry]:
        """Every rule in force, user layer first (a workspace's allow rules only once it is trusted)."""
        return [entry for entry, _ in self._entries()]

    def _entries(self) -> tuple[tuple[RuleEntry, Rule], ...]:
        return tuple(pair for scope in SCOPES for pair in self._layers[scope].entries
                     if self._trusted or scope != "workspace" or pair[0].action != "allow")

    def disabled_reason(self, tool_name: str) -> str | None:
        """Why a tool is switched off by `[tools] disable`, or None when it is enabled."""
        for scope in SCOPES:
            for pattern in self._layers[scope].disable:
                if _disables(pattern, tool_name):
                    where = self._layers[scope].path or "the session"
                    return f"{tool_name} is disabled (tools.disable = {pattern!r} in {where})"
        return None

    def dry_run(self, rule: str, action: RuleAction, requests: Sequence[PolicyRequest]) -> list[int]:
        """Indices of `requests` whose verdict would become `action` with the rule added (nothing is saved)."""
        entry, parsed = entry_from(rule, action, "session", None)
        analyses: _Analyses = {}
        before = [self._evaluate(r, analyses).action for r in requests]
        session = self._layers["session"]
        session.entries.append((entry, parsed))
        self._changed()
        try:
            after = [self._evaluate(r, analyses).action for r in requests]
        finally:
            session.entries.pop()
            self._changed()
        return [i for i, (old, new) in enumerate(zip(before, after)) if old != new and new == action]

    def _ruleset(self) -> RuleSet:
        """The rules in force: flattened again after a change (`_changed`), or when $HOME moved."""
        home = self._home()
        if self._flat is None or self._flat.home != home:
            self._flat = self._flatten(home)
        return self._flat

    def _changed(self) -> None:
        """The layers, the mode or the trust changed: every mutation of them calls this."""
        self._flat = None

    def _flatten(self, home: str) -> RuleSet:
        entries = self._entries()
        timeout = next((self._layers[s].timeout_s for s in ("workspace", "user")
                        if self._layers[s].timeout_s is not None), None)
        on_timeout: OnTimeout = next((t for s in ("workspace", "user") if (t := self._layers[s].on_timeout) and
                                      (s == "user" or self._trusted or t == "deny")), "deny")
        return RuleSet(entries, self.mode, home, timeout, on_timeout)

    def _home(self) -> str:
        return _real_home(os.path.expanduser("~"))

    def _path(self, scope: Scope) -> Path:
        path = settings_path(scope, self._workspace)
        if path is None:
            raise ValueError("load a workspace before changing its rules")
        return path

    def _reload(self, scope: Scope) -> None:
        self._layers[scope], _ = load_layer(scope, self._path(scope))
        self._changed()

    def __repr__(self) -> str:
        counts = {s: len(self._layers[s].entries) for s in SCOPES}
        return f"<PolicyEngine workspace={self._workspace} mode={self.mode} rules={counts}>"


def _analysis(request: PolicyRequest, home: str, analyses: _Analyses) -> BashAnalysis | None:
    """The analysis of a Bash request's command, computed once per `analyses` memo (one dry run)."""
    command = request.args.get("command")
    if not isinstance(command, str):
        return None
    key = (command, os.path.realpath(request.workspace), home)
    if key not in analyses:
        analyses[key] = analyse(*key)
    return analyses[key]


@functools.lru_cache(maxsize=8)
@functools.lru_cache(maxsize=8)
def _real_home(home: str) -> str:
    """The home directory with its links resolved: asked for by every verdict, so resolved once per $HOME."""
    return os.path.realpath(home)


def _disables(pattern: str, tool: str) -> bool:
    if pattern in ("*", tool):
        return True
    if pattern == "mcp:*":
        return tool.startswith("mcp__")
    return pattern.startswith("mcp:") and tool.startswith(f"mcp__{pattern[4:]}__")

