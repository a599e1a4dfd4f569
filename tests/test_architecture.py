"""The dependency rule (DESIGN.md section 2), checked on the source itself."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FORBIDDEN_IN_CORE = ("PySide6", "shiboken6", "qasync", "pygments", "gui")


def _imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
    return names


def test_core_imports_no_qt_qasync_pygments_or_gui() -> None:
    offenders = [
        f"{path.relative_to(ROOT)} imports {name}"
        for path in sorted((ROOT / "core").rglob("*.py"))
        for name in _imports(path)
        if name.split(".")[0] in FORBIDDEN_IN_CORE
    ]
    assert offenders == []


def test_gui_uses_only_the_public_core_surface() -> None:
    offenders = [
        f"{path.relative_to(ROOT)} imports {name}"
        for path in sorted((ROOT / "gui").rglob("*.py"))
        for name in _imports(path)
        if name.startswith("core.")
    ]
    assert offenders == []


def test_core_and_gui_resolve_inside_the_checkout() -> None:
    for package in ("core", "gui"):
        spec = importlib.util.find_spec(package)
        assert spec is not None and spec.origin is not None
        assert Path(spec.origin).resolve().is_relative_to(ROOT), f"{package} resolves to {spec.origin}"


def test_the_architecture_check_catches_a_violation(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("from PySide6.QtCore import QObject\nimport pygments.lexers\n")
    assert [n.split(".")[0] for n in _imports(bad)] == ["PySide6", "pygments"]


def _without_a_mirror(root: Path, package: str) -> list[str]:
    """The modules of `package` under `root` that have no test file mirroring them:
    <package>/<path>/<module>.py is tested in tests/<package>/<path>/test_<module>.py."""
    missing = []
    for path in sorted((root / package).rglob("*.py")):
        rel = path.relative_to(root / package)
        if path.name != "__init__.py" and not (root / "tests" / package / rel.parent / f"test_{rel.name}").exists():
            missing.append(f"{package}/{rel} has no tests/{package}/{rel.parent / ('test_' + rel.name)}")
    return missing


def test_every_core_module_has_a_test_file_mirroring_it() -> None:
    missing = _without_a_mirror(ROOT, "core")
    assert missing == []


GUI_BEING_REWRITTEN = {
    "gui/window/approvals/inbox.py",
    "gui/window/panels/rules_model.py",
    "gui/window/chrome/shortcuts_sheet.py",
}
"""Modules the lead engineer is rewriting (issue #33): their test files come with the new code.  Temporary:
remove each line when its test file lands (the test below says when one has), and this set with the last."""


def test_every_gui_module_has_a_test_file_mirroring_it() -> None:
    missing = _without_a_mirror(ROOT, "gui")
    allowed = [m for m in missing if m.split(" ")[0] in GUI_BEING_REWRITTEN]
    assert [m for m in missing if m not in allowed] == []
    assert len(allowed) == len(GUI_BEING_REWRITTEN), "a module in GUI_BEING_REWRITTEN has its test file now (or " \
        "is gone): take it out of the set"


def test_the_mirror_check_names_a_module_without_a_test_file(tmp_path: Path) -> None:
    for name in ("gui/window/room/widget.py", "gui/window/room/__init__.py", "gui/cli.py", "tests/gui/test_cli.py"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("")
    assert _without_a_mirror(tmp_path, "gui") == [
        "gui/window/room/widget.py has no tests/gui/window/room/test_widget.py"]
    (tmp_path / "tests/gui/window/room").mkdir(parents=True)
    (tmp_path / "tests/gui/window/room/test_widget.py").write_text("")
    assert _without_a_mirror(tmp_path, "gui") == []
