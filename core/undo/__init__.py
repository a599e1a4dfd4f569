"""Undo, redo and rewind: planning, three-way merge, all-or-nothing restore, git references, crash recovery."""
