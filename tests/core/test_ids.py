"""Identifiers: each kind carries its prefix, ids are unique, and later ids sort after earlier ones."""

from __future__ import annotations

import re
import time
from collections.abc import Callable

from core import ids

MAKERS: dict[str, Callable[[], str]] = {
    "ses": ids.new_session_id, "agt": ids.new_agent_id, "call": ids.new_call_id,
    "undo": ids.new_rollback_id, "ext": ids.new_external_id, "batch": ids.new_batch_id,
}


def test_every_kind_of_id_starts_with_its_own_prefix_and_is_plain_text() -> None:
    for prefix, make in MAKERS.items():
        made = make()
        assert re.fullmatch(rf"{prefix}_[0-9a-f]+", made), made
        assert type(made) is str  # NewType: journals and JSON see plain strings


def test_ids_made_one_after_another_are_distinct() -> None:
    made = [ids.new_call_id() for _ in range(20)]
    assert len(set(made)) == len(made)


def test_an_id_made_later_sorts_after_an_earlier_one() -> None:
    first = ids.new_call_id()
    time.sleep(0.003)  # past the millisecond the first id's time prefix names
    second = ids.new_call_id()
    assert first < second


def test_an_id_carries_at_least_64_random_bits_after_its_time_prefix() -> None:
    # Two processes on one journal (a window and `belay run`) make ids in the same millisecond; with
    # 24 random bits they met once in a few thousand, with 64 never in practice.
    before = time.time_ns() // 1_000_000
    made = ids.new_call_id()
    after = time.time_ns() // 1_000_000
    stamp = made.removeprefix("call_")[:len(f"{after:x}")]
    assert before <= int(stamp, 16) <= after, made
    assert len(made) - len("call_") - len(stamp) >= 16, made
