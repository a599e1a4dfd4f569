"""The decision for one call, as pure functions of the call and a snapshot of the rules.

Order (the first step that decides wins):
  1. deny rules, on any part (every simple command of a Bash line, every path of a file tool);
     writes or deletes outside the workspace by Bash; secrets read
  2. plan mode: anything that is not read-only is denied
  3. protected paths written (.git, .belay, .claude, shell start-up files...): ask, in every mode
  4. ask rules
  5. bypass mode: allow (a line naming a protected place and doing more than read asks)
  6. forms no rule may allow (code in strings, wrappers, unparseable or run-time words): ask
  7. read-only, allow rules, accept-edits mode: allow; anything else asks
"""

from __future__ import annotations

import functools
import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TypedDict, Unpack

from core.models.bash import BashAnalysis, Impact, SimpleCommand
from core.models.policy import Mode, OnTimeout, RuleAction, RuleEntry
from core.models.records import VerdictBy
from core.paths import within
from core.policy.folders import denied_below, reads_folders, searches_here
from core.policy.protected import mentioned_protected, proc_secret, protected_reason, secret_reason
from core.policy.rules import EDIT_TOOLS, READ_TOOLS, Rule, loose_forms
from core.policy.suggest import edit_rule_for
from core.policy.verdicts import PolicyRequest, Verdict, VerdictDetails
from core.tools.names import ToolName

SPAWNING_TOOLS = frozenset({ToolName.TASK, ToolName.AGENT})
STOPPING_TOOLS = frozenset({ToolName.KILL_SHELL})
"""Tools that only end what an agent itself started (its background shells): harmless in every mode."""
_PATH_ARGS = ("file_path", "path", "notebook_path")


class _BashDetails(TypedDict):
    """What every verdict on a Bash line carries: its impact and its analysis."""

    impact: Impact
    analysis: BashAnalysis


@dataclass(frozen=True)
class RuleSet:
    """The rules and settings in force, flattened from the layers."""

    entries: tuple[tuple[RuleEntry, Rule], ...]
    mode: Mode
    home: str
    timeout_s: float | None = None
    on_timeout: OnTimeout = "deny"

    def of(self, action: RuleAction) -> tuple[tuple[RuleEntry, Rule], ...]:
        return self._by_action.get(action, ())

    @functools.cached_property
    def _by_action(self) -> dict[str, tuple[tuple[RuleEntry, Rule], ...]]:
        """The entries of each action, in order: a verdict asks for them three or four times."""
        by: dict[str, list[tuple[RuleEntry, Rule]]] = {}
        for entry, rule in self.entries:
            by.setdefault(entry.action, []).append((entry, rule))
        return {action: tuple(pairs) for action, pairs in by.items()}

    def verdict(self, action: RuleAction, reason: str, entry: RuleEntry | None = None, strict: bool = False,
                by: VerdictBy = "policy", *, rule: str | None = None, **kw: Unpack[VerdictDetails]) -> Verdict:
        """A verdict with the approval timeout that applies to it, made by `by`: a rule when one is named (an
        `entry`, or `rule=` for several), else the mode or Belay's built-in policy, as the caller says.

        `strict` marks an ask that no rule may answer (hidden code, protected
        paths): a timeout then always denies, even where `on_timeout = "allow"`,
        since nobody has seen what would run.
        """
        rule = f"{entry.rule} [{entry.scope}]" if entry is not None else rule
        timeout = entry.timeout_s if entry is not None and entry.timeout_s is not None else self.timeout_s
        on_timeout = entry.on_timeout if entry is not None and entry.on_timeout else self.on_timeout
        kw.setdefault("preview", entry is not None and entry.preview)
        return Verdict(action=action, reason=reason, rule=rule, by="rule" if rule is not None else by,
                       timeout_s=timeout or None, on_timeout="deny" if strict else on_timeout, **kw)


