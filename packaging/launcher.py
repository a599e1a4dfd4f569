"""The frozen bundle's entry point: the same `main` the wheel's `belay` console script runs.

Belay starts a few helpers of its own as `sys.executable -I -S script.py ...` or `sys.executable -I -c
CODE ...` (the hook command an agent CLI runs, the Bash tool's resource limits, Grep without rg).  In the
bundle `sys.executable` is this program, so it plays that interpreter for exactly those forms: Python's
isolation flags first, then a script or `-c`.  Anything else is Belay's command line.
"""

import runpy
import sys

INTERPRETER_FLAGS = ("-I", "-S", "-IS", "-SI")


def _as_interpreter(argv: list[str]) -> bool:
    """Run `[-I] [-S] (script.py | -c CODE) args...` as Python would; False when argv is not that."""
    rest = list(argv)
    while rest and rest[0] in INTERPRETER_FLAGS:
        rest.pop(0)
    if len(rest) == len(argv) or not rest:
        return False
    if rest[0] == "-c" and len(rest) > 1:
        sys.argv = ["-c", *rest[2:]]
        exec(compile(rest[1], "<string>", "exec"), {"__name__": "__main__"})  # noqa: S102 - Belay's own helper
        return True
    if rest[0].endswith(".py"):
        sys.argv = rest
        runpy.run_path(rest[0], run_name="__main__")
        return True
    return False


if __name__ == "__main__":
    if not _as_interpreter(sys.argv[1:]):
        from gui.terminal.cli import main
        sys.exit(main())
