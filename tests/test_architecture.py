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



def _tool_name_comparisons(source: str, where: str, names: frozenset[str]) -> list[str]:
    """Where code compares something with a tool's name spelled as a string (`tool == "Bash"`,
    `tool in ("Write", "Edit")`) rather than a `ToolName`."""
    found = []
    for node in ast.walk(ast.parse(source, where)):
        if not isinstance(node, ast.Compare):
            continue
        for side in (node.left, *node.comparators):
            items = side.elts if isinstance(side, ast.Tuple | ast.List | ast.Set) else [side]
            found += [f"{where}:{node.lineno} compares with {item.value!r}" for item in items
                      if isinstance(item, ast.Constant) and isinstance(item.value, str) and item.value in names]
    return found


def test_no_code_compares_a_tool_name_as_a_string_outside_the_tool_registry() -> None:
    """Tool identity is a type (issue 33): a comparison names a `ToolName`; core/tools/, where the names are
    defined, is the one place that may spell them."""
    from core import ToolName
    names = frozenset(ToolName)
    offenders = [found for package in ("core", "gui") for path in sorted((ROOT / package).rglob("*.py"))
                 if ROOT / "core" / "tools" not in path.parents
                 for found in _tool_name_comparisons(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)),
                                                     names)]
    assert offenders == []


def test_the_tool_name_check_catches_a_string_comparison() -> None:
    source = 'ok = tool == ToolName.BASH\nif tool == "Bash" or name in ("Write", "x"):\n    pass\n'
    assert _tool_name_comparisons(source, "bad.py", frozenset({"Bash", "Write"})) == [
        "bad.py:2 compares with 'Bash'", "bad.py:2 compares with 'Write'"]


def _class_names(source: str, where: str) -> list[tuple[str, str]]:
    return [(node.name, f"{where}:{node.lineno}") for node in ast.walk(ast.parse(source, where))
            if isinstance(node, ast.ClassDef)]


def _shared_names(places: list[tuple[str, str]]) -> dict[str, list[str]]:
    by_name: dict[str, list[str]] = {}
    for name, where in places:
        by_name.setdefault(name, []).append(where)
    return {name: wheres for name, wheres in sorted(by_name.items()) if len(wheres) > 1}


def test_no_two_classes_in_core_and_gui_share_a_name() -> None:
    """One name per class (issue 33): a name says which class it is, wherever it is read."""
    places = [place for package in ("core", "gui") for path in sorted((ROOT / package).rglob("*.py"))
              for place in _class_names(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)))]
    shared = _shared_names(places)
    assert shared == {}


def test_the_class_name_check_catches_a_name_given_twice() -> None:
    places = _class_names("class Verdict:\n    pass\n", "a.py") + _class_names("class Verdict(Base):\n    pass\n"
                                                                          "class Other:\n    pass\n", "b.py")
    assert _shared_names(places) == {"Verdict": ["a.py:1", "b.py:1"]}


def test_every_gui_module_has_a_test_file_mirroring_it() -> None:
    assert _without_a_mirror(ROOT, "gui") == []


def test_the_mirror_check_names_a_module_without_a_test_file(tmp_path: Path) -> None:
    for name in ("gui/window/room/widget.py", "gui/window/room/__init__.py", "gui/cli.py", "tests/gui/test_cli.py"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("")
    assert _without_a_mirror(tmp_path, "gui") == [
        "gui/window/room/widget.py has no tests/gui/window/room/test_widget.py"]
    (tmp_path / "tests/gui/window/room").mkdir(parents=True)
    (tmp_path / "tests/gui/window/room/test_widget.py").write_text("")
    assert _without_a_mirror(tmp_path, "gui") == []


MAX_MODULE_LINES = 500


def test_no_module_in_core_or_gui_is_over_500_lines() -> None:
    """Small pieces (STYLE.md, issue 33): a module over 500 lines is split by concern."""
    sizes = {str(path.relative_to(ROOT)): len(path.read_text(encoding="utf-8").splitlines())
             for package in ("core", "gui") for path in sorted((ROOT / package).rglob("*.py"))}
    assert {path: lines for path, lines in sizes.items() if lines > MAX_MODULE_LINES} == {}
