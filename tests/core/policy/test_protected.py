"""Protected paths (asked about in every mode) and secrets (never read)."""

from __future__ import annotations

import pytest

from core.policy.protected import home_secret, mentioned_protected, proc_secret, protected_reason, secret_reason


@pytest.mark.parametrize("path", [
    "/w/.git/hooks/pre-commit", "/w/.git/config", "/w/.git", "/w/sub/.git/config", "/w/.belay/settings.toml",
    "/w/.claude/settings.json", "/w/.vscode/tasks.json", "/w/.bashrc", "/w/sub/.zshrc", "/w/.profile",
    "/w/.envrc", "/w/.mcp.json", "/home/u/.config/git/config", "/home/u/.config/fish/config.fish",
    "/w/.husky/pre-commit",
])
def test_protected_paths_have_a_reason(path: str) -> None:
    reason = protected_reason(path)
    assert reason is not None and path in reason


@pytest.mark.parametrize("path", ["/w/src/git.py", "/w/.gitignore", "/w/.github/workflows/ci.yml", "/w/bashrc",
                                  "/w/.bashrc.d/x", "/w/config/fish", "/w/notes/.git-notes"])
def test_ordinary_paths_are_not_protected(path: str) -> None:
    assert protected_reason(path) is None


@pytest.mark.parametrize(("path", "secret"), [
    ("/proc/self/environ", True), ("/proc/1234/environ", True), ("/proc/thread-self/environ", True),
    ("/proc/12/task/13/environ", True), ("/proc/12/mem", True), ("/proc/12/fd/3", True),
    ("/proc/12/root/etc/shadow", True), ("/proc/self/../self/environ", True), ("/proc/cpuinfo", False),
    ("/proc/12/cmdline", False), ("/proc/12/status", False), ("//proc/self/environ", True), ("/procfs/x", False),
])
def test_process_secrets(path: str, secret: bool) -> None:
    assert proc_secret(path) is secret


@pytest.mark.parametrize(("path", "secret"), [
    ("/home/u/.ssh/id_rsa", True), ("/home/u/.ssh", True), ("/home/u/.aws/credentials", True),
    ("/home/u/.netrc", True), ("/home/u/.config/gh/hosts.yml", True), ("/home/u/.docker/config.json", True),
    ("/home/u/.sshx", False), ("/home/u/src/.ssh/x", False), ("/other/.ssh/id_rsa", False), ("relative", False),
    ("//home/u/.ssh/id_rsa", True), ("//home/u/.aws/credentials", True),  # POSIX keeps a leading //
])
def test_credential_stores_in_home(path: str, secret: bool) -> None:
    assert home_secret(path, "/home/u") is secret
    assert (secret_reason(path, "/home/u") is not None) is secret


@pytest.mark.parametrize(("line", "named"), [
    ("python -c 'open(\".git/hooks/x\", \"w\")'", ".git"), ("X=.git/hooks/p; echo > $X", ".git"),
    ("cp x ~/.bashrc", ".bashrc"), ("cd sub/.vscode", ".vscode"), ("git add .gitignore", None),
    ("ls .github/x", None), ("echo .gitx", None), ("npm test", None),
])
def test_a_command_line_naming_a_protected_place(line: str, named: str | None) -> None:
    assert mentioned_protected(line) == named


def test_belays_own_configuration_and_state_are_protected_from_writes(tmp_path, monkeypatch) -> None:  # noqa: ANN001
    from core.policy.protected import protected_reason
    monkeypatch.setenv("BELAY_CONFIG_DIR", str(tmp_path / "cfg"))
    monkeypatch.setenv("BELAY_STATE_DIR", str(tmp_path / "state"))
    assert "Belay's own" in (protected_reason(tmp_path / "cfg" / "trusted-workspaces.json") or "")
    assert "Belay's own" in (protected_reason(tmp_path / "state" / "workspaces" / "x" / "journal.db") or "")
    assert protected_reason(tmp_path / "elsewhere.txt") is None


@pytest.mark.parametrize("store", [
    ".codex/auth.json", ".gemini/oauth_creds.json", ".vault-token", ".pgpass", ".cargo/credentials",
    ".cargo/credentials.toml", ".config/rclone/rclone.conf", ".terraform.d/credentials.tfrc.json", ".config/hub",
    ".config/op/config", ".m2/settings.xml", ".gradle/gradle.properties", ".s3cfg", ".boto",
    ".config/doctl/config.yaml", ".fly/config.yml", ".ngrok2/ngrok.yml", ".config/ngrok/ngrok.yml",
    ".wrangler/config/default.toml", ".config/heroku/config.json", ".claude.json", ".config/git/credentials",
    ".bash_history", ".zsh_history", ".local/share/fish/fish_history", ".python_history", ".psql_history",
    ".mysql_history", ".node_repl_history", ".lesshst", ".viminfo", ".sqlite_history",
])
def test_agent_logins_cloud_and_registry_tokens_and_histories_are_credential_stores(store: str) -> None:
    assert home_secret(f"/home/u/{store}", "/home/u")
    assert secret_reason(f"/home/u/{store}", "/home/u") is not None
    assert not home_secret(f"/w/{store}", "/home/u")  # a project's file of the same name is not the user's


