"""Claude Code as the oracle of its own permission rules: the real CLI and Belay's policy judge the same calls.

A `RuleSet` is one settings file's ``permissions`` (allow / ask / deny rules in Claude Code's syntax)
and the calls to judge under it.  `claude_verdicts` runs the CLI once per rule set, in print mode
(``-p``) and the default permission mode, with the rules passed by ``--settings``: the scripted model
(fake_anthropic.py) emits the calls one per turn, and the tool_result the CLI sends back for each says
what Claude Code made of it (`classify`): the tool ran (allow), Claude Code wanted a person's approval
(ask), or a rule refused it (deny).  An ask is seen directly: the CLI is given a permission prompt
tool (``--permission-prompt-tool``, the stub MCP server's ``person``) that it consults exactly when it
would ask, and that refuses with `ASKED_MARK`; the CLI's own words for an ask in print mode without
such a tool (`ASKED`) count too.  `belay_verdict` asks Belay's policy about the same call as its hooks
would (`core.outside.intercept`: the agent's own tool, ``outside_agent=True``).  A `Row` pairs the two;
Belay may be stricter than Claude Code (deny > ask > allow), never looser.

Allowed calls really run, so they run somewhere harmless: a fresh temporary workspace and HOME per rule
set, stub ``npm`` and ``mytool`` commands first on PATH, an HTTP(S) proxy on a closed local port (a
WebFetch that is let through fails there), and a stub MCP server (`MCP_SERVER`) whose tools only answer.

The table itself is in test_rules_oracle.py; RULES_ORACLE.md says how to read a failure.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from core.models.policy import RuleAction
from core.outside.intercept import HARMLESS
from core.paths import resolved_paths
from core.policy.bash import analyse
from core.policy.decide import RuleSet as PolicyRules
from core.policy.decide import decide_bash, decide_tool
from core.policy.settings import entry_from
from core.policy.verdicts import PolicyRequest, Verdict
from core.tools.base import Annotations
from core.tools.catalog import default_tools
from tests.integration.fake_anthropic import (
    ModelRequest,
    ScriptedModel,
    ToolCall,
    Turn,
    answers,
    bundled_cli,
    result_text,
)

Action = Literal["allow", "ask", "deny"]
STRICTNESS: dict[str, int] = {"allow": 0, "ask": 1, "deny": 2}
"""deny beats ask beats allow: a higher number is stricter."""
CLI_TIMEOUT_S = 120.0
WORKERS = 3
"""Rule sets judged at once (each is one CLI process and one fake model server)."""

ASKED_MARK = "oracle: a person was asked"
"""What the permission prompt tool answers; in a tool_result it means Claude Code would have asked."""
# What the CLI tells the model, found by running it (2.1.x): a rule's refusal, and (in print mode
# without a prompt tool) a call that needed a person's approval.  Checked in this order.
DENIED = ("has been denied", "denied by your permission settings", "denied access to",
          "covered by a read deny rule", "blocked by a deny rule")
ASKED = ("requires approval", "require approval", "needs approval", "haven't granted it yet", "was blocked. for security",
         "can't be checked before it runs", "cannot be auto-allowed", "approving runs the whole script")
# Words of a refusal that neither list explains: such an answer is not taken for a run.
SUSPECT = ("<tool_use_error>", "approv", "permission", "denied", "blocked", "not allowed", "can't be checked",
           "cannot be")

MCP_SERVER = textwrap.dedent('''
    import json, sys
    ASKED = {"behavior": "deny", "message": "%s"}
    TOOLS = [{"name": n, "description": "answers " + n, "inputSchema": {"type": "object", "properties": {}}}
             for n in ("tool", "other", "person")]
    for line in sys.stdin:
        message = json.loads(line)
        method, ident = message.get("method"), message.get("id")
        if ident is None:
            continue
        if method == "initialize":
            result = {"protocolVersion": message["params"]["protocolVersion"], "capabilities": {"tools": {}},
                      "serverInfo": {"name": "srv", "version": "1"}}
        elif method == "tools/list":
            result = {"tools": TOOLS}
        elif method == "tools/call":
            name = message["params"]["name"]
            text = json.dumps(ASKED) if name == "person" else "ran " + name
            result = {"content": [{"type": "text", "text": text}]}
        elif method == "ping":
            result = {}
        else:
            reply = {"jsonrpc": "2.0", "id": ident, "error": {"code": -32601, "message": "no " + str(method)}}
            print(json.dumps(reply), flush=True)
            continue
        print(json.dumps({"jsonrpc": "2.0", "id": ident, "result": result}), flush=True)
''' % ASKED_MARK)
"""A stdio MCP server ``srv``: ``tool`` and ``other`` only say they ran; ``person`` is the permission
prompt tool, refusing every call it is asked about with `ASKED_MARK`."""
PROMPT_TOOL = "mcp__srv__person"

_STUB = '#!/bin/sh\necho "$(basename "$0") $*"\n'
"""`npm` and `mytool`: commands that only print their arguments."""


@dataclass(frozen=True)
class Call:
    """One tool call the model makes; in `input`, ``{ws}`` and ``{home}`` stand for the directories."""

    tool: str
    input: Mapping[str, Any]
    setup: bool = False
    """Made only so that a later call can run (the Read an Edit needs first): not compared."""

    def filled(self, ws: Path, home: Path) -> dict[str, Any]:
        return {k: v.replace("{ws}", str(ws)).replace("{home}", str(home)) if isinstance(v, str) else v
                for k, v in self.input.items()}

    @property
    def shown(self) -> str:
        """The call as a table shows it: the command, the path or the URL, with the placeholders."""
        what = next((self.input[k] for k in ("command", "file_path", "url") if k in self.input), None)
        if what is None:
            return self.tool
        return f"{self.tool}: " + what.replace("\n", "\\n").replace("\t", "\\t")  # one line per call


def bash(command: str) -> Call:
    return Call("Bash", {"command": command, "description": "oracle case"})


def read(path: str, setup: bool = False) -> Call:
    return Call("Read", {"file_path": path}, setup)


def write(path: str) -> Call:
    return Call("Write", {"file_path": path, "content": "written by the oracle\n"})


def edit(path: str) -> Call:
    return Call("Edit", {"file_path": path, "old_string": "old", "new_string": "new"})


def fetch(url: str) -> Call:
    return Call("WebFetch", {"url": url, "prompt": "summarise"})


def mcp(tool: str) -> Call:
    return Call(tool, {})


@dataclass(frozen=True)
class RuleSet:
    """The rules of one settings file, and the calls judged under them (one CLI session)."""

    name: str
    allow: tuple[str, ...] = ()
    ask: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()
    calls: tuple[Call, ...] = ()

    @property
    def rules(self) -> list[tuple[RuleAction, str]]:
        return [("allow", r) for r in self.allow] + [("ask", r) for r in self.ask] + [("deny", r) for r in self.deny]

    @property
    def shown(self) -> str:
        return "; ".join(f"{action} {rule}" for action, rule in self.rules) or "(no rules)"


@dataclass(frozen=True)
class Observed:
    """What the CLI told the model about one call."""

    verdict: Action | None
    """None: the answer is none of the three (the case is broken: fix it, do not count it)."""
    text: str


@dataclass(frozen=True)
class Row:
    """One call judged by both."""

    rules: RuleSet
    call: Call
    claude: Observed
    belay: Verdict

    @property
    def outcome(self) -> Literal["agreed", "stricter", "looser", "unclassified"]:
        if self.claude.verdict is None:
            return "unclassified"
        difference = STRICTNESS[self.belay.action] - STRICTNESS[self.claude.verdict]
        return "agreed" if difference == 0 else "stricter" if difference > 0 else "looser"

    def __str__(self) -> str:
        return (f"[{self.rules.name}] {self.rules.shown}\n    {self.call.shown}\n"
                f"    Claude Code: {self.claude.verdict or '?'} ({_short(self.claude.text)})\n"
                f"    Belay:       {self.belay.action} ({_short(self.belay.reason)})")


def classify(block: Mapping[str, Any] | None, tool: str, offered: Sequence[str]) -> Observed:
    """Claude Code's verdict from the tool_result it sent back for a call.

    A tool a deny rule names whole (``mcp__srv__other``) is not offered to the model at all: calling
    it gets "No such tool available".  That counts as a deny only when its server's other tools were
    offered (the server did start), so a server that failed cannot pass for a rule.  `offered`: the
    tools the model was offered at the start of the session.
    """
    if block is None:
        return Observed(None, "(no tool_result came back)")
    text = result_text(block)
    lowered = text.lower()
    if any(marker in lowered for marker in DENIED) or (
            "no such tool available" in lowered and tool not in offered and _server_offered(tool, offered)):
        return Observed("deny", text)
    if ASKED_MARK in text or any(marker in lowered for marker in ASKED):
        return Observed("ask", text)
    if any(marker in lowered for marker in SUSPECT):
        return Observed(None, text)
    return Observed("allow", text)  # the tool ran (its own failure, e.g. a missing file, is still a run)


# -- the sandbox ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Sandbox:
    """A fresh workspace, HOME and stub commands for one session; removed afterwards."""

    root: Path

    @property
    def ws(self) -> Path:
        return self.root / "ws"

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def bin(self) -> Path:
        return self.root / "bin"

    def build(self) -> Sandbox:
        files = {"ws/src/a.txt": "old\n", "ws/src/b.txt": "old\n", "ws/docs/e.txt": "old\n",
                 "ws/secrets/k.txt": "key\n", "ws/.env": "TOKEN=1\n", "home/h.txt": "home\n"}
        for relative, content in files.items():
            (self.root / relative).parent.mkdir(parents=True, exist_ok=True)
            (self.root / relative).write_text(content)
        self.bin.mkdir()
        for name in ("npm", "mytool"):
            (self.bin / name).write_text(_STUB)
            (self.bin / name).chmod(0o755)
        return self


def _environment(model: ScriptedModel, box: Sandbox) -> dict[str, str]:
    env = model.env(home=box.home)
    closed = "http://127.0.0.1:9"  # the discard port: nothing listens, so any fetch past a rule fails at once
    env.update({"PATH": f"{box.bin}{os.pathsep}{env.get('PATH', '')}", "HTTP_PROXY": closed, "HTTPS_PROXY": closed,
                "http_proxy": closed, "https_proxy": closed, "NO_PROXY": "127.0.0.1,localhost",
                "no_proxy": "127.0.0.1,localhost"})
    return env


def _turns(calls: Sequence[dict[str, Any]], names: Sequence[str]) -> list[Turn]:
    """One tool call per turn, each turn served only once the previous call's result came back."""
    turns, previous = [], None
    for i, (name, args) in enumerate(zip(names, calls)):
        turns.append(Turn(tools=[ToolCall(name, args, id=f"oracle_{i:03d}")],
                          when=answers(previous) if previous else None))
        previous = f"oracle_{i:03d}"
    return turns + [Turn(text="Done.", when=answers(previous) if previous else None)]


