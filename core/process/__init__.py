"""Running commands: the process tree, the sandbox, the environment, background shells, their output."""
