"""What a read skipped, told in words."""

from __future__ import annotations

from collections import Counter

from core.transcripts.reader import skipped_note


def test_what_was_skipped_is_counted_and_said_most_common_first() -> None:
    assert skipped_note(Counter(), 0) == (0, "")
    count, note = skipped_note(Counter({"unknown kind 'x'": 1, "damaged line": 3}), 2)
    assert count == 6
    assert note == "skipped: 3 × damaged line, 2 × record too long to read, 1 × unknown kind 'x'"
