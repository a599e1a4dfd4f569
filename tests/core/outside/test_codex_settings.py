"""`belay hooks install --agent codex`: Belay's entries in Codex's hooks.json, and Codex's trust in them."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from core.outside import install
from core.outside.codex import HOOKS
from core.outside.codex_settings import EVENTS, hook_hash
from core.policy.settings import config_dir
from core.settings import state_root

THEIRS = '# my settings\nmodel = "gpt-5.5"\n\n[hooks.state."/elsewhere/hooks.json:stop:0:0"]\nenabled = false\n'


@pytest.fixture
def codex_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "codex-home"
    monkeypatch.setenv("CODEX_HOME", str(home))
    home.mkdir()
    (home / "config.toml").write_text(THEIRS)
    return home


def _trust(home: Path) -> dict[str, str]:
    state = tomllib.loads((home / "config.toml").read_text())["hooks"]["state"]
    return {k: v["trusted_hash"] for k, v in state.items() if "trusted_hash" in v}


def test_install_writes_the_hooks_and_trusts_exactly_them_and_uninstall_takes_out_only_belays(
        codex_home: Path, tmp_path: Path) -> None:
    user = HOOKS.settings_file(None, True)
    assert user == codex_home / "hooks.json"
    theirs = {"type": "command", "command": "their-logger"}
    user.write_text(json.dumps({"hooks": {"Stop": [{"hooks": [theirs]}]}}))
    command = install.hook_command(state_root(), config_dir(), agent="codex")
    changed = HOOKS.install(user, command, config_dir())
    assert changed.events == EVENTS and not changed.file_created
    hooks = json.loads(user.read_text())["hooks"]
    pre = hooks["PreToolUse"][0]["hooks"][0]
    assert pre == {"type": "command", "command": command, "timeout": install.HOOK_TIMEOUT_S}  # no onFailure
    assert "matcher" not in hooks["PreToolUse"][0] and hooks["SessionEnd"][0]["hooks"][0]["timeout"] == 3
    trust = _trust(codex_home)
    assert trust[f"{user}:pre_tool_use:0:0"] == hook_hash("PreToolUse", None, pre)
    assert f"{user}:stop:1:0" in trust and f"{user}:stop:0:0" not in trust  # theirs stays untrusted by Belay
    assert len(trust) == len(EVENTS)
    assert HOOKS.install(user, command, config_dir()).events == () and _trust(codex_home) == trust  # once
    assert set(HOOKS.uninstall(user, config_dir()).events) == set(EVENTS)
    assert json.loads(user.read_text()) == {"hooks": {"Stop": [{"hooks": [theirs]}]}}
    assert (codex_home / "config.toml").read_text() == THEIRS


def test_a_project_install_trusts_the_projects_file_in_the_users_config(codex_home: Path, tmp_path: Path) -> None:
    project = HOOKS.settings_file(tmp_path / "proj", False)
    assert project == (tmp_path / "proj").resolve() / ".codex" / "hooks.json"
    command = install.hook_command(state_root(), config_dir(), agent="codex")
    assert HOOKS.install(project, command, config_dir()).file_created
    assert f"{project}:session_start:0:0" in _trust(codex_home)
    assert HOOKS.uninstall(project, config_dir()).file_removed and not project.exists()
    assert (codex_home / "config.toml").read_text() == THEIRS


def test_codexs_hash_follows_its_normalization() -> None:
    handler = {"type": "command", "command": "x"}
    assert hook_hash("PreToolUse", None, handler) == hook_hash("PreToolUse", None, {**handler, "timeout": 600})
    assert hook_hash("SessionEnd", None, {**handler, "timeout": 60}) == hook_hash("SessionEnd", None,
                                                                                   {**handler, "timeout": 3})
    assert hook_hash("Stop", "ignored", handler) == hook_hash("Stop", None, handler)
    assert hook_hash("PreToolUse", "Bash", handler) != hook_hash("PreToolUse", None, handler)
    assert hook_hash("PreToolUse", None, handler).startswith("sha256:")


def test_a_config_belay_cannot_add_to_is_left_alone_with_the_reason(codex_home: Path) -> None:
    user = HOOKS.settings_file(None, True)
    command = install.hook_command(state_root(), config_dir(), agent="codex")
    (codex_home / "config.toml").write_text("model = \n")
    with pytest.raises(ValueError, match="does not parse"):
        HOOKS.install(user, command, config_dir())
    assert not user.exists()
    stale = f'[hooks.state."{user}:pre_tool_use:0:0"]\ntrusted_hash = "sha256:old"\n'
    (codex_home / "config.toml").write_text(stale)
    with pytest.raises(ValueError, match="trusts another version"):
        HOOKS.install(user, command, config_dir())
    (codex_home / "config.toml").write_text('hooks = { state = {} }\n')  # an inline table cannot be added to
    with pytest.raises(ValueError, match="trust Belay's hooks in Codex instead"):
        HOOKS.install(user, command, config_dir())
    assert (codex_home / "config.toml").read_text() == 'hooks = { state = {} }\n'


def test_uninstall_takes_belays_trust_out_of_a_config_that_no_longer_parses(codex_home: Path) -> None:
    user = HOOKS.settings_file(None, True)
    HOOKS.install(user, install.hook_command(state_root(), config_dir(), agent="codex"), config_dir())
    config = codex_home / "config.toml"
    config.write_text(config.read_text() + "broken = \n")  # the person's edit since
    assert set(HOOKS.uninstall(user, config_dir()).events) == set(EVENTS)
    assert config.read_text() == THEIRS + "\nbroken = \n" and "Belay" not in config.read_text()


def test_uninstall_leaves_no_config_or_folder_belay_made_and_keeps_what_the_person_added(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "fresh-codex-home"  # Codex never run here: no folder, no config.toml
    monkeypatch.setenv("CODEX_HOME", str(home))
    user = HOOKS.settings_file(None, True)
    command = install.hook_command(state_root(), config_dir(), agent="codex")
    HOOKS.install(user, command, config_dir())
    assert (home / "config.toml").exists()
    assert HOOKS.uninstall(user, config_dir()).file_removed
    assert not home.exists()  # not an empty config.toml in an empty folder

    HOOKS.install(user, command, config_dir())
    with (home / "config.toml").open("a") as config:
        config.write('model = "gpt-5.5"\n')  # the person's own, added since
    HOOKS.uninstall(user, config_dir())
    assert (home / "config.toml").read_text() == 'model = "gpt-5.5"\n' and sorted(home.iterdir()) == [
        home / "config.toml"]
