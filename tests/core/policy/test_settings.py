"""Policy settings files: a layer's TOML read into rules, problems reported, and one rule added or removed."""

from __future__ import annotations

import os
import stat
import tomllib
from pathlib import Path

import pytest

from core.policy.settings import config_dir, edit_rules, load_layer, settings_path


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_each_layer_has_its_own_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BELAY_CONFIG_DIR", str(tmp_path / "cfg"))
    assert settings_path("user", None) == tmp_path / "cfg" / "settings.toml"
    assert settings_path("workspace", tmp_path / "ws") == tmp_path / "ws" / ".belay" / "settings.toml"
    assert settings_path("session", tmp_path / "ws") is None  # session rules live in memory only
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("BELAY_CONFIG_DIR", "~/belay")
    assert config_dir() == tmp_path / "home" / "belay"
    layer, problems = load_layer("user", tmp_path / "missing.toml")
    assert (layer.entries, layer.mode, problems) == ([], None, [])


@pytest.mark.parametrize(("content", "complaint"), [
    (b'mode = "plan"\n[permissions]\ndeny = ["Bash(curl:*)"\nallow = ["Bash(ls:*)"]\n', "line 4"),
    (b'mode = "plan"\n[permissions]\ndeny = ["Bash(curl:*)"]\n# caf\xe9 in Latin-1\n', "can't decode"),
], ids=["unclosed array", "not UTF-8"])
def test_a_file_that_is_not_toml_is_ignored_as_a_whole_and_reported_with_file_and_line(
        tmp_path: Path, content: bytes, complaint: str) -> None:
    path = tmp_path / "settings.toml"
    path.write_bytes(content)
    layer, [problem] = load_layer("user", path)
    assert problem.startswith(f"{path}: ") and complaint in problem and problem.endswith("the file is ignored")
    assert (layer.entries, layer.mode) == ([], None)  # not even the valid lines before the error apply


def test_a_bad_entry_is_reported_with_its_line_and_the_rest_of_the_file_applies(tmp_path: Path) -> None:
    path = write(tmp_path / "ws" / ".belay" / "settings.toml", """\
mode = "acceptEdits"
[permissions]
allow = [
  "Bash(make:*)",
  "Bash(npm run test:*",
  { rule = "Bash(cargo test:*)", timeout_s = 5, on_timeout = "allow" },
  { rule = "Bash(cargo build:*)", on_timeout = "later" },
]
deny = ["Bash(curl:*)"]
[approval]
timeout_s = 45
[timeouts]
Bash = 30
Write = -1
[changes]
ignore = ["*.log"]
""")
    layer, problems = load_layer("workspace", path)
    assert problems == [
        f"{path}:5: permissions.allow[1]: invalid rule 'Bash(npm run test:*': missing ')' at the end",
        f"{path}:7: permissions.allow[3]: on_timeout must be \"deny\" or \"allow\", got 'later'",
        f"{path}: [timeouts] Write must be a number of seconds (0 for no limit)",
    ]
    assert [(e.rule, e.action, e.scope, e.source, e.timeout_s, e.on_timeout) for e, _ in layer.entries] == [
        ("Bash(make:*)", "allow", "workspace", path, None, None),
        ("Bash(cargo test:*)", "allow", "workspace", path, 5.0, "allow"),
        ("Bash(curl:*)", "deny", "workspace", path, None, None),
    ]
    assert layer.entries[0][1].matches_command(("make", "build"))
    assert (layer.mode, layer.timeout_s, layer.timeouts, layer.ignore) == ("accept_edits", 45.0, {"Bash": 30.0},
                                                                           ["*.log"])


