"""Timeline keys: a key is its text, keeps its kind through copies and pickles, and parse_key reads text back."""

from __future__ import annotations

import copy
import pickle

import pytest

from core.timeline.keys import AgentKey, BatchKey, NodeKey, RunKey, parse_key


def test_a_key_is_its_text_so_plain_strings_find_it() -> None:
    rows = {RunKey("call_1"): "row"}
    assert rows["r:call_1"] == "row"
    assert AgentKey("x") == "a:x" and AgentKey("x") != BatchKey("x")


def test_a_key_keeps_its_kind_and_id_through_a_copy_and_a_pickle() -> None:
    for key in (AgentKey("agt_1"), BatchKey("batch_1"), RunKey("call_1")):
        for again in (copy.copy(key), copy.deepcopy(key), pickle.loads(pickle.dumps(key))):
            assert type(again) is type(key) and again == key and again.ident == key.ident


def test_parse_key_gives_back_the_key_its_text_spells() -> None:
    run_key = parse_key(str(RunKey("call:with:colons")))
    assert isinstance(run_key, RunKey) and run_key.call_id == "call:with:colons"
    assert isinstance(parse_key("a:agt_1"), AgentKey) and parse_key("a:agt_1").agent_id == "agt_1"
    assert isinstance(parse_key("b:batch_1"), BatchKey) and parse_key("b:batch_1").batch_id == "batch_1"
    key = BatchKey("b1")
    assert parse_key(key) is key


@pytest.mark.parametrize("text", ["", "x:1", "call_1", "R:call_1"])
def test_text_that_is_no_key_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="not a timeline key"):
        parse_key(text)


def test_a_key_of_no_kind_cannot_be_made() -> None:
    with pytest.raises(TypeError):
        NodeKey("a:agt_1")
