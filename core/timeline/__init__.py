"""The timeline read model: agents, batches and runs as a tree, built from events."""
