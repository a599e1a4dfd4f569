"""Batches of calls run as a dependency graph: references, planning, scheduling, results.

`models` holds the records (a batch call, the plan, the report); `refs` parses and resolves
`${call.data.field}` references; `graph` turns a batch into a graph, rejects cycles and computes
the plan; `scheduler` runs it, each call through the console's full pipeline.
"""
