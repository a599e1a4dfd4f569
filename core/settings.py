"""Where Belay keeps its state, and the settings a session starts with.

State lives under the user's data directory (platformdirs), one folder per
workspace; `--state-dir` or the `BELAY_STATE_DIR` environment variable
moves the root, which tests and the demo use to stay self-contained.
"""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

from core.outside import hook_client

STATE_DIR_ENV = "BELAY_STATE_DIR"


def state_root(override: str | os.PathLike[str] | None = None) -> Path:
    """The directory holding every workspace's journal and blobs."""
    if override:
        return Path(override).expanduser().resolve()
    env = os.environ.get(STATE_DIR_ENV)
    if env:
        return Path(env).expanduser().resolve()
    return Path(platformdirs.user_data_dir("belay", appauthor=False))


def workspace_state_dir(workspace: Path, override: str | os.PathLike[str] | None = None) -> Path:
    """The folder for one workspace: its name plus a hash of its real path.

    Computed by the hook client's function, so the client (standard library
    only) and the console can never disagree on where the socket is.
    """
    return Path(hook_client.workspace_state_dir(str(state_root(override)), os.fspath(workspace)))