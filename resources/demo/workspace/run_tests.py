"""Runs the tests in tests/ without pytest: every test_* function of every test_*.py."""

import importlib.util
import pathlib
import sys
import traceback

root = pathlib.Path(__file__).parent
sys.path.insert(0, str(root / "src"))
passed = failed = 0
for path in sorted((root / "tests").glob("test_*.py")):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for name, test in vars(module).items():
        if name.startswith("test_") and callable(test):
            try:
                test()
            except Exception:
                failed += 1
                print(f"FAILED {path.name}::{name}")
                traceback.print_exc(limit=1)
            else:
                passed += 1
                print(f"passed {path.name}::{name}")
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
