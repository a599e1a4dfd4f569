"""The link bar: shown while a console on another host is out of reach, with Attach again once given up on."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QWidget

from core import LinkChanged
from gui.window.chrome.link_banner import LinkBanner

WHERE = "ssh://devbox/home/me/shop"


def test_the_bar_says_what_happened_to_the_link_and_attach_again_asks_once(qtbot: Any) -> None:
    window = QWidget()
    qtbot.addWidget(window)
    bar = LinkBanner(window)
    window.show()
    assert not bar.isVisible()  # hidden until the link changes
    bar.show_link(LinkChanged(state="reattaching", detail="the connection to the console broke"), WHERE)
    assert bar.isVisible() and not bar.again.isVisible()  # trying by itself: nothing to press
    assert "attaching again" in bar.label.text() and WHERE in bar.label.text() and "broke" in bar.text()
    bar.show_link(LinkChanged(state="lost", detail="gave up attaching after 5 tries"), WHERE)
    assert bar.again.isVisible() and "out of reach" in bar.label.text() and "Gave up" in bar.text()
    asked: list[bool] = []
    bar.attach_requested.connect(lambda: asked.append(True))
    qtbot.mouseClick(bar.again, Qt.MouseButton.LeftButton)
    qtbot.mouseClick(bar.again, Qt.MouseButton.LeftButton)  # disabled until the next change: asked once
    assert asked == [True] and not bar.again.isEnabled()
    bar.show_link(LinkChanged(state="attached", detail=""), WHERE)
    assert not bar.isVisible() and bar.text().startswith("Attached again to")
