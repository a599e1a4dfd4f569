"""Where the pinned npm test tools are (test-tools/package.json), and why a test skips without them.

`make test` installs them with `npm ci` when npm is on the machine; a test that needs one calls
`require(name)` and gets the binary's path, or skips saying what to run.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2] / "test-tools"
BIN = ROOT / "node_modules" / ".bin"


def path(name: str) -> Path | None:
    """The installed binary `name` (codex, gemini, conformance, node), or None."""
    found = BIN / name
    return found if found.exists() else None


def require(name: str) -> Path:
    found = path(name)
    if found is None:
        why = ("npm is not on this machine" if shutil.which("npm") is None
               else "the test tools are not installed")
        pytest.skip(f"{name} from test-tools/ is missing ({why}): run `make test-tools`")
    return found


def node_dir() -> Path:
    """The folder of the pinned Node.js (22), to put first on PATH for tools that need it."""
    return require("node").resolve().parent
