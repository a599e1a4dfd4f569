"""Where the shipped resources (demo workspace, scripts, the style sheet template) live."""

from __future__ import annotations

import os
from pathlib import Path

RESOURCES_ENV = "BELAY_RESOURCES"


def resources_dir() -> Path:
    override = os.environ.get(RESOURCES_ENV)
    if override:
        return Path(override)
    return Path(__file__).resolve().parents[3] / "resources"


def demo_workspace_template() -> Path:
    return resources_dir() / "demo" / "workspace"


def demo_script() -> Path:
    return resources_dir() / "demo" / "script.yaml"