def decide_bash(analysis: BashAnalysis, rules: RuleSet, suggestion: str | None) -> Verdict:
    """The verdict for a Bash command line, given its analysis."""
    kw: _BashDetails = {"impact": analysis.impact, "analysis": analysis}
    if analysis.hidden_character is not None:
        return rules.verdict("deny", f"The command {analysis.hidden_character}", **kw)
    everything = next((e for e, r in rules.of("deny") if r.tool == ToolName.BASH and r.kind == "tool"), None)
    if everything is not None:
        return rules.verdict("deny", f"every Bash command matches the deny rule {everything.rule}", everything, **kw)
    workspace = analysis.workspace
    for command in analysis.commands:
        hit = _bash_match(rules.of("deny"), command, workspace, rules.home, loose=True)
        if hit is not None:
            flagged = _reflag(analysis, {command.node: ("deny", f"matches the deny rule {hit.rule}")})
            return rules.verdict("deny", f"`{command.text}` matches the deny rule {hit.rule}", hit,
                                 impact=analysis.impact, analysis=flagged)
    denied = next((c for c in analysis.commands if c.effect == "deny"), None)
    if denied is not None:
        return rules.verdict("deny", denied.why, **kw)
    if rules.mode == "plan" and analysis.verdict_hint != "allow":
        return rules.verdict("deny", f"plan mode: read-only; {analysis.reason}", by="mode", **kw)
    protected = next((c for c in analysis.commands if c.protected), None)
    if protected is not None:
        return rules.verdict("ask", f"`{protected.text}`: {protected.protected}", strict=True, **kw)
    for command in analysis.commands:
        hit = _bash_match(rules.of("ask"), command, workspace, rules.home, loose=True)
        if hit is not None:
            return rules.verdict("ask", f"`{command.text}` matches the ask rule {hit.rule}", hit, **kw)
    if rules.mode == "bypass":
        return _bash_bypass(analysis, rules)
    return _bash_allow(analysis, rules, suggestion)


def _bash_bypass(analysis: BashAnalysis, rules: RuleSet) -> Verdict:
    """Bypass allows everything but a line that names a protected place and does more than read."""
    kw: _BashDetails = {"impact": analysis.impact, "analysis": analysis}
    named = mentioned_protected(analysis.command) if analysis.verdict_hint != "allow" else None
    if named is not None:
        return rules.verdict("ask", f"bypass mode: the command names {named}, a protected place, and Belay "
                                    "cannot tell whether it writes there", strict=True, by="mode", **kw)
    return rules.verdict("allow", "bypass mode", by="mode", **kw)


def _bash_allow(analysis: BashAnalysis, rules: RuleSet, suggestion: str | None) -> Verdict:
    kw: _BashDetails = {"impact": analysis.impact, "analysis": analysis}
    if analysis.syntax_error is not None:
        return rules.verdict("ask", analysis.syntax_error, strict=True, **kw)
    hard = next((c for c in analysis.commands if c.effect == "ask"), None)
    if hard is not None:
        return rules.verdict("ask", hard.why, strict=True, **kw)
    used: list[RuleEntry] = []
    allowed: dict[int, tuple[str, str]] = {}
    for command in analysis.commands:
        if command.effect == "read":
            unsure = _unsure_bash_read(command, rules, analysis.workspace)
            if unsure is not None:
                return rules.verdict("ask", f"`{command.text}`: {unsure}", **kw)
            continue
        hits = _allow_hits(command, rules, analysis.workspace)
        if hits is None:
            why, needed = _why_not_allowed(command, rules, analysis.workspace)
            return rules.verdict("ask", why, suggested_rule=needed or suggestion, **kw)
        used += hits
        allowed[command.node] = ("ok", f"allowed by {', '.join(f'{e.rule} [{e.scope}]' for e in hits)}" if hits
                                 else "accept-edits mode: a write inside the workspace")
    if not used:
        if allowed:
            return rules.verdict("allow", "accept-edits mode: only reads and writes inside the workspace",
                                 by="mode", impact=analysis.impact, analysis=_reflag(analysis, allowed))
        return rules.verdict("allow", analysis.reason, impact=analysis.impact, analysis=analysis)
    names = ", ".join(dict.fromkeys(f"{e.rule} [{e.scope}]" for e in used))
    return rules.verdict("allow", f"allowed by {names}", rule=names, impact=analysis.impact,
                         analysis=_reflag(analysis, allowed), preview=any(e.preview for e in used))


