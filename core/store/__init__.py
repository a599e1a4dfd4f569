"""What Belay keeps on disk: the journal, the blob store, checked file reads and writes, the workspace lock."""
