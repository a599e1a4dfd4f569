"""Taking changes back: undo, redo and rewind as the window runs them, the conflict dialog, the changes view."""