def _unsure_bash_read(command: SimpleCommand, rules: RuleSet, workspace: str) -> str | None:
    """Why a command judged read-only still needs a Bash rule or a person, or None.

    A file with more than one name may be a file outside the workspace under a name inside it; a command
    that reads every file below a folder may read one a Read deny rule covers (`grep -r KEY .` and a
    denied `.env`).  An allow rule for the command answers both.
    """
    bash_rules = [(e, r) for e, r in rules.of("allow") if r.tool == ToolName.BASH]
    if command.static and _bash_match(bash_rules, command, workspace, rules.home) is not None:
        return None
    linked = next(((p, n) for p in command.reads if (n := _links(p)) > 1), None)
    if linked is not None:
        return (f"it reads {linked[0]}, a hard link ({linked[1]} names for one file): it may be a file outside "
                "the workspace under a name inside it")
    if not reads_folders(command.argv):
        return None
    folders = list(command.reads) or ([workspace] if searches_here(command.argv) else [])
    denies = [(f"{e.rule} [{e.scope}]", r) for e, r in rules.of("deny") if r.covers_tool(ToolName.READ)]
    return next((why for f in folders if (why := denied_below(f, denies, workspace, rules.home)) is not None), None)


def _allow_hits(command: SimpleCommand, rules: RuleSet, workspace: str) -> list[RuleEntry] | None:
    """The allow rules (none in accept-edits mode) that together allow one command; None when they do not.

    A Bash rule covers the whole command.  Path rules only cover what is
    about files: every path read outside the workspace by a `Read(...)` rule,
    every path written by an `Edit(...)` rule (or accept-edits mode); a
    command that also runs or reaches something else needs a Bash rule.
    """
    allow = rules.of("allow")
    bash_rules = [(e, r) for e, r in allow if r.tool == ToolName.BASH]
    hit = _bash_match(bash_rules, command, workspace, rules.home) if command.static else None
    if hit is not None:
        return _redirected(hit, command, rules, workspace)
    if command.effect not in ("edit", "run") or command.beyond_files:
        return None
    found: list[RuleEntry] = []
    if command.writes and rules.mode != "accept_edits":
        return None  # an Edit rule allows the file tools, not commands (as in Claude Code)
    for path in (p for p in command.reads if not _inside(p, workspace)):
        entry = next((e for e, r in allow if r.kind == "path" and r.tool == ToolName.READ and
                      r.matches_path(path, workspace, rules.home)), None)
        if entry is None:
            return None
        found.append(entry)
    return list(dict.fromkeys(found))


def _why_not_allowed(command: SimpleCommand, rules: RuleSet, workspace: str) -> tuple[str, str | None]:
    """Why the command is asked about; and, when a Bash rule in force already covers its words, the rule that
    would allow what is still missing (the files the shell writes for it), which "Always allow" then adds: the
    command's own Bash rule would change nothing."""
    bash_rules = [(e, r) for e, r in rules.of("allow") if r.tool == ToolName.BASH]
    hit = _bash_match(bash_rules, command, workspace, rules.home) if command.static else None
    if hit is None:
        return command.why, None
    written = ", ".join(command.writes) or "a file"
    needed = edit_rule_for(command.writes, workspace)
    if needed is None:
        return (f"`{command.text}` is allowed by {hit.rule}, but the shell writes {written} for it, which no Edit "
                "rule may allow (outside the workspace, or protected)"), None
    bare = any(r.tool == ToolName.EDIT and r.kind != "path" for _, r in rules.of("allow"))
    covers = " (the Edit rule in force covers the file tools only)" if bare else ""
    return (f"`{command.text}` is allowed by {hit.rule}, but the shell writes {written} for it: that needs an Edit "
            f"rule naming the path, such as {needed}{covers}, or accept-edits mode"), needed


def _redirected(hit: RuleEntry, command: SimpleCommand, rules: RuleSet, workspace: str) -> list[RuleEntry] | None:
    """A Bash rule covers what the command does, not the files the shell writes for it (`mytool a > out.txt`).

    Those need an Edit rule (or accept-edits mode), as they would from the file tools.
    """
    if not any(r.writes_file for r in command.redirects) or rules.mode == "accept_edits":
        return [hit]
    found = [hit]
    for path in command.writes:
        entry = next((e for e, r in rules.of("allow") if r.kind == "path" and r.tool == ToolName.EDIT and
                      r.matches_path(path, workspace, rules.home)), None)
        if entry is None:
            return None
        found.append(entry)
    return list(dict.fromkeys(found))