def claude_verdicts(rules: RuleSet, box: Sandbox) -> list[Observed]:
    """Claude Code's verdict on each of `rules.calls`, from one CLI session in `box`."""
    settings = box.root / "settings.json"
    settings.write_text(json.dumps({"permissions": {action: [r for a, r in rules.rules if a == action]
                                                    for action in ("allow", "ask", "deny")}}))
    config = box.root / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"srv": {"command": sys.executable, "args": ["-c", MCP_SERVER]}}}))
    command = [str(bundled_cli()), "-p", "Do the scripted calls.", "--output-format", "stream-json", "--verbose",
               "--settings", str(settings), "--mcp-config", str(config), "--strict-mcp-config",
               "--permission-prompt-tool", PROMPT_TOOL]
    calls = [c.filled(box.ws, box.home) for c in rules.calls]
    with ScriptedModel(_turns(calls, [c.tool for c in rules.calls])) as model:
        done = subprocess.run(command, cwd=box.ws, env=_environment(model, box), stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=CLI_TIMEOUT_S, check=False)
        if done.returncode != 0 or model.unscripted:
            raise AssertionError(f"[{rules.name}] the CLI exited {done.returncode} with "
                                 f"{len(model.unscripted)} unscripted requests:\n{done.stderr[-2000:]}"
                                 f"{done.stdout[-2000:]}")
        requests = model.message_requests()
    offered = _offered(requests[0]) if requests else []
    return [classify(next((r.tool_result(f"oracle_{i:03d}") for r in requests if r.tool_result(f"oracle_{i:03d}")),
                          None), call.tool, offered) for i, call in enumerate(rules.calls)]


