"""What the one thread runs on: the loop Qt and asyncio share, the window's owned tasks, the GUI-thread collector."""
