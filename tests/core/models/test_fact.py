"""What every event is: frozen, refusing unknown fields, stamped when made, numbered when published."""

from __future__ import annotations

from datetime import timedelta

import pytest
from pydantic import ValidationError

from core.models.fact import Fact


def test_a_fact_is_stamped_with_an_aware_time_when_made_and_numbered_zero_until_published() -> None:
    fact = Fact()
    assert fact.seq == 0 and fact.at.utcoffset() == timedelta(0)
    assert Fact().at >= fact.at
    assert fact.model_copy(update={"seq": 7}).seq == 7 and fact.seq == 0


def test_a_fact_is_frozen_and_refuses_a_field_it_does_not_know() -> None:
    fact = Fact()
    with pytest.raises(ValidationError):
        fact.seq = 3  # type: ignore[misc]
    with pytest.raises(ValidationError, match="extra_forbidden"):
        Fact(colour="red")  # type: ignore[call-arg]
