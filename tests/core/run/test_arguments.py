"""What an agent sends becomes a tool's validated arguments, or an invalid-args error saying what is wrong."""

from __future__ import annotations

from typing import Any

import pytest

from core.errors import ErrorKind, ToolError
from core.run import arguments
from core.tools.read import Read, ReadArgs


def _refusal(raw: object) -> ToolError:
    with pytest.raises(ToolError) as caught:
        arguments.validate(Read(), arguments.decode(raw))
    assert caught.value.kind is ErrorKind.INVALID_ARGS
    return caught.value


def test_json_text_and_objects_give_the_same_arguments() -> None:
    from_text = arguments.validate(Read(), arguments.decode('{"file_path": "/ws/a.py", "limit": 5}'))
    from_object = arguments.validate(Read(), arguments.decode({"file_path": "/ws/a.py", "limit": 5}))
    assert from_text == from_object == ReadArgs(file_path="/ws/a.py", limit=5)


def test_malformed_json_says_where_it_broke() -> None:
    error = _refusal('{"file_path": "/ws/a.py",\n "limit": ')
    assert "not valid JSON" in error.info.message and "line 2" in error.info.message
    assert error.info.suggestion == "Send a JSON object."


@pytest.mark.parametrize(("raw", "key"), [('{"file_path": "/ws/a", "file_path": "/etc/passwd"}', "file_path"),
                                          ('{"file_path": "/ws/a", "extra": {"x": 1, "x": 2}}', "x")])
def test_a_key_sent_twice_is_refused_rather_than_resolved_silently(raw: str, key: str) -> None:
    assert _refusal(raw).info.message == f"the arguments name {key!r} twice"


@pytest.mark.parametrize(("raw", "named"), [("[1, 2]", "list"), ('"/ws/a.py"', "str"), (7, "int"), (None, "NoneType")])
def test_anything_but_an_object_is_refused_naming_what_came(raw: object, named: str) -> None:
    assert f"must be a JSON object, got {named}" in _refusal(raw).info.message


@pytest.mark.parametrize(("raw", "field"), [
    ({"file_path": 3}, "file_path"),
    ({"file_path": "/ws/a.py", "limit": "5"}, "limit"),  # strict: no quiet conversion of "5"
    ({"file_path": "/ws/a.py", "limit": 0}, "limit"),
    ({"file_path": "/ws/a.py", "lines": 5}, "lines"),
    ({}, "file_path"),
])
def test_wrong_fields_are_named_and_the_tool_says_what_it_takes(raw: dict[str, Any], field: str) -> None:
    error = _refusal(raw)
    assert error.info.message.startswith("invalid arguments for Read: ") and f"{field}: " in error.info.message
    assert error.info.suggestion == "Read takes: file_path, offset (optional), limit (optional)."


@pytest.mark.parametrize("raw", ["[" * 100_000 + "]" * 100_000, '{"a":' * 100_000 + "1" + "}" * 100_000])
def test_arguments_nested_past_the_decoders_stack_are_refused_not_crashed_on(raw: str) -> None:
    assert _refusal(raw).info.message == "the arguments are nested too deeply to read"


def _unicode_refusal(tool_name: str, raw: object) -> str:
    with pytest.raises(ToolError) as caught:
        arguments.check_text(tool_name, raw)
        arguments.decode(raw)
    assert caught.value.kind is ErrorKind.INVALID_ARGS
    assert caught.value.info.message.encode("utf-8")  # the refusal itself can be journaled
    return caught.value.info.message


@pytest.mark.parametrize(("tool_name", "raw", "where"), [
    ("Read", {"file_path": "/ws/a\ud800.py"}, "in file_path"),
    ("MultiEdit", {"file_path": "/ws/a", "edits": [{"old_string": "x", "new_string": "\udcff"}]},
     "in edits[0].new_string"),
    ("Read", {"file_path": "/ws/a", "\ud800": 1}, "in a key of the arguments"),
    ("Read", {"file_path": "/ws/a", "extra": {"deep": {"\udfff": 1}}}, "in a key of extra.deep"),
    ("Read", '{"file_path": "/ws/\\ud800"}', "in file_path"),  # JSON's own escape decodes to a lone surrogate
    ("Read", '{"file_path": "/ws/\ud800"}', "in the arguments"),  # the text itself holds one
    ("Re\ud800ad", {"file_path": "/ws/a"}, "in the tool name"),
])
def test_text_utf8_cannot_encode_is_refused_saying_where(tool_name: str, raw: object, where: str) -> None:
    message = _unicode_refusal(tool_name, raw)
    assert message.startswith("text that is not valid Unicode ") and where in message


@pytest.mark.parametrize("text", ["\u202eevil.txt", "e\u0301\u0301\u0301", "a\u200bb\ufeff", "\U0001f600", "\x00"])
def test_odd_but_valid_unicode_is_not_refused_for_being_odd(text: str) -> None:
    arguments.check_text("Read", {"file_path": text, "nested": [{"k": text}]})


def test_a_surrogate_under_thousands_of_python_levels_is_found_without_exhausting_the_stack() -> None:
    raw: dict[str, object] = {"leaf": "\ud800"}
    for _ in range(50_000):
        raw = {"a": [raw]}
    message = _unicode_refusal("Read", raw)
    assert "in ...[0].a[0].a[0].a[0].leaf (" in message and len(message) < 200  # the deepest steps, not 50,000


def test_shown_text_is_always_writable_and_keeps_valid_text_as_it_is() -> None:
    assert arguments.shown("a\ud800b") == "a\\ud800b"
    assert arguments.shown("\u202eok \U0001f600") == "\u202eok \U0001f600"
