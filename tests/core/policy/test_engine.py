"""The policy engine: layered TOML settings, rule editing, modes, protected paths, tools, timeouts, dry runs."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

import pytest

from core.policy.engine import PolicyEngine, PolicyRequest, Verdict
from core.policy.trust import trust
from core.tools.base import Annotations


@pytest.fixture
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The user layer's directory ($BELAY_CONFIG_DIR), and a throwaway HOME."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("BELAY_CONFIG_DIR", str(tmp_path / "config"))
    return tmp_path / "config"


@pytest.fixture
def ws(tmp_path: Path, config: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / ".git" / "hooks").mkdir(parents=True)
    (ws / "src").mkdir()
    return ws


@pytest.fixture
def engine(ws: Path) -> PolicyEngine:
    engine = PolicyEngine()
    assert engine.load(ws) == []
    return engine


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def bash(engine: PolicyEngine, ws: Path, command: str) -> str:
    return engine.evaluate(PolicyRequest("Bash", {"command": command}, ws)).action


def tool(engine: PolicyEngine, ws: Path, name: str, path: str | None = None, **args: object) -> Verdict:
    if path is not None:
        args["file_path"] = str(ws / path) if not path.startswith("/") else path
    paths = (Path(os.path.realpath(str(args["file_path"]))),) if "file_path" in args else ()
    return engine.evaluate(PolicyRequest(name, dict(args), ws, paths=paths))


# --- layers -------------------------------------------------------------------------------------------------------

def test_user_and_workspace_layers_add_up_and_deny_beats_ask_beats_allow(engine: PolicyEngine, ws: Path,
                                                                         config: Path) -> None:
    _write(config / "settings.toml", '[permissions]\nallow = ["Bash(npm run test:*)", "Bash(make:*)"]\n'
                                     'deny = ["Bash(make deploy:*)"]\n')
    _write(ws / ".belay" / "settings.toml", '[permissions]\nask = ["Bash(npm run test:*)"]\n'
                                            'allow = ["Bash(cargo test:*)"]\n')
    trust(ws)  # the person trusts the workspace: its file may add allow rules
    assert engine.load(ws) == []
    assert bash(engine, ws, "make build") == "allow"
    assert bash(engine, ws, "make deploy now") == "deny"
    assert bash(engine, ws, "npm run test") == "ask"
    assert bash(engine, ws, "cargo test") == "allow"
    engine.add_rule("Bash(cargo test:*)", "deny", "session")
    assert bash(engine, ws, "cargo test") == "deny"
    assert [(e.rule, e.action, e.scope) for e in engine.rules()][:1] == [("Bash(npm run test:*)", "allow", "user")]


def test_the_user_layer_defaults_to_the_platform_config_dir(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import platformdirs

    monkeypatch.delenv("BELAY_CONFIG_DIR")
    target = ws.parent / "platform"
    monkeypatch.setattr(platformdirs, "user_config_dir", lambda *a, **k: str(target))
    _write(target / "settings.toml", '[permissions]\ndeny = ["Bash(curl:*)"]\n')
    engine = PolicyEngine()
    assert engine.load(ws) == []
    assert bash(engine, ws, "curl x") == "deny"


def test_a_malformed_file_is_reported_and_ignored(engine: PolicyEngine, ws: Path, config: Path) -> None:
    _write(config / "settings.toml", '[permissions]\nallow = ["Bash(ls:*)"\n')
    _write(ws / ".belay" / "settings.toml", '[permissions]\ndeny = ["Bash(curl:*)"]\n')
    problems = engine.load(ws)
    assert len(problems) == 1 and "settings.toml" in problems[0] and "ignored" in problems[0]
    assert bash(engine, ws, "curl x") == "deny"


def test_bad_entries_are_reported_one_by_one_and_the_rest_applies(engine: PolicyEngine, ws: Path) -> None:
    _write(ws / ".belay" / "settings.toml", 'mode = "yolo"\nshell = 1\n[permissions]\n'
                                            'deny = ["Bash(curl:*)", "Bash(", 7, { rule = "Bash(wget:*)", x = 1 }]\n'
                                            'maybe = []\n[tools]\ndisable = "all"\n[approval]\ntimeout_s = -1\n')
    problems = "\n".join(engine.load(ws))
    for fragment in ("mode 'yolo'", "unknown key 'shell'", "missing ')'", "a rule is a string", "unknown keys",
                     "permissions.maybe", "tools.disable", "approval.timeout_s", ":4:"):
        assert fragment in problems
    assert bash(engine, ws, "curl x") == "deny" and engine.mode == "default"


def test_add_rule_persists_atomically_and_keeps_other_settings(engine: PolicyEngine, ws: Path, config: Path) -> None:
    path = _write(ws / ".belay" / "settings.toml", 'mode = "accept_edits"\n[tools]\ndisable = ["WebFetch"]\n')
    stored = engine.add_rule("  Bash( npm  run test:* )", "allow", "workspace")
    assert stored == "Bash(npm run test:*)"
    data = tomllib.loads(path.read_text())
    assert data == {"mode": "accept_edits", "tools": {"disable": ["WebFetch"]},
                    "permissions": {"allow": ["Bash(npm run test:*)"]}}
    assert engine.add_rule("Bash(npm run test:*)", "allow", "workspace") == stored
    assert tomllib.loads(path.read_text())["permissions"]["allow"] == [stored]  # no duplicate
    assert not [p for p in path.parent.iterdir() if p.name.endswith(".tmp")]
    engine.add_rule("Bash(curl:*)", "deny", "user")
    assert tomllib.loads((config / "settings.toml").read_text()) == {"permissions": {"deny": ["Bash(curl:*)"]}}
    fresh = PolicyEngine()
    fresh.load(ws)
    assert bash(fresh, ws, "npm run test") == "allow" and bash(fresh, ws, "curl x") == "deny"


def test_remove_rule_from_each_scope(engine: PolicyEngine, ws: Path) -> None:
    engine.add_rule("Bash(make:*)", "allow", "workspace")
    engine.add_rule("Bash(make:*)", "allow", "session")
    assert bash(engine, ws, "make") == "allow"
    assert engine.remove_rule("Bash(make:*)", "allow", "workspace") is True
    assert engine.remove_rule("Bash( make:* )", "allow", "session") is True
    assert engine.remove_rule("Bash(make:*)", "allow", "session") is False
    assert engine.remove_rule("Bash(make:*)", "deny", "workspace") is False
    assert bash(engine, ws, "make") == "ask"
    assert "make" not in (ws / ".belay" / "settings.toml").read_text()


def test_each_verdict_follows_a_rule_or_mode_changed_since_the_last_one(engine: PolicyEngine, ws: Path) -> None:
    # the flattened rules are kept between verdicts: every change must show in the next one
    assert bash(engine, ws, "make") == "ask"
    engine.add_rule("Bash(make:*)", "allow", "session")
    assert bash(engine, ws, "make") == "allow"
    engine.set_mode("plan")
    assert bash(engine, ws, "make") == "deny"
    engine.set_mode("default")
    engine.add_rule("Bash(make:*)", "deny", "workspace")
    assert bash(engine, ws, "make") == "deny"
    engine.remove_rule("Bash(make:*)", "deny", "workspace")
    assert bash(engine, ws, "make") == "allow"


@pytest.mark.parametrize(("rule", "action", "scope", "complaint"), [
    ("Bash(", "allow", "session", "missing ')'"), ("Bash(ls)", "permit", "session", "action must be"),
    ("Bash(ls)", "allow", "global", "scope one of"), ("Read(../x)", "deny", "workspace", "'..'"),
])
def test_a_malformed_rule_is_a_clear_value_error(engine: PolicyEngine, rule: str, action: str, scope: str,
                                                complaint: str) -> None:
    with pytest.raises(ValueError, match=complaint.replace("(", r"\(").replace(")", r"\)")):
        engine.add_rule(rule, action, scope)  # type: ignore[arg-type]
    assert engine.rules() == []


def test_adding_to_a_broken_file_refuses_and_leaves_it_alone(engine: PolicyEngine, ws: Path) -> None:
    path = _write(ws / ".belay" / "settings.toml", "permissions = 3\n")
    with pytest.raises(ValueError, match="not a list of rules"):
        engine.add_rule("Bash(ls)", "allow", "workspace")
    _write(path, "[permissions\n")
    with pytest.raises(ValueError, match="cannot be read as TOML"):
        engine.add_rule("Bash(ls)", "allow", "workspace")
    assert path.read_text() == "[permissions\n"


# --- modes --------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("mode", "expected"), [
    ("default", {"ls": "allow", "rm x": "ask", "curl x": "ask", "echo x > .git/hooks/p": "ask", "rm -rf /": "deny"}),
    ("accept_edits", {"ls": "allow", "rm x": "allow", "curl x": "ask", "echo x > .git/hooks/p": "ask",
                      "rm -rf /": "deny"}),
    ("plan", {"ls": "allow", "rm x": "deny", "curl x": "deny", "echo x > .git/hooks/p": "deny", "rm -rf /": "deny"}),
    ("bypass", {"ls": "allow", "rm x": "allow", "curl x": "allow", "eval x": "allow",
                "echo x > .git/hooks/p": "ask", "rm -rf .git": "ask", "cd .git && echo x > hooks/p": "ask",
                "python3 -c 'open(\".git/hooks/p\", \"w\")'": "ask", "X=.bashrc; echo x >> $X": "ask",
                "cat .git/config": "allow", "rm -rf /": "deny"}),
])
def test_modes_for_bash(engine: PolicyEngine, ws: Path, mode: str, expected: dict[str, str]) -> None:
    engine.set_mode(mode)
    assert {command: bash(engine, ws, command) for command in expected} == expected


@pytest.mark.parametrize(("mode", "expected"), [
    ("default", {"Write": "ask", "Write .git": "ask", "Edit .claude": "ask", "Read": "allow", "Read outside": "allow",
                 "environ": "deny", "mcp": "ask"}),
    ("accept_edits", {"Write": "allow", "Write .git": "ask", "Edit .claude": "ask", "Read": "allow",
                      "Read outside": "allow", "environ": "deny", "mcp": "ask"}),
    ("plan", {"Write": "deny", "Write .git": "deny", "Edit .claude": "deny", "Read": "allow", "Read outside": "allow",
              "environ": "deny", "mcp": "deny"}),
    ("bypass", {"Write": "allow", "Write .git": "ask", "Edit .claude": "ask", "Read": "allow",
                "Read outside": "allow", "environ": "deny", "mcp": "allow"}),
])
def test_modes_for_file_and_other_tools(engine: PolicyEngine, ws: Path, mode: str, expected: dict[str, str]) -> None:
    engine.set_mode(mode)
    calls = {
        "Write": tool(engine, ws, "Write", "src/a.py", content="x"),
        "Write .git": tool(engine, ws, "Write", ".git/hooks/pre-commit", content="x"),
        "Edit .claude": tool(engine, ws, "Edit", ".claude/settings.json", old_string="a", new_string="b"),
        "Read": tool(engine, ws, "Read", "src/a.py"),
        "Read outside": tool(engine, ws, "Read", "/etc/hostname"),   # the Read tool itself refuses it
        "environ": tool(engine, ws, "Read", "/proc/self/environ"),
        "mcp": tool(engine, ws, "mcp__github__create_issue", title="x"),
    }
    assert {name: v.action for name, v in calls.items()} == expected


def test_protected_writes_through_a_symlink_still_ask_in_bypass(engine: PolicyEngine, ws: Path) -> None:
    os.symlink(ws / ".git" / "hooks" / "pre-commit", ws / "innocent.sh")
    engine.set_mode("bypass")
    verdict = tool(engine, ws, "Write", "innocent.sh", content="#!/bin/sh\n")
    assert verdict.action == "ask" and ".git" in verdict.reason and verdict.on_timeout == "deny"


def test_the_mode_comes_from_the_most_specific_layer(engine: PolicyEngine, ws: Path, config: Path) -> None:
    _write(config / "settings.toml", 'mode = "plan"\n')
    engine.load(ws)
    assert engine.mode == "plan"
    _write(ws / ".belay" / "settings.toml", 'mode = "acceptEdits"\n')
    trust(ws)  # a workspace may loosen the mode once trusted
    engine.load(ws)
    assert engine.mode == "accept_edits"
    engine.set_mode("bypassPermissions")
    assert engine.mode == "bypass"
    with pytest.raises(ValueError, match="unknown mode"):
        engine.set_mode("yolo")
    assert "mode=bypass" in repr(engine)


# --- tools, timeouts, rules for other tools ---------------------------------------------------------------------------

@pytest.mark.parametrize(("disable", "denied", "enabled"), [
    (["*"], ["Bash", "Read", "mcp__a__b"], []),
    (["WebFetch", "Bash"], ["Bash", "WebFetch"], ["Read", "mcp__a__b"]),
    (["mcp:*"], ["mcp__a__b", "mcp__c__d"], ["Bash", "Read"]),
    (["mcp:github"], ["mcp__github__create"], ["mcp__gitlab__create", "mcp__githubx__a", "Bash"]),
])
def test_tools_disable(engine: PolicyEngine, ws: Path, disable: list[str], denied: list[str],
                       enabled: list[str]) -> None:
    _write(ws / ".belay" / "settings.toml", f"[tools]\ndisable = {disable!r}\n".replace("'", '"'))
    assert engine.load(ws) == []
    for name in denied:
        verdict = engine.evaluate(PolicyRequest(name, {"command": "ls"}, ws))
        assert verdict.action == "deny" and "disabled" in verdict.reason
        assert engine.disabled_reason(name) is not None
    assert all(engine.disabled_reason(name) is None for name in enabled)


def test_approval_timeouts_from_a_rule_entry_and_the_approval_table(engine: PolicyEngine, ws: Path) -> None:
    _write(ws / ".belay" / "settings.toml", '[permissions]\nask = [{ rule = "Bash(npm publish:*)", timeout_s = 60, '
                                            'on_timeout = "allow" }]\n[approval]\ntimeout_s = 30\n'
                                            'on_timeout = "allow"\n')
    trust(ws)  # on_timeout = "allow" from a workspace needs trust
    assert engine.load(ws) == []
    publish = engine.evaluate(PolicyRequest("Bash", {"command": "npm publish"}, ws))
    assert (publish.action, publish.timeout_s, publish.on_timeout) == ("ask", 60, "allow")
    other = engine.evaluate(PolicyRequest("Bash", {"command": "make"}, ws))
    assert (other.action, other.timeout_s, other.on_timeout) == ("ask", 30, "allow")
    hidden = engine.evaluate(PolicyRequest("Bash", {"command": "eval $X"}, ws))
    assert (hidden.action, hidden.on_timeout) == ("ask", "deny")  # nobody saw what would run: never auto-allowed
    hook = tool(engine, ws, "Write", ".git/hooks/pre-commit", content="x")
    assert (hook.action, hook.on_timeout) == ("ask", "deny")


def test_no_timeout_means_waiting_forever(engine: PolicyEngine, ws: Path) -> None:
    _write(ws / ".belay" / "settings.toml", "[approval]\ntimeout_s = 0\n")
    engine.load(ws)
    verdict = engine.evaluate(PolicyRequest("Bash", {"command": "make"}, ws))
    assert verdict.timeout_s is None and verdict.on_timeout == "deny"


def test_rules_for_file_tools_mcp_servers_and_web_fetch(engine: PolicyEngine, ws: Path) -> None:
    engine.add_rule("Edit(./src/**)", "allow", "session")
    engine.add_rule("Read(./src/secret.txt)", "deny", "session")
    engine.add_rule("mcp__github", "allow", "session")
    engine.add_rule("mcp__github__delete_repo", "deny", "session")
    engine.add_rule("WebFetch(domain:example.com)", "allow", "session")
    assert tool(engine, ws, "MultiEdit", "src/a.py", edits=[]).action == "allow"
    assert tool(engine, ws, "NotebookEdit", "src/a.ipynb").action == "allow"
    assert tool(engine, ws, "Write", "docs/a.md", content="x").action == "ask"
    assert tool(engine, ws, "Grep", "src/secret.txt", pattern="x").action == "deny"
    assert tool(engine, ws, "mcp__github__create_issue").action == "allow"
    assert tool(engine, ws, "mcp__github__delete_repo").action == "deny"
    assert tool(engine, ws, "mcp__gitlab__x").action == "ask"
    assert tool(engine, ws, "WebFetch", url="https://docs.example.com/x").action == "ask"  # allow: the host alone
    assert tool(engine, ws, "WebFetch", url="https://example.com.evil.net/").action == "ask"


def test_read_only_annotations_and_sub_agents(engine: PolicyEngine, ws: Path) -> None:
    reader = engine.evaluate(PolicyRequest("mcp__docs__search", {}, ws, Annotations(read_only=True)))
    assert reader.action == "allow"
    assert engine.evaluate(PolicyRequest("Task", {"prompt": "x"}, ws)).action == "allow"


@pytest.mark.parametrize("mode", ["default", "plan"])
def test_stopping_the_agents_own_background_shell_never_asks(engine: PolicyEngine, ws: Path, mode: str) -> None:
    engine.set_mode(mode)
    assert engine.evaluate(PolicyRequest("KillShell", {"shell_id": "bash_1"}, ws)).action == "allow"


def test_a_bash_call_without_a_command_string_asks(engine: PolicyEngine, ws: Path) -> None:
    assert engine.evaluate(PolicyRequest("Bash", {"command": ["ls"]}, ws)).action == "ask"


# --- dry runs and suggestions -----------------------------------------------------------------------------------------

def test_dry_run_lists_the_calls_whose_verdict_would_become_the_action(engine: PolicyEngine, ws: Path) -> None:
    requests = [PolicyRequest("Bash", {"command": c}, ws) for c in
                ("npm run test", "npm run test -- -x", "npm run lint", "ls", "npm run test; curl x", "rm -rf /")]
    assert engine.dry_run("Bash(npm run test:*)", "allow", requests) == [0, 1]
    assert engine.dry_run("Bash(npm:*)", "deny", requests) == [0, 1, 2, 4]
    assert engine.dry_run("Bash(ls)", "ask", requests) == [3]
    assert engine.rules() == []
    with pytest.raises(ValueError):
        engine.dry_run("Bash(", "allow", requests)


@pytest.mark.parametrize(("command", "rule"), [
    ("npm run test -- --watch=false", "Bash(npm run test:*)"),
    ("git commit -m 'x'", "Bash(git commit:*)"),
    ("python3 -m pytest -q", "Bash(python3 -m pytest:*)"),
    ("make", "Bash(make:*)"),
    ("cargo test --release", "Bash(cargo test:*)"),
    ("git status && curl https://example.com", "Bash(curl:*)"),
    ("ls; ./build.sh --fast", "Bash(./build.sh:*)"),
    ("ls", None),                       # nothing to allow
    ("eval make", None), ("timeout 5 make", None), ("bash -c make", None), ("$TOOL run", None),
    ("make $TARGET", None), ("echo x > .git/hooks/p", None), ("rm -rf /", None), ("if then", None),
    ("{ ls; } > out.txt", None),
])
def test_suggest_rule_is_the_narrowest_sensible_one(engine: PolicyEngine, ws: Path, command: str,
                                                     rule: str | None) -> None:
    request = PolicyRequest("Bash", {"command": command}, ws)
    assert engine.suggest_rule(request) == rule
    verdict = engine.evaluate(request)
    if verdict.action == "ask":
        assert verdict.suggested_rule == rule
    if rule is not None:
        engine.add_rule(rule, "allow", "session")
        assert engine.evaluate(request).action == "allow"


def test_suggestions_for_other_tools(engine: PolicyEngine, ws: Path) -> None:
    assert tool(engine, ws, "Write", "src/pkg/a.py", content="x").suggested_rule == "Edit(./src/**)"
    assert tool(engine, ws, "Write", "README.md", content="x").suggested_rule == "Edit(./README.md)"
    assert tool(engine, ws, "Write", ".git/hooks/pre-commit", content="x").suggested_rule is None
    assert tool(engine, ws, "Write", "/etc/x", content="x").suggested_rule is None
    assert tool(engine, ws, "WebFetch", url="https://Docs.Example.com/x").suggested_rule == \
        "WebFetch(domain:docs.example.com)"
    assert tool(engine, ws, "mcp__github__create_issue").suggested_rule == "mcp__github__create_issue"


def test_a_workspace_cannot_switch_its_own_checks_off(engine: PolicyEngine, ws: Path) -> None:
    _write(ws / ".belay" / "settings.toml", 'mode = "bypass"\n')
    problems = engine.load(ws)
    assert engine.mode == "default"
    assert any("bypass" in p and "ignored" in p for p in problems)
    assert bash(engine, ws, "touch x") == "ask"


def test_the_read_filter_refuses_what_a_read_deny_rule_or_a_secret_covers(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "secrets").mkdir(parents=True)
    engine = PolicyEngine()
    engine.load(ws)
    engine.add_rule("Read(./.env)", "deny", "session")
    engine.add_rule("Read(./secrets/**)", "deny", "session")
    refused = engine.read_filter()
    assert "Read(./.env)" in (refused(ws / ".env") or "")
    assert "Read(./secrets/**)" in (refused(ws / "secrets" / "key.pem") or "")
    assert "API keys" in (refused(Path("/proc/self/environ")) or "")
    assert refused(ws / "src" / "app.py") is None


def test_the_read_filter_refuses_a_path_whose_link_vanishes_while_it_is_followed(tmp_path: Path,
                                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Another process swapping a link: where it leads is unknown, so the file is not shown (and nothing crashes)."""
    ws = tmp_path / "ws"
    ws.mkdir()
    os.symlink(tmp_path, ws / "door")
    engine = PolicyEngine()
    engine.load(ws)
    refused = engine.read_filter()

    def gone(path: object, *args: object, **kwargs: object) -> str:
        raise FileNotFoundError(2, "No such file or directory", path)

    monkeypatch.setattr(os, "readlink", gone)
    assert "changed while it was being resolved" in (refused(ws / "door" / "f.txt") or "")


@pytest.mark.parametrize("command", ["echo hi > out.txt", "echo hi > src/out.txt", "touch x.txt",
                                     "sed -i s/a/b/ f.txt"])
def test_with_edit_allowed_the_advice_for_a_command_writing_a_file_names_a_rule_that_then_allows_it(
        engine: PolicyEngine, ws: Path, command: str) -> None:
    """Issue 36: the card said "needs an Edit rule" with `Edit` in the allow list; and "Always allow" offered
    `Bash(echo:*)`, already in force.  The advice is checked against the rules in force: adding it allows."""
    engine.add_rule("Edit", "allow", "session")
    engine.add_rule("Bash(echo:*)", "allow", "session")
    asked = engine.evaluate(PolicyRequest("Bash", {"command": command}, ws))
    assert asked.action == "ask" and asked.suggested_rule is not None, asked.reason
    assert "needs an Edit rule or accept-edits mode" not in asked.reason
    assert asked.suggested_rule in asked.reason or asked.suggested_rule.startswith("Bash(")
    engine.add_rule(asked.suggested_rule, "allow", "session")
    assert bash(engine, ws, command) == "allow", asked.suggested_rule
