"""A real workspace and a throwaway home for the Bash analysis and policy tests.

The workspace holds a git directory, a source tree and a file; the home holds
a credential store and a shell start-up file; a third directory lies outside
both.  HOME and BELAY_CONFIG_DIR point into the test's own temporary
directory, so no test reads or writes the real user's settings.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from core.policy.engine import PolicyEngine

from .harness import Bash


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("PRIVATE KEY\n")
    (home / ".bashrc").write_text("# rc\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("BELAY_CONFIG_DIR", str(tmp_path / "config"))
    return home


@pytest.fixture
def ws(tmp_path: Path, home: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / ".git" / "hooks").mkdir(parents=True)
    (ws / "src").mkdir()
    (ws / "src" / "app.py").write_text("print(1)\n")
    (ws / "notes.txt").write_text("notes\n")
    return ws


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    path = tmp_path / "outside"
    path.mkdir()
    (path / "secret.txt").write_text("OUTSIDE\n")
    return path


@pytest.fixture
def engine(ws: Path) -> PolicyEngine:
    engine = PolicyEngine()
    assert engine.load(ws) == []
    return engine


@pytest.fixture
def bash(engine: PolicyEngine, ws: Path, outside: Path, home: Path) -> Bash:
    return Bash(engine, ws, outside, home)
