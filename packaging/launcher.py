"""The frozen bundle's entry point: the same `main` the wheel's `belay` console script runs."""

import sys

from gui.terminal.cli import main

if __name__ == "__main__":
    sys.exit(main())