def _bash_match(entries: Iterable[tuple[RuleEntry, Rule]], command: SimpleCommand, workspace: str,
                home: str, loose: bool = False) -> RuleEntry | None:
    """The first rule covering the command's words (with or without its wrappers) or its paths.

    Deny and ask rules match `loose`ly: also `/usr/bin/curl` for `curl` and
    `git -C . push` for `git push`, so that spelling a command another way
    does not dodge them.  Allow rules match only the words as written.
    """
    forms = [command.argv] + ([command.wrappers + command.argv] if command.wrappers else [])
    if loose:
        forms += loose_forms(command.argv)
    for entry, rule in entries:
        if rule.tool == ToolName.BASH and any(rule.matches_command(form) for form in forms) and \
                (loose or _as_written(rule, command)):
            return entry
        if rule.kind == "path" and rule.tool in (ToolName.READ, ToolName.EDIT):
            paths = command.reads if rule.tool == ToolName.READ else command.writes
            if any(rule.matches_path(p, workspace, home) or (loose and _below(rule, p, workspace, home))
                   for p in paths):
                return entry
    return None


_SEPARATE = frozenset({"subshell", "group", "command substitution", "process substitution"})
"""Where a command sits that an allow rule does not reach into (Claude Code asks about `(mytool a)`)."""


def _as_written(rule: Rule, command: SimpleCommand) -> bool:
    """Whether an allow rule covers the command as written, not only its words once the shell has read them.

    `npm run "test"`, `X=1 mytool a` and `(mytool a)` are asked by Claude Code under `Bash(npm run test:*)`
    and `Bash(mytool:*)`: its rules match the command line's text.  Belay matches the words (so quoting
    cannot dodge a deny rule) and, for allow rules, the text as well.
    """
    if rule.kind == "tool":
        return True
    if command.assignments or any(part in _SEPARATE for part in command.context.split(" › ")):
        return False
    written = command.text.split()
    if rule.kind in ("prefix", "exact"):
        if any(c in (rule.specifier or "") for c in "\"'\\"):
            return True  # the rule spells out a quoted name itself (as "Always allow" suggests it)
        start = len(command.wrappers)
        return tuple(written[start:start + len(rule.words)]) == rule.words or \
            tuple(written[:len(rule.words)]) == rule.words
    return not any(c in command.text for c in "\"'\\")


def _below(rule: Rule, path: str, workspace: str, home: str) -> bool:
    """Whether a deny or ask rule covers what is inside a folder a command reads or writes (`ls secrets`
    under `Read(./secrets/**)`, `cp a src/` under `Edit(./src/**)`)."""
    return os.path.isdir(path) and rule.matches_path(os.path.join(path, "x"), workspace, home)


def _reflag(analysis: BashAnalysis, flags: dict[int, tuple[str, str]]) -> BashAnalysis:
    if not flags:
        return analysis
    nodes = list(analysis.nodes)
    for index, (flag, why) in flags.items():
        nodes[index] = nodes[index].model_copy(update={"flag": flag, "why": why})
    return analysis.model_copy(update={"nodes": tuple(nodes)})


def decide_tool(request: PolicyRequest, rules: RuleSet) -> Verdict:
    """The verdict for any tool but Bash."""
    tool, workspace = request.tool, real_workspace(os.fspath(request.workspace))
    paths = candidate_paths(request)
    writes = tool in EDIT_TOOLS
    reads = tool in READ_TOOLS or request.annotations.read_only or tool in SPAWNING_TOOLS | STOPPING_TOOLS
    impact = _impact(tool, paths, workspace, writes, reads)
    hit = _tool_match(rules.of("deny"), request, paths, workspace, rules.home)
    if hit is not None:
        return rules.verdict("deny", f"{tool} matches the deny rule {hit.rule}", hit, impact=impact)
    hidden = next(((e, p) for p in paths for e, r in rules.of("deny") if writes and r.kind == "path" and
                   r.tool == ToolName.READ and r.matches_path(p, workspace, rules.home)), None) if writes else None
    if hidden is not None:
        return rules.verdict("deny", f"{hidden[1]} is covered by the Read deny rule {hidden[0].rule}: it is not "
                                     "written either", hidden[0], impact=impact)
    secret = next((why for p in paths if (why := secret_reason(p, rules.home)) is not None and
                   _refused_here(request, p, workspace)), None)
    if secret is not None and not writes:
        return rules.verdict("deny", secret, impact=impact)
    if rules.mode == "plan" and not reads:
        return rules.verdict("deny", f"plan mode: read-only; {tool} changes things", by="mode", impact=impact)
    guarded = next((r for r in (protected_reason(p) for p in paths) if r), None) if writes else None
    if guarded is not None:
        return rules.verdict("ask", guarded, strict=True, impact=impact)
    hit = _tool_match(rules.of("ask"), request, paths, workspace, rules.home)
    if hit is not None:
        return rules.verdict("ask", f"{tool} matches the ask rule {hit.rule}", hit, impact=impact)
    return _tool_allow(request, rules, paths, workspace, writes, reads, impact)


