"""Identifier types, so a call id is never passed where an agent id belongs."""

from __future__ import annotations

import secrets
import time
from typing import NewType

SessionId = NewType("SessionId", str)
AgentId = NewType("AgentId", str)
CallId = NewType("CallId", str)
RollbackId = NewType("RollbackId", str)


def _new(prefix: str) -> str:
    # Time-ordered prefix keeps ids sortable in the journal; the random tail
    # keeps them unique across processes sharing one journal.
    return f"{prefix}_{time.time_ns() // 1_000_000:x}{secrets.token_hex(3)}"


def new_session_id() -> SessionId:
    return SessionId(_new("ses"))


def new_agent_id() -> AgentId:
    return AgentId(_new("agt"))


def new_call_id() -> CallId:
    return CallId(_new("call"))


def new_rollback_id() -> RollbackId:
    return RollbackId(_new("undo"))


def new_external_id() -> str:
    return _new("ext")


def new_batch_id() -> str:
    return _new("batch")
