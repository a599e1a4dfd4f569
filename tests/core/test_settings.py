"""Where Belay keeps state: the console and the standalone hook client agree on every workspace's folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.outside import hook_client
from core.policy.settings import config_dir
from core.settings import CONFIG_DIR_ENV, STATE_DIR_ENV, config_root, state_root, workspace_state_dir


@pytest.mark.parametrize("name", ["shop", "my project", "ünïcode-dir", "a.b_c-d", "tab\there", "."])
def test_the_hook_client_finds_the_same_state_folder_as_the_console(tmp_path: Path, name: str) -> None:
    workspace = tmp_path / name if name != "." else tmp_path
    workspace.mkdir(exist_ok=True)
    link = tmp_path / "link-to-it"
    link.symlink_to(workspace, target_is_directory=True)
    for path in (workspace, link):
        console = workspace_state_dir(path, tmp_path / "state")
        client = hook_client.workspace_state_dir(str(tmp_path / "state"), str(path))
        assert Path(client) == console and console.parent == tmp_path / "state" / "workspaces"
    assert workspace_state_dir(link, tmp_path / "state") == workspace_state_dir(workspace, tmp_path / "state")


def test_the_state_root_follows_the_override_then_the_environment(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(STATE_DIR_ENV, str(tmp_path / "from-env"))
    assert state_root() == tmp_path / "from-env"
    assert state_root(tmp_path / "given") == tmp_path / "given"


def test_the_config_root_is_where_the_policy_reads_the_user_settings(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Commands are hidden from the directory the console keeps its token in: the same one, always."""
    monkeypatch.setenv(CONFIG_DIR_ENV, str(tmp_path / "cfg"))
    assert config_root() == config_dir() == tmp_path / "cfg"
    monkeypatch.delenv(CONFIG_DIR_ENV)
    assert config_root() == config_dir() and config_root().name == "belay"
