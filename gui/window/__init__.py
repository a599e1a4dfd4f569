"""The window: Qt widgets and item models over the core's read models, on the one thread Qt and asyncio share."""
