"""The core's vocabulary: frozen records that events, the journal and front ends share.

The bottom layer of the core: modules here import only the standard library,
pydantic, `core.errors` and `core.ids`.  `records` holds calls, runs, agents
and what they changed; `diffs`, `batches`, `policy`, `bash` and `mcp` hold
the records of those concerns that events carry.
"""