def test_how_commands_run_and_which_servers_start_are_read_from_the_user_file_only(tmp_path: Path) -> None:
    text = '[bash]\nnetwork = false\n[mcp.servers.docs]\ncommand = "docs-server"\n'
    user, user_problems = load_layer("user", write(tmp_path / "user.toml", text))
    assert user_problems == [] and user.bash == {"network": False} and list(user.mcp_servers) == ["docs"]
    workspace_file = write(tmp_path / "ws" / ".belay" / "settings.toml", 'mode = "bypass"\n' + text)
    layer, problems = load_layer("workspace", workspace_file)
    assert (layer.bash, layer.mcp_servers, layer.mode) == ({}, {}, None)
    assert len(problems) == 3 and all(p.startswith(str(workspace_file)) for p in problems)
    assert all(any(word in p for p in problems) for word in ("[bash] is ignored", "[mcp] is ignored", "bypass"))


def test_adding_then_removing_a_rule_keeps_every_other_key_of_the_file(tmp_path: Path) -> None:
    path = write(tmp_path / "settings.toml", """\
# comments are not kept: tomli_w writes data, not text
mode = "plan"
[permissions]
allow = ["Bash(make:*)", { rule = "Bash(cargo test:*)", timeout_s = 5 }]
deny = ["Bash(curl:*)"]
[tools]
disable = ["WebFetch"]
[bash]
network = false
limits = { memory_mb = 512 }
[mcp.servers.docs]
command = "docs-server"
args = ["--port", "7"]
""")
    original = tomllib.loads(path.read_text())
    assert edit_rules(path, "allow", "Bash(npm run test:*)", add=True) is True
    added = tomllib.loads(path.read_text())
    assert added["permissions"]["allow"] == [*original["permissions"]["allow"], "Bash(npm run test:*)"]
    assert {k: v for k, v in added.items() if k != "permissions"} == {k: v for k, v in original.items()
                                                                     if k != "permissions"}
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert edit_rules(path, "allow", "Bash(npm run test:*)", add=False) is True
    assert tomllib.loads(path.read_text()) == original


def test_a_rule_is_found_however_it_was_spelled_and_a_no_op_leaves_the_file_alone(tmp_path: Path) -> None:
    path = write(tmp_path / "settings.toml", '[permissions]\nask = ["Bash( git   push:* )", '
                                             '{ rule = "Bash(npm publish:*)", timeout_s = 60 }]\n')
    before = path.read_bytes()
    assert edit_rules(path, "ask", "Bash(git push:*)", add=True) is False  # already there, spelled otherwise
    assert edit_rules(path, "deny", "Bash(git push:*)", add=False) is False  # not in that list
    assert path.read_bytes() == before
    assert edit_rules(path, "ask", "Bash(npm publish:*)", add=False) is True  # an inline table goes too
    assert edit_rules(path, "ask", "Bash(git push:*)", add=False) is True
    assert tomllib.loads(path.read_text()) == {"permissions": {"ask": []}}
    fresh = tmp_path / "new" / "settings.toml"
    fresh.parent.mkdir()
    assert edit_rules(fresh, "deny", "Bash(curl:*)", add=True) is True  # a missing file is created
    assert tomllib.loads(fresh.read_text()) == {"permissions": {"deny": ["Bash(curl:*)"]}}


def test_storage_sets_retention_in_the_user_layer_only(tmp_path: Path) -> None:
    from core.store.gc import GB, Retention

    user, problems = load_layer("user", write(tmp_path / "user.toml", "[storage]\nkeep_days = 7\nmax_gb = 0.5\n"))
    assert problems == [] and user.retention == Retention(keep_days=7.0, max_bytes=GB // 2)
    ws, problems = load_layer("workspace", write(tmp_path / "ws.toml", "[storage]\nkeep_days = 0.01\n"))
    assert ws.retention is None and "[storage] is ignored here" in problems[0]  # a clone cannot erase its history
    wrong, problems = load_layer("user", write(tmp_path / "bad.toml", "[storage]\nmax_gb = true\nkeep = 3\n"))
    assert wrong.retention == Retention()
    assert [p.split(": ", 1)[1] for p in problems] == [
        "unknown key 'keep' in [storage] (expected keep_days, max_gb)",
        "[storage] max_gb must be a number above 0; the default applies"]
