"""Render packaging/icons/belay.svg to the PNG sizes desktops and the bundle use (the PNGs are committed).

Run after changing the SVG: `QT_QPA_PLATFORM=offscreen .venv/bin/python packaging/render_icons.py`.
"""

import sys
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication, QImage, QPainter
from PySide6.QtSvg import QSvgRenderer

SIZES = (16, 24, 32, 48, 64, 128, 256, 512)
ICONS = Path(__file__).resolve().parent / "icons"


def render() -> None:
    renderer = QSvgRenderer(str(ICONS / "belay.svg"))
    if not renderer.isValid():
        raise SystemExit("packaging/icons/belay.svg is not a valid SVG")
    for size in SIZES:
        image = QImage(size, size, QImage.Format.Format_ARGB32)
        image.fill(Qt.GlobalColor.transparent)
        painter = QPainter(image)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        renderer.render(painter)
        painter.end()
        if not image.save(str(ICONS / f"belay-{size}.png")):
            raise SystemExit(f"could not write belay-{size}.png")


if __name__ == "__main__":
    app = QGuiApplication(sys.argv[:1])
    render()
