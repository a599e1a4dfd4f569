"""Claude Code supervised through its hooks: the command client, the console side, install and uninstall."""
