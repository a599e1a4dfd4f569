"""Whether a call may run: rules, layered settings, modes, protected paths, and the Bash command analysis."""
