"""One workspace's window: the timeline beside the approvals and tabs, fed by the bridge from the console's events."""
