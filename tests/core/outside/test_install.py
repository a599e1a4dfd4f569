"""Installing Belay's hooks into Claude Code's settings, and taking exactly them out again."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from core.outside import install
from core.policy.settings import config_dir
from core.settings import state_root

USERS = {
    "model": "opus",
    "permissions": {"allow": ["Bash(ls:*)"], "deny": ["Read(./.env)"]},
    "hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "my-linter --strict"}]}],
        "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],
    },
}


def _command() -> str:
    return install.hook_command(state_root(), config_dir())


def _settings(tmp_path: Path, content: dict[str, Any] | str | None = None) -> Path:
    path = tmp_path / "project" / ".claude" / "settings.json"
    path.parent.mkdir(parents=True)
    if content is not None:
        path.write_text(content if isinstance(content, str) else json.dumps(content))
    return path


def test_every_event_gets_one_blocking_entry_for_belays_client_and_tool_events_match_every_tool(
        tmp_path: Path) -> None:
    path = _settings(tmp_path)
    changed = install.install(path, _command(), config_dir())
    assert changed.file_created and changed.events == install.HOOK_EVENTS
    hooks = json.loads(path.read_text())["hooks"]
    assert sorted(hooks) == sorted(install.HOOK_EVENTS)
    handler = {"type": "command", "command": _command(), "timeout": install.HOOK_TIMEOUT_S, "onFailure": "block"}
    for event, entries in hooks.items():
        expected = {"hooks": [handler]}
        if event in ("PreToolUse", "PostToolUse", "PostToolUseFailure", "PermissionRequest"):
            expected = {"matcher": "*", **expected}
        assert entries == [expected], event


def test_installing_keeps_the_users_settings_and_hooks_and_a_second_install_changes_no_byte(tmp_path: Path) -> None:
    path = _settings(tmp_path, USERS)
    install.install(path, _command(), config_dir())
    first = path.read_text()
    data = json.loads(first)
    assert data["model"] == "opus" and data["permissions"] == USERS["permissions"]
    assert data["hooks"]["Stop"] == USERS["hooks"]["Stop"]  # an event Belay does not use: untouched
    assert data["hooks"]["PreToolUse"][0] == USERS["hooks"]["PreToolUse"][0]  # the user's own runs first, as before
    assert [e["hooks"][0]["command"] for e in data["hooks"]["PreToolUse"]] == ["my-linter --strict", _command()]
    again = install.install(path, _command(), config_dir())
    assert again.events == () and not again.file_created and path.read_text() == first


def test_uninstall_takes_out_belays_entries_even_from_another_install_and_leaves_the_users(tmp_path: Path) -> None:
    path = _settings(tmp_path, USERS)
    other = install.hook_command(tmp_path / "another-state", tmp_path / "another-config")
    install.install(path, other, config_dir())  # e.g. installed before with a different state directory
    changed = install.uninstall(path, config_dir())
    assert set(changed.events) == set(install.HOOK_EVENTS) and not changed.file_removed
    assert json.loads(path.read_text()) == USERS
    assert install.uninstall(path, config_dir()).events == ()  # nothing of Belay's left to take out


def test_uninstall_keeps_a_file_the_user_had_even_when_nothing_is_left_in_it(tmp_path: Path) -> None:
    users = _settings(tmp_path, {})
    install.install(users, _command(), config_dir())
    assert not install.uninstall(users, config_dir()).file_removed
    assert json.loads(users.read_text()) == {}
    ours = tmp_path / "fresh" / ".claude" / "settings.json"
    install.install(ours, _command(), config_dir())
    data = json.loads(ours.read_text())
    ours.write_text(json.dumps({**data, "model": "sonnet"}))  # the user added a setting since
    assert not install.uninstall(ours, config_dir()).file_removed
    assert json.loads(ours.read_text()) == {"model": "sonnet"}


@pytest.mark.parametrize("content", ["{\"hooks\": {", "[1, 2]", "{\"hooks\": [\"not\", \"a table\"]}",
                                     "{\"hooks\": {\"PreToolUse\": {\"matcher\": \"*\"}}}"])
def test_settings_belay_cannot_read_as_claude_codes_are_refused_and_left_as_they_were(tmp_path: Path,
                                                                                       content: str) -> None:
    path = _settings(tmp_path, content)
    with pytest.raises(ValueError, match=str(path)):
        install.install(path, _command(), config_dir())
    assert path.read_text() == content


def test_the_settings_file_is_the_projects_or_the_users_claude_config(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    project = tmp_path / "project"
    assert install.settings_file(project, user=False) == project.resolve() / ".claude" / "settings.local.json"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude-home"))
    assert install.settings_file(project, user=True) == tmp_path / "claude-home" / "settings.json"


def test_the_silence_limits_go_on_the_command_line_under_claude_codes_own_timeout(tmp_path: Path) -> None:
    command = install.hook_command(state_root(), config_dir(), wait_s=45, max_wait_s=1200)
    assert command.endswith(" --wait 45 --max-wait 1200") and "--wait" not in _command()
    path = _settings(tmp_path)
    install.install(path, command, config_dir())
    assert install.uninstall(path, config_dir()).events == install.HOOK_EVENTS  # still recognised as Belay's
    for too_long in ({"wait_s": install.HOOK_TIMEOUT_S}, {"max_wait_s": 0}):
        with pytest.raises(ValueError, match="less than 3600 s"):
            install.hook_command(state_root(), config_dir(), **too_long)


def test_uninstall_leaves_a_project_as_it_was_before_install_and_keeps_what_the_person_put_beside(
        tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    path = install.settings_file(project, False)
    assert install.install(path, _command(), config_dir()).file_created
    assert install.uninstall(path, config_dir()).file_removed
    assert list(project.iterdir()) == []  # no empty .claude/ left behind

    install.install(path, _command(), config_dir())
    (path.parent / "commands").mkdir()
    (path.parent / "commands" / "review.md").write_text("the person's own command\n")
    assert install.uninstall(path, config_dir()).file_removed
    assert [p.name for p in path.parent.iterdir()] == ["commands"]  # .claude/ holds theirs: it stays
    assert (path.parent / "commands" / "review.md").read_text() == "the person's own command\n"


def test_uninstall_keeps_a_folder_the_person_had_even_when_it_is_empty(tmp_path: Path) -> None:
    path = _settings(tmp_path)  # .claude/ exists, without the file
    install.install(path, _command(), config_dir())
    assert install.uninstall(path, config_dir()).file_removed
    assert path.parent.is_dir() and list(path.parent.iterdir()) == []


def test_a_project_install_sends_tool_calls_to_the_workspace_door_and_keeps_the_command_for_the_session(
        tmp_path: Path) -> None:
    path = _settings(tmp_path, USERS)
    project = path.parent.parent
    door = install.project_http_hook(project, config_dir())
    install.install(path, _command(), config_dir())  # an earlier install: command hooks everywhere
    changed = install.install(path, _command(), config_dir(), http=door)
    assert set(changed.events) == install.TOOL_EVENTS  # only the tool events' entries changed
    hooks = json.loads(path.read_text())["hooks"]
    for event in install.TOOL_EVENTS:
        assert [e for e in hooks[event] if install._is_ours(e)] == [{"matcher": "*", "hooks": [
            {"type": "http", "url": door.url, "headers": {"Authorization": f"Bearer {door.token}"},
             "timeout": install.HOOK_TIMEOUT_S, "onFailure": "block"}]}]
    assert hooks["SessionStart"][0]["hooks"][0]["command"] == _command()  # Claude Code has no http SessionStart
    assert hooks["PreToolUse"][0] == USERS["hooks"]["PreToolUse"][0]  # the person's own hook is kept
    assert path.stat().st_mode & 0o777 == 0o600  # it holds the door's token now
    assert door == install.project_http_hook(project, config_dir())  # the port is the workspace's, kept
    assert install.install(path, _command(), config_dir(), http=door).events == ()
    assert set(install.uninstall(path, config_dir()).events) == set(install.HOOK_EVENTS)
    assert json.loads(path.read_text())["hooks"] == USERS["hooks"]
