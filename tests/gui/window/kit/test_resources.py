"""Where the shipped resources are found (gui.window.kit.resources): beside the code, or where BELAY_RESOURCES says."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from core import load_script
from gui.window.kit import resources, theme
from tests.conftest import ROOT


def test_the_demo_and_the_style_sheet_are_found_beside_the_code(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(resources.RESOURCES_ENV, raising=False)
    assert resources.resources_dir() == ROOT / "resources"
    assert (resources.demo_workspace_template() / "README.md").is_file()  # what `belay demo` copies
    script = load_script(resources.demo_script())  # what `belay demo` runs
    assert script.steps
    assert theme.LIGHT.base_bg in theme.style_sheet(theme.LIGHT)  # the window's look, from the template


def test_belay_resources_points_the_demo_and_the_look_elsewhere(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """A bundle that keeps its resources in another place sets BELAY_RESOURCES: everything is read from there."""
    elsewhere = tmp_path / "bundle" / "resources"
    shutil.copytree(ROOT / "resources" / "demo", elsewhere / "demo")
    (elsewhere / "demo" / "script.yaml").write_text(
        "name: bundled-agent\nsteps:\n  - {tool: LS, args: {path: '{workspace}'}}\n", encoding="utf-8")
    (elsewhere / "styles").mkdir()
    (elsewhere / "styles" / "belay.qss").write_text("QWidget { color: $text; }\n", encoding="utf-8")
    monkeypatch.setenv(resources.RESOURCES_ENV, str(elsewhere))
    assert resources.demo_workspace_template() == elsewhere / "demo" / "workspace"
    assert load_script(resources.demo_script()).name == "bundled-agent"
    assert theme.style_sheet(theme.DARK) == f"QWidget {{ color: {theme.DARK.text}; }}\n"
