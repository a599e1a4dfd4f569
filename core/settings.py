"""Where Belay keeps its state, and the settings a session starts with.

State lives under the user's data directory (platformdirs), one folder per
workspace; `--state-dir` or the `BELAY_STATE_DIR` environment variable
moves the root, which tests and the demo use to stay self-contained.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

STATE_DIR_ENV = "BELAY_STATE_DIR"
CONFIG_DIR_ENV = "BELAY_CONFIG_DIR"


def state_root(override: str | os.PathLike[str] | None = None) -> Path:
    """The directory holding every workspace's journal and blobs."""
    if override:
        return Path(override).expanduser().resolve()
    env = os.environ.get(STATE_DIR_ENV)
    if env:
        return Path(env).expanduser().resolve()
    import platformdirs  # only without an override: it takes `belay calls` a tenth of its start

    return Path(platformdirs.user_data_dir("belay", appauthor=False))


def config_root() -> Path:
    """Where the user's settings and the console's token live: $BELAY_CONFIG_DIR, else the platform's config
    directory.  For the layers below the policy, which must hide it from commands; core.policy.settings.config_dir
    answers the same (tests/core/test_settings.py holds the two together)."""
    env = os.environ.get(CONFIG_DIR_ENV)
    if env:
        return Path(env).expanduser()
    import platformdirs

    return Path(platformdirs.user_config_dir("belay", appauthor=False))


def workspace_state_dir(workspace: Path, override: str | os.PathLike[str] | None = None) -> Path:
    """The folder for one workspace: its name plus a hash of its real path.

    The hook client (core/outside/hook_client.py, a standalone script that imports nothing of Belay's)
    computes the same folder with its own copy of these lines, to find the console's socket;
    tests/core/test_settings.py holds the two to the same answers.
    """
    real = os.path.realpath(workspace)
    digest = hashlib.sha256(real.encode()).hexdigest()[:12]
    name = "".join(c if c.isalnum() or c in "-_." else "_" for c in os.path.basename(real)) or "root"
    return state_root(override) / "workspaces" / f"{name}-{digest}"