def _tool_allow(request: PolicyRequest, rules: RuleSet, paths: list[str], workspace: str, writes: bool,
                reads: bool, impact: Impact) -> Verdict:
    tool = request.tool
    if rules.mode == "bypass":
        return rules.verdict("allow", "bypass mode", by="mode", impact=impact)
    if tool in SPAWNING_TOOLS:
        return rules.verdict("allow", "a sub-agent's own calls are checked one by one", impact=impact)
    if tool in STOPPING_TOOLS:
        return rules.verdict("allow", f"{tool} only stops a background shell the agent started", impact=impact)
    outside = [p for p in paths if not _inside(p, workspace)]
    hit = _tool_match(rules.of("allow"), request, paths, workspace, rules.home)
    if reads and not writes and not hit:
        unsure = _unsure_read(request, paths, outside, rules)
        if unsure is not None:
            return rules.verdict("ask", unsure, impact=impact)
        why = f"{tool} only reads" + (f"; {tool} itself refuses {outside[0]}, outside the workspace"
                                      if outside else "")
        return rules.verdict("allow", why, impact=impact)
    if writes and outside:
        return rules.verdict("ask", f"{tool} would write {outside[0]}, outside the workspace", impact=impact)
    if writes and rules.mode == "accept_edits" and paths:
        return rules.verdict("allow", "accept-edits mode: a write inside the workspace", by="mode", impact=impact)
    if hit is not None:
        return rules.verdict("allow", f"allowed by {hit.rule} [{hit.scope}]", hit, impact=impact)
    what = "changes files in the workspace" if writes else "is not known to be read-only"
    return rules.verdict("ask", f"{tool} {what}", impact=impact)


def _refused_here(request: PolicyRequest, path: str, workspace: str) -> bool:
    """Whether the policy itself must refuse a secret, rather than leave it to the tool.

    Belay's own reading tools refuse every path outside the workspace with an outside-workspace error
    (the agent learns the rule, not a verdict); a secret inside the workspace, a process's `/proc`
    entries, and every path an outside agent's own tool or another tool would read are denied here.
    """
    return request.outside_agent or request.tool not in READ_TOOLS or _inside(path, workspace) or \
        proc_secret(path)


_FOLDER_READERS = frozenset({ToolName.GREP, ToolName.GLOB, ToolName.LS})
"""An outside agent's tools that read or list everything below a folder."""


def slow(request: PolicyRequest) -> bool:
    """Whether deciding `request` may take long: a Bash line (parsed, its words and paths looked up on disk) or
    an outside agent's folder reader (the folder walked against the Read deny rules, see `_unsure_read`).
    Any other call is a few rule matches and a stat per path it names, quick enough for the event loop."""
    return request.tool == ToolName.BASH or (request.outside_agent and request.tool in _FOLDER_READERS)


