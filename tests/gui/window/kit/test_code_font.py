"""Code draws as code: the font of diffs and commands is fixed-pitch by its own metrics, on a real X server too.

Offscreen, Qt's font choice looked right while a real X11 desktop drew the review in a proportional font on
the canvas's fixed grid (`cart = Cart()` as `cart   =Cart()`), so one test here runs the review in a fresh
interpreter on Xvfb with Qt's xcb platform, as a desktop would, and measures what it drew.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtGui import QFont, QFontInfo

from gui.window.kit.code_font import FAMILIES, code_family, code_font, fixed_advances, resolve
from tests.desktop import headless_desktop

LINE = "cart = Cart()  self.items.append(item)  iiiiiiiiii  MMMMMMMMMM"

CHILD = r"""
import json, sys
from PySide6.QtWidgets import QApplication
from PySide6.QtGui import QColor, QFontInfo, QFontMetricsF
app = QApplication(sys.argv)
from gui.window.kit import theme
theme.ThemeSwitch(app, "light").apply()  # the window's style sheet, which resets some widgets' fonts
from core.changes.diffs import compute_diff
from gui.window.review.view import ReviewView
line, i_line, m_line = sys.argv[1], "i" * 40, "M" * 40
old = "first = 1\n"
new = f"first = 1\n{line}\n{i_line}\n{m_line}\n"
view = ReviewView(dark=False)
view.view_button.setChecked(False)  # unified: one column, the whole line
view.resize(1000, 400)
view.show()
view.set_diffs([compute_diff("app.py", old.encode(), new.encode())])
for _ in range(20):
    app.processEvents()
canvas = view.canvas
font = canvas.viewport().font()
metrics = QFontMetricsF(font)
image = canvas.viewport().grab().toImage()
page = image.pixelColor(image.width() - 2, 2)
def ink_right(text):
    k = next(n for n, row in enumerate(canvas.rows) if row.kind == "line" and row.left.text == text)
    top = (k - canvas.verticalScrollBar().value()) * canvas.line_height
    background = image.pixelColor(image.width() - 2, top + canvas.line_height // 2)
    right = 0
    for y in range(top + 1, top + canvas.line_height - 1):
        for x in range(image.width()):
            c = image.pixelColor(x, y)
            if abs(c.red() - background.red()) + abs(c.green() - background.green()) + abs(c.blue() - background.blue()) > 120:
                right = max(right, x)
    return right
print(json.dumps({
    "platform": app.platformName(),
    "family": QFontInfo(font).family(),
    "advances": sorted({round(metrics.horizontalAdvance(c), 2) for c in line}),
    "grid": canvas.char_width,
    "i_right": ink_right(i_line),
    "m_right": ink_right(m_line),
}))
"""


def test_the_code_font_is_fixed_pitch_by_its_metrics(qapp: Any) -> None:
    font = code_font()
    assert fixed_advances(font, LINE)
    assert code_family() == QFontInfo(font).family()
    code_font().setBold(True)  # a copy: the next caller still gets the plain font
    assert not code_font().bold()


def test_a_proportional_family_is_passed_over_for_the_next_that_is_fixed(qapp: Any) -> None:
    proportional = QFont("DejaVu Sans")
    if fixed_advances(proportional):
        pytest.skip("DejaVu Sans is not installed here, so there is no proportional family to pass over")
    font = resolve(("DejaVu Sans", *FAMILIES))
    assert fixed_advances(font, LINE) and QFontInfo(font).family() != "DejaVu Sans"
    assert fixed_advances(resolve(("No Such Family Anywhere",)), LINE)  # the system's fixed font at the end


def test_on_a_real_x_server_the_review_draws_every_character_of_a_line_one_width_apart(tmp_path: Path) -> None:
    """The review canvas on Xvfb (xcb, not offscreen): the characters of a drawn line advance alike, and forty
    i's end where forty M's do (in a proportional font they end at about a third)."""
    if shutil.which("Xvfb") is None:
        pytest.skip("needs Xvfb (Debian: apt-get install xvfb; `make system-deps` installs it)")
    with headless_desktop(bus=False) as desktop:
        out = subprocess.run([sys.executable, "-c", CHILD, LINE], env=desktop.env(QT_QPA_PLATFORM="xcb", BELAY_CONFIG_DIR=str(tmp_path)),
                             capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    drawn = json.loads(out.stdout.strip().splitlines()[-1])
    assert drawn["platform"] == "xcb"
    assert len(drawn["advances"]) == 1 and drawn["advances"][0] == round(drawn["grid"], 2), drawn
    assert drawn["m_right"] > 0 and drawn["i_right"] > 0.9 * drawn["m_right"], drawn
