"""Identifier types, so a call id is never passed where an agent id belongs."""

from __future__ import annotations

import secrets
import time
from typing import NewType

SessionId = NewType("SessionId", str)
"""One run of a console on a workspace: `ses_...`."""
AgentId = NewType("AgentId", str)
"""An agent, a sub-agent, an outside session or an MCP client: `agt_...`."""
CallId = NewType("CallId", str)
"""One tool call, from the request to its outcome: `call_...`."""
RollbackId = NewType("RollbackId", str)
"""One undo (or redo) of a call's changes: `undo_...`."""
BatchId = NewType("BatchId", str)
"""Calls submitted together as a dependency graph: `batch_...`."""
ExternalId = NewType("ExternalId", str)
"""Changes found on disk that no call made: `ext_...`."""
ShellId = NewType("ShellId", str)
"""A background shell a Bash call started: `bash_<n>` (numbered per console)."""


def _new(prefix: str) -> str:
    # Time-ordered prefix keeps ids sortable in the journal; the random tail
    # (64 bits) keeps them unique across processes sharing one journal, even
    # within one millisecond: 24 bits met once in a few thousand such pairs.
    return f"{prefix}_{time.time_ns() // 1_000_000:x}{secrets.token_hex(8)}"


def new_session_id() -> SessionId:
    return SessionId(_new("ses"))


def new_agent_id() -> AgentId:
    return AgentId(_new("agt"))


def new_call_id() -> CallId:
    return CallId(_new("call"))


def new_rollback_id() -> RollbackId:
    return RollbackId(_new("undo"))


def new_external_id() -> ExternalId:
    return ExternalId(_new("ext"))


def new_batch_id() -> BatchId:
    return BatchId(_new("batch"))
