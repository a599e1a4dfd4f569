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
