"""Commands in a private layer: real commands run over a real workspace, which stays byte for byte as it was,
and the layer says what they would have changed."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from core.paths import Workspace
from core.process.overlay import Layer, LayerChange, overlay_support
from core.run.preview import merge

pytestmark = pytest.mark.skipif(not overlay_support().available, reason=overlay_support().detail)


def _tree(root: Path) -> dict[str, tuple[int, bytes | str, int]]:
    """Every entry under `root`: its mode, its content (a link's target), its mtime in ns."""
    found: dict[str, tuple[int, bytes | str, int]] = {}
    for path in sorted(root.rglob("*")):
        st = path.lstat()
        body: bytes | str = os.readlink(path) if path.is_symlink() else path.read_bytes() if path.is_file() else b""
        found[str(path.relative_to(root))] = (st.st_mode, body, st.st_mtime_ns)
    return found


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    for n in range(20):
        (ws / "src" / f"m{n}.py").write_text(f"value = 'old'  # {n}\n")
    (ws / "docs").mkdir()
    (ws / "docs" / "a.md").write_text("a\n")
    (ws / "docs" / "b.md").write_text("b\n")
    (ws / "logo.bin").write_bytes(bytes(range(256)) * 4)
    (ws / "run.sh").write_text("echo hi\n")
    return ws


def _run(layer: Layer, command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(layer.wrap(["sh", "-c", command]), capture_output=True, text=True, timeout=30,
                          check=False)


def test_sed_over_twenty_files_is_seen_in_the_layer_and_the_workspace_is_untouched(workspace: Path,
                                                                                   tmp_path: Path) -> None:
    before = _tree(workspace)
    layer = Layer.create(workspace, tmp_path)
    done = _run(layer, "sed -i s/old/new/ src/*.py && grep -c new src/m3.py")
    assert done.returncode == 0 and done.stdout.strip() == "1", done.stderr  # the command saw its own writes
    assert layer.changes() == sorted((LayerChange(f"src/m{n}.py", "modify") for n in range(20)),
                                     key=lambda c: c.path)
    assert (layer.upper / "src" / "m7.py").read_text() == "value = 'new'  # 7\n"
    assert _tree(workspace) == before  # bytes, modes and mtimes
    layer.discard()
    assert not layer.root.exists() and _tree(workspace) == before


def test_creations_deletions_renames_links_modes_and_a_replaced_folder(workspace: Path, tmp_path: Path) -> None:
    before = _tree(workspace)
    layer = Layer.create(workspace, tmp_path)
    done = _run(layer, "mkdir -p gen/deep && echo x > gen/deep/out.txt && rm docs/a.md && mv logo.bin art.bin"
                       " && ln -s src/m1.py latest && chmod +x run.sh && printf '\\000\\001' > data.bin"
                       " && rm -r src && mkdir src && echo fresh > src/only.py")
    assert done.returncode == 0, done.stderr
    changes = {c.path: c for c in layer.changes()}
    assert changes["gen"] == LayerChange("gen", "create", is_dir=True)
    assert changes["gen/deep/out.txt"].kind == "create" and changes["data.bin"].kind == "create"
    assert changes["docs/a.md"].kind == "delete" and "docs/b.md" not in changes
    assert changes["art.bin"] == LayerChange("art.bin", "rename", old_path="logo.bin") and "logo.bin" not in changes
    assert changes["latest"] == LayerChange("latest", "create", is_link=True)
    assert changes["run.sh"].kind == "mode"
    assert changes["src/only.py"].kind == "create"  # the folder was replaced: what it held is deleted
    assert {p for p, c in changes.items() if c.kind == "delete" and p.startswith("src/")} == \
        {f"src/m{n}.py" for n in range(20)}
    assert _tree(workspace) == before


def test_a_command_that_fails_halfway_leaves_what_it_did_in_the_layer_only(workspace: Path, tmp_path: Path) -> None:
    before = _tree(workspace)
    layer = Layer.create(workspace, tmp_path)
    done = _run(layer, "echo partial > half.txt && sed -i s/old/new/ src/m0.py && false && echo never > no.txt")
    assert done.returncode == 1
    assert [(c.path, c.kind) for c in layer.changes()] == [("half.txt", "create"), ("src/m0.py", "modify")]
    assert _tree(workspace) == before


def test_a_file_opened_for_writing_but_left_as_it_was_is_no_change(workspace: Path, tmp_path: Path) -> None:
    layer = Layer.create(workspace, tmp_path)
    assert _run(layer, "cat docs/b.md > /dev/null && touch docs/b.md && cp docs/a.md docs/a.md.tmp"
                       " && mv docs/a.md.tmp docs/a.md").returncode == 0
    assert layer.changes() == []  # copied up, identical: nothing to apply


def test_a_path_overlayfs_cannot_name_is_refused_before_anything_runs(tmp_path: Path) -> None:
    odd = tmp_path / "a,b"
    odd.mkdir()
    layer = Layer.create(odd, tmp_path)
    assert not layer.nameable()
    with pytest.raises(ValueError, match="cannot name"):
        layer.wrap(["true"])
    layer.discard()


def test_merging_a_layer_makes_the_workspace_what_the_command_alone_would_have_made(
        workspace: Path, tmp_path: Path) -> None:
    command = ("mkdir -p gen/deep && echo x > gen/deep/out.txt && rm docs/a.md && mv logo.bin art.bin"
               " && ln -s src/m1.py latest && chmod +x run.sh && printf '\\000\\001' > data.bin"
               " && rm -r src && mkdir src && echo fresh > src/only.py && mkdir empty && rm -r docs")
    direct = tmp_path / "direct"
    subprocess.run(["cp", "-a", str(workspace), str(direct)], check=True)
    assert subprocess.run(["sh", "-c", command], cwd=direct, check=False).returncode == 0
    layer = Layer.create(workspace, tmp_path)
    assert _run(layer, command).returncode == 0
    merge(layer, layer.changes(), Workspace(workspace))
    layer.discard()

    def shape(root: Path) -> dict[str, tuple[int, bytes | str]]:
        return {path: (mode, body) for path, (mode, body, _) in _tree(root).items()}

    assert shape(workspace) == shape(direct)
    assert not [p for p in workspace.rglob(".*belay-*")]  # nothing left beside the files it replaced
