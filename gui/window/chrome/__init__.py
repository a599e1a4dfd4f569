"""The window's frame: banners, the mode selector, the status line, attention, first run, the shortcuts sheet."""
