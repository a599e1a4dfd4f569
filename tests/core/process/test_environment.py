"""The child environment: allowlist, no secrets, no startup hooks, a PATH without the workspace."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from core.process.environment import FIXED, build_env, refusal, sanitize_path
from tests.conftest import ROOT

HOST = {
    "PATH": "/usr/bin:/bin", "HOME": "/home/u", "LANG": "en_US.UTF-8", "LC_TIME": "C", "TERM": "xterm-256color",
    "ANTHROPIC_API_KEY": "sk-ant-SENTINEL-0001", "AWS_SECRET_ACCESS_KEY": "SENTINEL/aws", "GITHUB_TOKEN": "ghp_x",
    "DATABASE_URL": "postgres://u:pw@db/x", "SENTRY_DSN": "https://k@sentry", "MY_SESSION": "s",
    "BASH_ENV": "/ws/evil.sh", "LD_PRELOAD": "/ws/evil.so", "PROMPT_COMMAND": "touch x", "SHELLOPTS": "xtrace",
    "PS4": "$(touch x)", "PYTHONSTARTUP": "/ws/evil.py", "NODE_OPTIONS": "--require /ws/evil.js",
    "MULTILINE": "x\ntouch /ws/PWNED", "PROJECT_NAME": "demo", "EXTRA_URL": "https://user:hunter2@example.com",
}


def test_only_allowlisted_variables_pass(tmp_path: Path) -> None:
    env = build_env(tmp_path, tmpdir="/tmp", host=HOST)
    assert env["HOME"] == "/home/u" and env["LANG"] == "en_US.UTF-8" and env["LC_TIME"] == "C"
    assert env["TMPDIR"] == "/tmp" and env["PATH"] == "/usr/bin:/bin"
    for name in ("ANTHROPIC_API_KEY", "AWS_SECRET_ACCESS_KEY", "GITHUB_TOKEN", "DATABASE_URL", "SENTRY_DSN",
                 "BASH_ENV", "LD_PRELOAD", "PROMPT_COMMAND", "SHELLOPTS", "PS4", "PYTHONSTARTUP", "NODE_OPTIONS",
                 "MULTILINE", "PROJECT_NAME", "MY_SESSION"):
        assert name not in env
    assert not any("SENTINEL" in value for value in env.values())


def test_interactive_programs_are_told_not_to_wait(tmp_path: Path) -> None:
    env = build_env(tmp_path, tmpdir="/tmp", host=HOST)
    assert {k: env[k] for k in FIXED} == FIXED
    assert env["GIT_TERMINAL_PROMPT"] == "0" and env["GIT_EDITOR"] == "true" and env["PAGER"] == "cat"
    assert env["TERM"] == "dumb" and "CI" not in env


def test_passthrough_names_pass_but_secret_values_and_newlines_do_not(tmp_path: Path) -> None:
    env = build_env(tmp_path, tmpdir="/t", host=HOST,
                    passthrough=("PROJECT_NAME", "EXTRA_URL", "MULTILINE", "GITHUB_TOKEN", "BASH_ENV"))
    assert env["PROJECT_NAME"] == "demo"
    assert "EXTRA_URL" not in env  # a URL with a password in it
    assert "MULTILINE" not in env and "GITHUB_TOKEN" not in env and "BASH_ENV" not in env


def test_locale_defaults_to_utf8(tmp_path: Path) -> None:
    assert build_env(tmp_path, tmpdir="/t", host={"PATH": "/bin"})["LANG"] == "C.UTF-8"


@pytest.mark.parametrize(("name", "why"), [
    ("OPENAI_API_KEY", "secret"), ("my_token", "secret"), ("GH_PAT", "secret"), ("DB_PASSWD", "secret"),
    ("AWS_SESSION_TOKEN", "secret"), ("SENTRY_DSN", "secret"), ("DATABASE_URL", "secret"), ("COOKIE_JAR", "secret"),
    ("BASH_ENV", "on start"), ("LD_PRELOAD", "on start"), ("NODE_OPTIONS", "on start"), ("GIT_SSH_COMMAND", "on start"),
    ("BASH_FUNC_ls%%", "not a valid"), ("PAGER", "set by Belay"),
])
def test_refusals_say_why(name: str, why: str) -> None:
    reason = refusal(name)
    assert reason is not None and why in reason


def test_harmless_names_are_not_refused() -> None:
    assert refusal("PROJECT_NAME") is None and refusal("JAVA_HOME") is None and refusal("GIT_AUTHOR_NAME") is None


def test_path_loses_empty_relative_and_workspace_entries(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "bin").mkdir(parents=True)
    (tmp_path / "link").symlink_to(ws / "bin")
    raw = f"::.:bin:{ws}/bin:{tmp_path}/link:{ws}:/usr/bin:/usr/bin:/bin"
    assert sanitize_path(raw, ws) == "/usr/bin:/bin"
    assert sanitize_path(f"{ws}/bin", ws) == "/usr/local/bin:/usr/bin:/bin"


_PEEK = """
import ctypes, os, subprocess, sys
sys.path.insert(0, sys.argv[1])
from core.process.environment import make_non_dumpable
libc = ctypes.CDLL(None)
if sys.argv[2] == "drop" and os.geteuid() == 0:
    os.setgroups([]); os.setresgid(65534, 65534, 65534); os.setresuid(65534, 65534, 65534)
    libc.prctl(4, 1, 0, 0, 0)  # changing uid cleared the flag; restore what an ordinary process has
def peek():
    cmd = "tr '\\\\0' '\\\\n' < /proc/$PPID/environ"
    out = subprocess.run(["sh", "-c", cmd], capture_output=True, text=True, cwd="/", env={"PATH": "/usr/bin:/bin"})
    return "BELAY_SENTINEL" in out.stdout
before = peek()
done = make_non_dumpable()
print(before, done, peek())
"""


def _peek(mode: str) -> list[str]:
    env = {**os.environ, "BELAY_TEST_SECRET": "BELAY_SENTINEL"}
    result = subprocess.run([sys.executable, "-c", _PEEK, str(ROOT), mode], capture_output=True, text=True,
                            env=env, timeout=20, check=True)
    return result.stdout.split()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prctl is Linux-only")
def test_non_dumpable_console_hides_its_environ_from_same_user_children() -> None:
    """An ordinary user's child reads /proc/<parent>/environ until the parent is made non-dumpable."""
    assert _peek("drop") == ["True", "True", "False"]


@pytest.mark.skipif(not sys.platform.startswith("linux") or os.geteuid() != 0, reason="a fact about root")
def test_a_root_child_with_capabilities_still_reads_it() -> None:
    """CAP_SYS_PTRACE overrides the flag: for root, only the sandbox's PID namespace hides the console (test_sandbox)."""
    assert _peek("keep") == ["True", "True", "True"]