def _unsure_read(request: PolicyRequest, paths: list[str], outside: list[str], rules: RuleSet) -> str | None:
    """Why a read-only call still needs a rule or a person, or None.

    A tool that reaches the world (WebFetch, WebSearch, an MCP server's tool) reads what no rule here
    has seen: only an allow rule for it (a domain, the tool) lets it run.  An outside agent's own Read of
    a path outside the workspace is not refused by its tool, as Belay's is.  A file with more than one
    name (a hard link) may be a file outside the workspace under a name inside it.
    """
    tool = request.tool
    if request.annotations.open_world:
        return f"{tool} reaches outside this machine's files (the network, another program)"
    if request.outside_agent and outside:
        return f"{tool} reads {outside[0]}, outside the workspace"
    if request.outside_agent and tool in _FOLDER_READERS:  # its own tool shows what it finds, unfiltered
        workspace = os.path.realpath(request.workspace)
        denies = [(f"{e.rule} [{e.scope}]", r) for e, r in rules.of("deny") if r.covers_tool(ToolName.READ)]
        folders = paths or [workspace]
        found = next((why for f in folders if (why := denied_below(f, denies, workspace, rules.home))), None)
        if found is not None:
            return f"{tool}: {found}"
    linked = next(((p, n) for p in paths if (n := _links(p)) > 1), None)
    if linked is not None:
        return (f"{linked[0]} is a hard link ({linked[1]} names for one file): it may be a file outside "
                "the workspace under a name inside it")
    return None


def _links(path: str) -> int:
    """How many names a regular file has (0 for anything else, or nothing there)."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return 0
    return st.st_nlink if stat.S_ISREG(st.st_mode) else 0


def _tool_match(entries: Iterable[tuple[RuleEntry, Rule]], request: PolicyRequest, paths: list[str],
                workspace: str, home: str) -> RuleEntry | None:
    """The first rule covering a call; an allow rule's domain is its host alone (as Claude Code reads it),
    a deny or ask rule's also covers the host's subdomains."""
    for entry, rule in entries:
        if not rule.covers_tool(request.tool):
            continue
        if rule.kind in ("tool", "server"):
            return entry
        if rule.kind == "path" and any(rule.matches_path(p, workspace, home) for p in paths):
            return entry
        url = request.args.get("url")
        if rule.kind == "domain" and isinstance(url, str) and rule.matches_url(url, entry.action != "allow"):
            return entry
    return None


def read_refusal(path: str, rules: RuleSet, workspace: str) -> str | None:
    """Why reading `path` (absolute, normalised) is refused: a Read deny rule, or a secret; None when it is not.

    For tools that open or list many files at once (Grep, Glob, LS, NotebookRead): each file they would
    show is checked, so a deny rule on `.env` or `secrets/**` holds whatever directory they were given.
    """
    hit = next((e for e, r in rules.of("deny") if r.covers_tool(ToolName.READ) and r.kind in ("tool", "path")
                and r.matches_path(path, workspace, rules.home)), None)
    if hit is not None:
        return f"{path} matches the deny rule {hit.rule}"
    if _links(path) > 1:
        return f"{path} is a hard link: it may be a file outside the workspace under a name inside it"
    return secret_reason(path, rules.home)


@functools.lru_cache(maxsize=64)
def real_workspace(root: str) -> str:
    """A workspace's root with its links resolved, asked for by every verdict: resolved once (a console's root is
    resolved when it opens and does not move under it)."""
    return os.path.realpath(root)


def candidate_paths(request: PolicyRequest) -> list[str]:
    """The resolved paths, and the paths as the agent wrote them (a symlink must not dodge a deny rule)."""
    found = [os.path.normpath(p) for p in request.paths]
    for key in _PATH_ARGS:
        value = request.args.get(key)
        if isinstance(value, str) and value and "\0" not in value:
            text = os.path.expanduser(value)
            if os.path.isabs(text):
                found.append(os.path.normpath(text))
    return list(dict.fromkeys(found))


def _inside(path: str, workspace: str) -> bool:
    return os.path.isabs(path) and within(path, workspace)


_ONLY_READS = Impact(level="low", reasons=("only reads",))


def _impact(tool: str, paths: list[str], workspace: str, writes: bool, reads: bool) -> Impact:
    if writes and any(protected_reason(p) for p in paths):
        return Impact(level="high", reasons=(f"writes a protected path: {paths[0]}",))
    if writes and any(not _inside(p, workspace) for p in paths):
        return Impact(level="high", reasons=(f"writes outside the workspace: {paths[0]}",))
    if writes:
        return Impact(level="medium", reasons=tuple(f"writes {p}" for p in paths) or (f"{tool} writes files",))
    if reads:
        return _ONLY_READS
    return Impact(level="medium", reasons=(f"{tool} may change things outside Belay's view",))
