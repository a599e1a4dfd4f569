"""Start fast (issue 15): a bare `belay` paints its window before the heavy parts of Belay are imported.

`bench/startup.py` measures the time; these tests keep what it depends on from creeping back: the core's
facade imports a name's module when the name is first used (PEP 562), and the console path (the command
line, the hub's window) imports only what paints that window.  The hub's socket, the console, the policy
engine, the agents, the pydantic models and a workspace's page are loaded after the first paint.
"""

from __future__ import annotations

import ast
import importlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import core
from tests.conftest import ROOT

NOT_BEFORE_FIRST_PAINT = (
    "claude_agent_sdk", "mcp", "nbformat", "jsonschema", "httpx2", "mcp_types", "pygments", "yaml",
    "pydantic",  # its first model costs ~0.15 s: the hub's socket and the core's records load after the paint
    "core.console", "core.events", "core.policy.engine", "core.policy.bash", "core.agents", "core.run",
    "core.orchestration", "core.outside.endpoint", "core.outside.requests", "core.changes", "core.mcp.client",
    "gui.window.workspace.window", "gui.window.approvals.panel", "gui.window.review.canvas", "gui.window.review.rows",
    "gui.window.panels.details", "gui.window.review.highlight",
)
"""Modules (and their submodules) a bare `belay` must not have imported when its window first paints."""

CHILD = r"""
import json, os, sys, time
start = time.perf_counter()
from gui.terminal.cli import main  # what `belay` runs, in its order: the command line, the core's facade, Qt
import core
from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QApplication, QWidget

report = {}

class FirstPaint(QObject):
    def eventFilter(self, obj, event):
        if "painted" not in report and event.type() == QEvent.Type.Paint and isinstance(obj, QWidget) \
                and obj.isWindow():
            report["painted"] = sorted(sys.modules)
            report["paint_s"] = time.perf_counter() - start
        return False

def served():
    from core import hub_socket, state_root
    if "painted" in report and hub_socket(str(state_root())) and "gui.window.review.canvas" in sys.modules:
        report["ready_s"] = time.perf_counter() - start
        report["after"] = sorted(sys.modules)
        sys.stdout.write(json.dumps(report) + "\n")
        sys.stdout.flush()
        os._exit(0)

app = QApplication(sys.argv[:1])
spy = FirstPaint()
app.installEventFilter(spy)
poll = QTimer()
poll.timeout.connect(served)
poll.start(20)
main([])
sys.exit("the console closed before it served its socket")
"""


def _imported(modules: list[str], names: tuple[str, ...]) -> list[str]:
    return [name for name in names if any(m == name or m.startswith(name + ".") for m in modules)]


def test_belay_paints_before_the_heavy_parts_load_and_serves_after(tmp_path: Path) -> None:
    """The console a person gets from `belay` (private state and config; the first-run screen seen): at its
    first paint none of the heavy modules is imported; then the hub serves its socket and what opening a
    workspace needs is loaded (the warm-up), so the first request does not wait for the imports."""
    config = tmp_path / "config"
    config.mkdir()
    (config / "first-run-done").write_text("seen\n", encoding="utf-8")  # gui.window.chrome.first_run.MARK
    env = {**os.environ, "BELAY_CONFIG_DIR": str(config), "BELAY_STATE_DIR": str(tmp_path / "state"),
           "QT_QPA_PLATFORM": "offscreen"}
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-c", CHILD], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    early = _imported(report["painted"], NOT_BEFORE_FIRST_PAINT)
    assert early == [], (f"imported before `belay` first paints its window: {', '.join(early)}; import them "
                         "where they are used (or after the first paint, gui/window/app.py's warm-up)")
    assert {"core.console", "core.outside.endpoint", "gui.window.workspace.window", "gui.window.review.canvas"} \
        <= set(report["after"])
    assert report["paint_s"] < report["ready_s"] < time.monotonic() - started


def _facade() -> tuple[dict[str, tuple[str, str]], dict[str, tuple[str, str]]]:
    """core/__init__.py's TYPE_CHECKING imports and its lazy table, each as name -> (module, attribute)."""
    tree = ast.parse((ROOT / "core" / "__init__.py").read_text(encoding="utf-8"))
    checked = next(node for node in tree.body if isinstance(node, ast.If)
                   and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING")
    typed = {alias.asname or alias.name: (node.module, alias.name)
             for node in checked.body if isinstance(node, ast.ImportFrom) and node.module
             for alias in node.names}
    return typed, dict(core._WHERE)


def test_the_lazy_facade_gives_every_name_its_module_gives() -> None:
    typed, lazy = _facade()
    assert typed == lazy, "core/__init__.py: the TYPE_CHECKING imports and _EXPORTS name different things"
    assert sorted(core.__all__) == sorted(lazy)
    for name, (module, attribute) in lazy.items():
        assert getattr(core, name) is getattr(importlib.import_module(module), attribute), name
    assert set(core.__all__) <= set(dir(core))


def test_an_unknown_name_is_an_attribute_error_naming_it() -> None:
    try:
        core.NoSuchThing  # noqa: B018 - the lookup is the test
    except AttributeError as e:
        assert "NoSuchThing" in str(e)
    else:
        raise AssertionError("core.NoSuchThing did not raise")
