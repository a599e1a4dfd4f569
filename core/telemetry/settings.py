"""`[telemetry]` in the user's settings: where spans go, and whether they may carry contents.

```toml
[telemetry]
otlp_endpoint = "http://127.0.0.1:4318/v1/traces"   # OTLP over HTTP (protobuf); unset: nothing is sent
contents = false                                    # true: a call's arguments and output go with its span
headers = { authorization = "Bearer …" }             # sent with each export, for a collector that wants them
```

Read from the user's file only: a workspace's settings come with its code,
and must not be able to send what is done in it somewhere else.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit


@dataclass(frozen=True)
class TelemetrySettings:
    otlp_endpoint: str | None = None
    """The OTLP/HTTP traces URL; None: no export (the default)."""
    contents: bool = False
    """Send a call's arguments and output with its span (off: tool, ids, decision, outcome and paths only)."""
    headers: tuple[tuple[str, str], ...] = ()
    """HTTP headers sent with each export (a collector's token)."""


def read_telemetry(table: Any, path: Path, scope: str) -> tuple[TelemetrySettings | None, list[str]]:
    """The `[telemetry]` table of a settings file, and what is wrong with it (the defaults for what is)."""
    if not isinstance(table, dict):
        return None, [f"{path}: [telemetry] must be a table"]
    if scope != "user":
        return None, [f"{path}: [telemetry] is ignored here; where spans are sent is set in your user settings only"]
    problems = [f"{path}: unknown key {key!r} in [telemetry] (expected otlp_endpoint, contents, headers)"
                for key in table if key not in ("otlp_endpoint", "contents", "headers")]
    endpoint = table.get("otlp_endpoint")
    if endpoint is not None:
        parts = urlsplit(endpoint) if isinstance(endpoint, str) else None
        if parts is None or parts.scheme not in ("http", "https") or not parts.netloc:
            problems.append(f"{path}: [telemetry] otlp_endpoint must be an http(s) URL such as "
                            "http://127.0.0.1:4318/v1/traces; nothing is sent")
            endpoint = None
    contents = table.get("contents", False)
    if not isinstance(contents, bool):
        problems.append(f"{path}: [telemetry] contents must be true or false; false applies")
        contents = False
    headers = table.get("headers", {})
    if not isinstance(headers, dict) or not all(isinstance(v, str) for v in headers.values()):
        problems.append(f"{path}: [telemetry] headers must be a table of strings; none are sent")
        headers = {}
    return TelemetrySettings(endpoint, contents, tuple(headers.items())), problems
