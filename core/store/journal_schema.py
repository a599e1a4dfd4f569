"""What the journal's database holds: its tables, the columns added since the first release, and the indexes.

Split from the journal (which writes and reads the rows) so that the shape of the database stands in one
place: `Journal` makes it when it opens a file (`SCHEMA`, then `ADDED_COLUMNS` for a journal written before
them, then `INDEXES`), and a test that needs a journal of the first release builds it from `SCHEMA` alone.
"""

from __future__ import annotations

SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
    id TEXT PRIMARY KEY, workspace TEXT NOT NULL, started_at TEXT NOT NULL, ended_at TEXT);
CREATE TABLE IF NOT EXISTS agents (
    id TEXT PRIMARY KEY, session_id TEXT NOT NULL REFERENCES sessions(id), name TEXT NOT NULL,
    kind TEXT NOT NULL, parent_id TEXT, spawned_by TEXT, tools TEXT, status TEXT NOT NULL,
    started_at TEXT NOT NULL, ended_at TEXT);
CREATE TABLE IF NOT EXISTS calls (
    id TEXT PRIMARY KEY, session_id TEXT NOT NULL, agent_id TEXT NOT NULL REFERENCES agents(id),
    tool TEXT NOT NULL, args TEXT NOT NULL, summary TEXT NOT NULL, created_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    call_id TEXT PRIMARY KEY REFERENCES calls(id), status TEXT NOT NULL, started_at TEXT,
    ended_at TEXT, duration_s REAL, output TEXT NOT NULL DEFAULT '', error TEXT);
CREATE TABLE IF NOT EXISTS decisions (
    id INTEGER PRIMARY KEY, call_id TEXT NOT NULL REFERENCES calls(id), decision TEXT NOT NULL,
    reason TEXT NOT NULL, decided_by TEXT NOT NULL, decided_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS changes (
    id INTEGER PRIMARY KEY, op_id TEXT NOT NULL, seq INTEGER NOT NULL, path TEXT NOT NULL,
    kind TEXT NOT NULL, before_hash TEXT, after_hash TEXT, before_mode INTEGER, after_mode INTEGER);
CREATE INDEX IF NOT EXISTS changes_op ON changes(op_id, seq);
CREATE TABLE IF NOT EXISTS rollbacks (
    id TEXT PRIMARY KEY, call_id TEXT NOT NULL REFERENCES calls(id), forced INTEGER NOT NULL,
    created_at TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS rollbacks_call ON rollbacks(call_id);
CREATE TABLE IF NOT EXISTS outputs (
    call_id TEXT PRIMARY KEY REFERENCES calls(id), text TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS externals (
    id TEXT PRIMARY KEY, session_id TEXT, detected_at TEXT NOT NULL, note TEXT NOT NULL DEFAULT '');
CREATE TABLE IF NOT EXISTS git_changes (
    id INTEGER PRIMARY KEY, op_id TEXT NOT NULL, seq INTEGER NOT NULL, ref TEXT NOT NULL, kind TEXT NOT NULL,
    before TEXT, after TEXT, what TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS git_changes_op ON git_changes(op_id, seq);
CREATE TABLE IF NOT EXISTS batches (
    id TEXT PRIMARY KEY, session_id TEXT NOT NULL, agent_id TEXT NOT NULL, name TEXT NOT NULL,
    plan TEXT NOT NULL, created_at TEXT NOT NULL, finished_at TEXT, summary TEXT);
CREATE TABLE IF NOT EXISTS messages (
    id TEXT PRIMARY KEY, session_id TEXT NOT NULL, agent_id TEXT NOT NULL, kind TEXT NOT NULL, text TEXT NOT NULL,
    at TEXT NOT NULL, cut INTEGER NOT NULL DEFAULT 0);
CREATE INDEX IF NOT EXISTS messages_at ON messages(at);
CREATE TABLE IF NOT EXISTS token_use (
    id TEXT PRIMARY KEY, session_id TEXT NOT NULL, agent_id TEXT NOT NULL, response_id TEXT NOT NULL,
    at TEXT NOT NULL, model TEXT NOT NULL, input INTEGER NOT NULL, output INTEGER NOT NULL,
    cache_read INTEGER NOT NULL, cache_write INTEGER NOT NULL, tool_uses TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS token_use_at ON token_use(at);
"""

# Columns added after the first release; a journal written before them gets them on open.
ADDED_COLUMNS = {
    "changes": (("old_path", "TEXT"), ("before_link", "INTEGER NOT NULL DEFAULT 0"),
                ("after_link", "INTEGER NOT NULL DEFAULT 0"), ("stored", "INTEGER NOT NULL DEFAULT 1"),
                ("reverts", "INTEGER")),
    "rollbacks": (("target", "TEXT"), ("state", "TEXT NOT NULL DEFAULT 'done'"),
                  ("message", "TEXT NOT NULL DEFAULT ''")),
    "runs": (("cached", "INTEGER NOT NULL DEFAULT 0"), ("attempts", "INTEGER NOT NULL DEFAULT 1")),
    "calls": (("batch_id", "TEXT"), ("batch_key", "TEXT"), ("use_id", "TEXT")),
    "git_changes": (("reverts", "INTEGER"),),
    "decisions": (("rule", "TEXT"), ("via", "TEXT")),
}

# Indexes that keep an undo, a redo and a rewind independent of the journal's size (see `undo_state_of`).
# Made after the added columns, which some cover, so a journal written before them gets them when opened.
INDEXES = """
CREATE INDEX IF NOT EXISTS rollbacks_target ON rollbacks(target);
CREATE INDEX IF NOT EXISTS decisions_call ON decisions(call_id);
CREATE INDEX IF NOT EXISTS calls_created ON calls(created_at);
CREATE INDEX IF NOT EXISTS calls_tool ON calls(tool, created_at);
"""
