"""Agents' own transcripts read as they grow: the incremental reader, each agent CLI's record formats."""
