"""WCAG contrast (gui.window.kit.contrast): the ratio itself, and colours nudged until they read."""

from __future__ import annotations

import colorsys

import pytest

from gui.window.kit.contrast import AA, contrast, readable, relative_luminance


def test_contrast_of_known_colours() -> None:
    """The formula itself: black on white is 21:1, a colour on itself 1:1, GitHub's #767676 grey 4.54:1."""
    assert contrast("#000000", "#ffffff") == pytest.approx(21.0)
    assert contrast("#cf222e", "#cf222e") == pytest.approx(1.0)
    assert contrast("#767676", "#ffffff") == pytest.approx(4.54, abs=0.01)


def test_the_ratio_does_not_depend_on_which_colour_is_the_text_and_short_hex_is_understood() -> None:
    assert contrast("#0969da", "#ffebe9") == pytest.approx(contrast("#ffebe9", "#0969da"))
    assert relative_luminance("#fff") == pytest.approx(relative_luminance("#ffffff")) == pytest.approx(1.0)
    assert contrast("#000", "#fff") == pytest.approx(21.0)


def _hue(colour: str) -> float:
    r, g, b = (int(colour[i:i + 2], 16) / 255 for i in (1, 3, 5))
    return colorsys.rgb_to_hls(r, g, b)[0]


@pytest.mark.parametrize(("colour", "backgrounds", "dark"), [
    ("#3fb950", ("#ffffff", "#dafbe1", "#ffebe9"), False),  # the dark theme's green on the light diff lines
    ("#cf222e", ("#0d1117", "#12261e", "#25171c"), True),   # the light theme's red on the dark diff lines
])
def test_a_colour_too_faint_is_darkened_or_lightened_until_it_reads_on_every_background_and_keeps_its_hue(
        colour: str, backgrounds: tuple[str, ...], dark: bool) -> None:
    assert min(contrast(colour, bg) for bg in backgrounds) < AA  # as given, some line would not read
    shown = readable(colour, backgrounds, dark=dark)
    assert all(contrast(shown, bg) >= AA for bg in backgrounds)
    assert _hue(shown) == pytest.approx(_hue(colour), abs=0.02)  # still green, still red


def test_a_colour_that_already_reads_is_left_as_it_is() -> None:
    assert readable("#1f2328", ("#ffffff", "#dafbe1"), dark=False) == "#1f2328"


def test_when_no_mix_reads_the_colour_becomes_black_or_white() -> None:
    """A ratio no colour reaches on a mid grey: the best the theme's direction gives."""
    assert readable("#808080", ("#808080",), dark=False, ratio=20) == "#000000"
    assert readable("#808080", ("#808080",), dark=True, ratio=20) == "#ffffff"