@pytest.mark.parametrize(("path", "secret"), [
    ("/home/u/.codex/config.toml", False), ("/home/u/.gemini/settings.json", False),  # settings, not logins
    ("/home/u/.cargo/bin/cargo", False), ("/home/u/.m2/repository/x.jar", False), ("/home/u/.bash_historyx", False),
    ("/home/u/.claude/settings.json", False),
])
def test_the_rest_of_those_tools_folders_is_no_credential_store(path: str, secret: bool) -> None:
    assert home_secret(path, "/home/u") is secret


@pytest.mark.parametrize(("path", "secret"), [
    ("/etc/shadow", True), ("/etc/gshadow", True), ("/etc/shadow-", True), ("/etc/gshadow-", True),
    ("/etc/ssh/ssh_host_ed25519_key", True), ("/etc/ssh/ssh_host_rsa_key", True), ("//etc/shadow", True),
    ("/etc/ssh/ssh_host_ed25519_key.pub", False), ("/etc/passwd", False), ("/etc/group", False),
    ("/w/etc/shadow", False),
])
def test_the_systems_password_hashes_and_host_keys_are_secrets(path: str, secret: bool) -> None:
    assert (secret_reason(path, "/home/u") is not None) is secret


@pytest.mark.parametrize("path", [
    "/w/.codex/hooks.json", "/w/.codex/config.toml", "/home/u/.codex/config.toml", "/w/.gemini/settings.json",
    "/home/u/.gemini/settings.json", "/w/.cursor/mcp.json", "/w/.pre-commit-config.yaml", "/w/.cargo/config.toml",
    "/w/.cargo/config", "/home/u/.cargo/config.toml", "/w/.npmrc", "/w/.yarnrc", "/w/.yarnrc.yml", "/w/.pypirc",
    "/w/.venv/pip.conf", "/home/u/.config/pip/pip.conf", "/w/.devcontainer/devcontainer.json",
])
def test_agent_hook_settings_and_files_that_make_a_tool_run_code_are_protected(path: str) -> None:
    reason = protected_reason(path)
    assert reason is not None and path in reason


@pytest.mark.parametrize("path", ["/w/.cargo/registry/x.crate", "/w/src/npmrc.py", "/w/.gitattributes",
                                  "/w/docs/pre-commit-config.yaml", "/w/.config/pipx/x"])
def test_neighbours_of_those_files_are_not_protected(path: str) -> None:
    assert protected_reason(path) is None


@pytest.mark.parametrize(("line", "named"), [
    ("python -c 'open(\".codex/hooks.json\", \"w\")'", ".codex"), ("X=.gemini/settings.json; echo > $X", ".gemini"),
    ("node -e 'fs.writeFileSync(\".npmrc\", s)'", ".npmrc"), ("perl -e 'open F, \">.cargo/config.toml\"'",
                                                               ".cargo/config.toml"),
])
def test_a_command_line_naming_a_new_protected_place(line: str, named: str) -> None:
    assert mentioned_protected(line) == named


@pytest.mark.parametrize(("pattern", "secret"), [
    ("/proc/\0/environ", True), ("/proc/\0/task/\0/environ", True), ("/proc/*/mem", True), ("/proc/[0-9]*/fd/3", True),
    ("/proc/\0/e*", True), ("/proc/\0/\0", True), ("/proc/1\0/cwd", True), ("/proc/12/\0", True),
    ("/proc/\0/root/etc/shadow", True), ("//proc/\0/environ", True), ("/proc/\0/../1/environ", True),
    ("/proc/\0/status", False), ("/proc/\0", False), ("/proc/\0/cmdline", False), ("/proc/*/stat", False),
    ("/proc/\0/net/dev", False), ("/proc/net/\0", False), ("/proc/sys/\0", False), ("\0/proc/1/environ", False),
])
def test_a_process_only_known_at_run_time_is_any_process(pattern: str, secret: bool) -> None:
    """A NUL stands for a part of the path only known at run time (`/proc/$PPID/environ`), a glob for any name."""
    assert proc_secret(pattern) is secret
    assert (secret_reason(pattern, "/home/u") is not None) is secret


@pytest.mark.parametrize(("pattern", "secret"), [
    ("/home/u/.ssh/\0", True), ("/home/u/.codex/auth\0", False), ("/home/u/\0/.ssh/id_rsa", False),
    ("/home/u/.config/\0", False),
])
def test_a_path_with_run_time_parts_inside_a_credential_store_is_a_secret(pattern: str, secret: bool) -> None:
    assert (secret_reason(pattern, "/home/u") is not None) is secret
