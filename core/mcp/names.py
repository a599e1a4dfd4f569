"""How an MCP server's tools are named in Belay: `mcp__<server>__<tool>`, within [A-Za-z0-9_-], 64 at most.

Agents' APIs accept tool names of `[A-Za-z0-9_-]{1,64}`; servers may use
any string.  So:

* A server's name is its key in the settings and must already be of that
  alphabet without `__` (which separates the parts), at most 40 long: it is
  what `[tools] disable = ["mcp:<server>"]` and rules (`mcp__<server>`)
  name, so it is refused with a message rather than silently changed.
* A tool's name has every other character replaced by `_`, and is cut so
  that the whole name fits in 64.  A name that had to be changed and then
  equals another tool's gets `-` and 8 hex digits of the SHA-256 of its
  original name, so the result never depends on the order of the listing.

The original name is kept and used when calling the server.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Iterable

MAX_NAME = 64
MAX_SERVER_NAME = 40
PREFIX = "mcp__"
_SERVER = re.compile(r"[A-Za-z0-9-]+(?:_[A-Za-z0-9-]+)*")
_OUTSIDE = re.compile(r"[^A-Za-z0-9_-]")
_HASH_LEN = 8


def server_name_problem(name: str) -> str | None:
    """Why `name` cannot name an MCP server, or None when it can."""
    if len(name) > MAX_SERVER_NAME:
        return f"the name {name!r} is longer than {MAX_SERVER_NAME} characters"
    if not _SERVER.fullmatch(name):
        return (f"the name {name!r} must be letters, digits, '-' and single '_' (no '__', not at either end), "
                "because it becomes part of tool names")
    return None


def tool_names(server: str, remote: Iterable[str]) -> dict[str, str]:
    """Each original tool name of `server` -> its name in Belay (unique, `mcp__<server>__...`)."""
    prefix = f"{PREFIX}{server}__"
    room = MAX_NAME - len(prefix)
    plain = {name: (_OUTSIDE.sub("_", name) or "_")[:room] for name in dict.fromkeys(remote)}
    counts = Counter(plain.values())
    names = {}
    for name, local in plain.items():
        if local != name and counts[local] > 1:
            digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:_HASH_LEN]
            local = f"{local[:room - _HASH_LEN - 1]}-{digest}"
        names[name] = prefix + local
    return names