# -- Belay's side --------------------------------------------------------------------------------


_ANNOTATIONS = {**{tool.name: tool.annotations for tool in default_tools()}, **HARMLESS}
"""What the interceptor knows of the agent's tools: Belay's own of the same name, else HARMLESS."""


def policy_rules(rules: RuleSet, home: Path) -> PolicyRules:
    """The rule set as Belay's policy holds it: the user layer (always in force, trusted or not), the default mode."""
    entries = tuple(entry_from(rule, action, "user", None) for action, rule in rules.rules)
    return PolicyRules(entries=entries, mode="default", home=os.path.realpath(home))


def belay_verdict(rules: PolicyRules, tool: str, args: dict[str, Any], ws: Path) -> Verdict:
    """Belay's verdict on a Claude Code call arriving by its hooks (as `PolicyEngine.evaluate` decides it)."""
    if tool == "Bash":
        return decide_bash(analyse(args["command"], ws, rules.home), rules, None)
    request = PolicyRequest(tool=tool, args=args, workspace=ws, annotations=_ANNOTATIONS.get(tool, Annotations()),
                            paths=resolved_paths(args), outside_agent=True)
    return decide_tool(request, rules)


# -- both ----------------------------------------------------------------------------------------


def judge(rules: RuleSet) -> list[Row]:
    """Every call of a rule set, judged by Claude Code and by Belay (Belay first: the calls change the disk)."""
    box = Sandbox(Path(os.path.realpath(tempfile.mkdtemp(prefix="rules-oracle-")))).build()  # one spelling for both
    try:
        policy = policy_rules(rules, box.home)
        belay = [belay_verdict(policy, c.tool, c.filled(box.ws, box.home), box.ws) for c in rules.calls]
        claude = claude_verdicts(rules, box)
    finally:
        shutil.rmtree(box.root, ignore_errors=True)
    return [Row(rules, call, seen, verdict) for call, seen, verdict in zip(rules.calls, claude, belay)
            if not call.setup]


