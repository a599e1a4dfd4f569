"""packaging/: the desktop entries, the icon set and the AppStream metainfo a desktop installs.

desktop-file-validate (Debian: desktop-file-utils) and appstreamcli (appstream) check them when installed;
`make test` installs both (`make system-deps`).
"""

from __future__ import annotations

import configparser
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QImage, QPainter
from PySide6.QtSvg import QSvgRenderer

PACKAGING = Path(__file__).resolve().parent.parent / "packaging"
DESKTOP_FILES = ("belay.desktop", "belay-autostart.desktop")
METAINFO = PACKAGING / "io.github.belay.Belay.metainfo.xml"


def _entry(name: str) -> configparser.SectionProxy:
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]  # keys are case-sensitive
    parser.read(PACKAGING / name, encoding="utf-8")
    return parser["Desktop Entry"]


def test_the_menu_entry_opens_the_console_and_the_autostart_entry_the_tray() -> None:
    assert _entry("belay.desktop")["Exec"] == "belay"
    assert _entry("belay-autostart.desktop")["Exec"] == "belay --tray"
    assert {_entry(name)["Icon"] for name in DESKTOP_FILES} == {"belay"}


@pytest.mark.parametrize("name", DESKTOP_FILES)
def test_the_desktop_entries_validate(name: str) -> None:
    tool = shutil.which("desktop-file-validate")
    if tool is None:
        pytest.skip("desktop-file-validate is not installed (Debian: desktop-file-utils; `make system-deps`)")
    done = subprocess.run([tool, str(PACKAGING / name)], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0 and not done.stdout.strip(), done.stdout + done.stderr


def test_the_appstream_metainfo_validates() -> None:
    tool = shutil.which("appstreamcli")
    if tool is None:
        pytest.skip("appstreamcli is not installed (Debian: appstream; `make system-deps`)")
    done = subprocess.run([tool, "validate", "--no-net", str(METAINFO)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "<launchable type=\"desktop-id\">belay.desktop</launchable>" in METAINFO.read_text(encoding="utf-8")


@pytest.mark.parametrize("size", (16, 24, 32, 48, 64, 128, 256, 512))
def test_each_png_is_the_svg_rendered_at_its_size(qapp: Any, size: int) -> None:
    png = QImage(str(PACKAGING / "icons" / f"belay-{size}.png"))
    assert (png.width(), png.height()) == (size, size)
    renderer = QSvgRenderer(str(PACKAGING / "icons" / "belay.svg"))
    assert renderer.isValid()
    fresh = QImage(size, size, QImage.Format.Format_ARGB32)
    fresh.fill(Qt.GlobalColor.transparent)
    painter = QPainter(fresh)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    renderer.render(painter)
    painter.end()
    # `packaging/render_icons.py` regenerates them; a PNG left behind after the SVG changed differs here.
    png = png.convertToFormat(QImage.Format.Format_ARGB32)
    differing = sum(1 for y in range(size) for x in range(size)
                    if _far(png.pixelColor(x, y).getRgb(), fresh.pixelColor(x, y).getRgb()))
    assert differing <= size * size // 100


def _far(a: tuple[int, ...], b: tuple[int, ...]) -> bool:
    return max(abs(x - y) for x, y in zip(a, b)) > 8


def test_the_wheel_carries_what_an_installed_belay_reads(tmp_path: Path) -> None:
    """pipx installs the wheel: the demo, the style sheets and the hook client must be in it, beside core/ and gui/
    (gui/window/kit/resources.py and core/outside/install.py find them there)."""
    import sys
    import zipfile
    root = PACKAGING.parent
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", str(root), "--no-deps", "--quiet", "-w",
                           str(tmp_path)], capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-2000:]
    names = set(zipfile.ZipFile(next(tmp_path.glob("belay_console-*.whl"))).namelist())
    wanted = {"resources/demo/script.yaml", "resources/demo/workspace/src/shop/cart.py", "core/outside/hook_client.py",
              "gui/terminal/cli.py"}
    assert wanted <= names
    assert {p.relative_to(root).as_posix() for p in (root / "resources" / "styles").glob("*.qss")} <= names
    assert not any(name.startswith(("tests/", "bench/", "packaging/")) for name in names)
