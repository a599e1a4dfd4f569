"""The conversation's records: capped texts, token sums, the context in use."""

from __future__ import annotations

from core.models.conversation import TEXT_CHARS, Usage, capped


def test_a_text_over_the_cap_is_cut_and_says_so() -> None:
    assert capped("short") == ("short", False)
    text, cut = capped("x" * (TEXT_CHARS + 1))
    assert cut and text.startswith("x" * TEXT_CHARS) and text.endswith("[… cut by Belay]")


def test_usages_add_up_and_the_context_counts_every_input_token() -> None:
    total = Usage(input=10, output=5, cache_read=100, cache_write=7) + Usage(input=1, output=2)
    assert total == Usage(input=11, output=7, cache_read=100, cache_write=7)
    assert total.context == 118