def judge_all(table: Sequence[RuleSet]) -> list[Row]:
    with ThreadPoolExecutor(WORKERS, thread_name_prefix="rules-oracle") as pool:
        return [row for rows in pool.map(judge, table) for row in rows]


def report(rows: Sequence[Row]) -> str:
    """The whole table, one line per call, then the counts."""
    counts = {o: sum(r.outcome == o for r in rows) for o in ("agreed", "stricter", "looser", "unclassified")}
    lines = [f"{r.outcome:<12} {r.claude.verdict or '?':<5} {r.belay.action:<5} [{r.rules.name}] {r.call.shown}"
             for r in rows]
    return "\n".join(lines + [f"{len(rows)} calls: " + ", ".join(f"{n} {o}" for o, n in counts.items())])


def _offered(first: ModelRequest) -> list[str]:
    """The tools the model was offered: in ``tools``, or named in the list of deferred tools (MCP tools are)."""
    return [*first.tool_names, *re.findall(r"mcp__\w+", json.dumps(first.body))]


def _server_offered(tool: str, offered: Sequence[str]) -> bool:
    server = "__".join(tool.split("__")[:2]) + "__"
    return tool.startswith("mcp__") and any(name.startswith(server) for name in offered)


def _short(text: str, limit: int = 160) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[:limit - 3] + "..."
