"""Reading and editing a change: diffs highlighted, reviewed hunk by hunk, and a pending write edited."""
