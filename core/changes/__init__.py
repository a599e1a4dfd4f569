"""Who changed what in the workspace: the index, the watcher, ignore rules, git state, diffs."""
