"""References between batch calls: what `${...}` reads, what it becomes, and how a mistake is reported."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from core.orchestration.refs import BadReference, Reference, find_references, iter_references, resolve

RESULTS: dict[str, dict[str, Any]] = {
    "read_cfg": {
        "text": "2 files",
        "data": {
            "files": ["a.py", "b.py"], "size": 42, "ratio": 0.5, "ok": True, "none": None, "name": "café",
            "meta": {"owner": "ana", "tags": ["x", "y"]}, "rows": [[1, 2], [3, 4]],
            "a.b[0]": "dotted", 'say "hi"': "double quotes", "it's": "apostrophe", "back\\slash": "backslash",
            "0": "zero as a key", "": "empty key",
        },
        "status": "done",
        "call_id": "call_1",
    },
    "grep-1": {"text": "found ${read_cfg.text} in notes", "data": {}, "status": "done", "call_id": "call_2"},
}

SMALL: dict[str, dict[str, Any]] = {
    "a": {"text": "hi", "data": {"files": ["x", "y"], "one": ["only"], "n": 3, "meta": {}, "none": None},
          "status": "done", "call_id": "c1"},
}


@pytest.mark.parametrize(("text", "expected"), [
    ("${read_cfg.data.files[0]}", "a.py"),
    ("${read_cfg.data.files[-1]}", "b.py"),
    ("${read_cfg.data.files[-2]}", "a.py"),
    ("${read_cfg.data.rows[1][0]}", 3),
    ("${read_cfg.data.meta.tags[1]}", "y"),
    ('${read_cfg.data["a.b[0]"]}', "dotted"),
    ("${read_cfg.data['a.b[0]']}", "dotted"),
    ('${read_cfg.data["say \\"hi\\""]}', "double quotes"),
    ("${read_cfg.data['it\\'s']}", "apostrophe"),
    ('${read_cfg.data["it\'s"]}', "apostrophe"),
    ('${read_cfg.data["back\\\\slash"]}', "backslash"),
    ('${read_cfg.data["0"]}', "zero as a key"),
    ('${read_cfg.data[""]}', "empty key"),
    ('${read_cfg["data"].meta["owner"]}', "ana"),
    ("${grep-1.call_id}", "call_2"),
])
def test_fields_indexes_and_quoted_keys_reach_into_a_result(text: str, expected: Any) -> None:
    assert resolve({"x": text}, RESULTS) == {"x": expected}


def test_a_reference_parses_into_call_path_and_source() -> None:
    text = '${read_cfg.data["a.b[0]"][-1].name_2}'
    assert find_references(text) == [Reference("read_cfg", ("data", "a.b[0]", -1, "name_2"), text)]


@pytest.mark.parametrize(("text", "expected"), [
    ("${read_cfg.data.files}", ["a.py", "b.py"]),
    ("${read_cfg.data.meta}", {"owner": "ana", "tags": ["x", "y"]}),
    ("${read_cfg.data.size}", 42),
    ("${read_cfg.data.ratio}", 0.5),
    ("${read_cfg.data.ok}", True),
    ("${read_cfg.data.none}", None),
    ("${grep-1}", RESULTS["grep-1"]),
])
def test_a_string_that_is_one_reference_becomes_the_value_itself(text: str, expected: Any) -> None:
    resolved = resolve({"x": text}, RESULTS)["x"]
    assert resolved == expected and type(resolved) is type(expected)


def test_resolving_copies_and_never_mutates_the_args_or_the_results() -> None:
    args = {"files": "${read_cfg.data.files}", "nested": [{"meta": "${read_cfg.data.meta}"}], "n": 1}
    before_args, before_results = copy.deepcopy(args), copy.deepcopy(RESULTS)
    resolved = resolve(args, RESULTS)
    resolved["files"].append("c.py")
    resolved["nested"][0]["meta"]["tags"].clear()
    assert args == before_args and RESULTS == before_results


@pytest.mark.parametrize(("text", "expected"), [
    ("files=${read_cfg.data.files}", 'files=["a.py","b.py"]'),
    ("meta=${read_cfg.data.meta}", 'meta={"owner":"ana","tags":["x","y"]}'),
    ("size=${read_cfg.data.size}", "size=42"),
    ("ratio=${read_cfg.data.ratio}", "ratio=0.5"),
    ("ok=${read_cfg.data.ok}", "ok=true"),
    ("none=${read_cfg.data.none}", "none=null"),
    ("name=${read_cfg.data.name}", "name=café"),
    ("[${read_cfg.data.rows[0]}]", "[[1,2]]"),
    ("Summary: ${read_cfg.text}.", "Summary: 2 files."),
    ("${read_cfg.data.size}${read_cfg.data.size}", "4242"),
    ("${read_cfg.text} and ${read_cfg.data.files[1]}", "2 files and b.py"),
])
def test_a_reference_inside_a_larger_string_becomes_its_text_form(text: str, expected: str) -> None:
    assert resolve(text, RESULTS) == expected


@pytest.mark.parametrize(("text", "expected", "calls"), [
    ("$${read_cfg.text}", "${read_cfg.text}", []),
    ("cost $${x} vs ${read_cfg.data.size}", "cost ${x} vs 42", ["read_cfg"]),
    ("$${x}${read_cfg.data.size}$${y}", "${x}42${y}", ["read_cfg"]),
    ("$$${read_cfg.text}", "$${read_cfg.text}", []),  # scanned left to right: `$`, then the escape
])
def test_a_doubled_dollar_writes_a_literal_reference(text: str, expected: str, calls: list[str]) -> None:
    assert resolve(text, RESULTS) == expected
    assert [ref.call for ref in find_references(text)] == calls


def test_text_without_references_is_left_alone() -> None:
    args = {"cmd": "echo $HOME {x} $ $$ }", "n": 3, "flags": [True, None, 1.5], "t": ("a", "b")}
    assert resolve(args, RESULTS) == args
    assert find_references(args) == []


def test_a_resolved_value_is_not_scanned_again() -> None:
    # grep-1's text contains `${read_cfg.text}`: a call's output must never inject references.
    assert resolve("${grep-1.text}", RESULTS) == "found ${read_cfg.text} in notes"
    assert resolve("> ${grep-1.text}", RESULTS) == "> found ${read_cfg.text} in notes"


def test_dict_keys_are_not_resolved() -> None:
    assert resolve({"${read_cfg.text}": "${read_cfg.text}"}, RESULTS) == {"${read_cfg.text}": "2 files"}


def test_find_references_walks_nested_args_in_order() -> None:
    args = {
        "a": ["${x.text}", {"b": "pre ${y.data.k[0]} post ${x.data}"}],
        "c": 3, "d": None, "e": "$${z.text}", "f": ("${w}",),
    }
    assert [(ref.call, ref.path) for ref in find_references(args)] == [
        ("x", ("text",)), ("y", ("data", "k", 0)), ("x", ("data",)), ("w", ()),
    ]
    assert [where for where, _ in iter_references(args)] == ["args.a[0]", "args.a[1].b", "args.a[1].b", "args.f[0]"]


@pytest.mark.parametrize(("args", "message"), [
    ({"file_path": "${a.data.files[2]}"}, "args.file_path: ${a.data.files[2]}: index 2 is out of range"
                                          " (files has 2 items)"),
    ({"p": "${a.data.files[-3]}"}, "args.p: ${a.data.files[-3]}: index -3 is out of range (files has 2 items)"),
    ({"p": "${a.data.one[1]}"}, "args.p: ${a.data.one[1]}: index 1 is out of range (one has 1 item)"),
    ({"edits": [{}, {"old_string": "x ${nope.text}"}]},
     'args.edits[1].old_string: ${nope.text}: no result for call "nope"'),
    ({"p": "${a.data.nope}"}, 'args.p: ${a.data.nope}: data has no field "nope" (it has: files, one, n, meta, none)'),
    ({"p": "${a.data.meta.k}"}, 'args.p: ${a.data.meta.k}: meta has no field "k" (it is empty)'),
    ({"p": "${a.nope}"}, 'args.p: ${a.nope}: a has no field "nope" (it has: text, data, status, call_id)'),
    ({"p": "${a.text.size}"}, 'args.p: ${a.text.size}: cannot take field "size" of text, which is a str, not a dict'),
    ({"p": "${a.data.n[0]}"}, "args.p: ${a.data.n[0]}: cannot take [0] of n, which is an int, not a list"),
    ({"p": "${a.data.meta[0]}"}, "args.p: ${a.data.meta[0]}: cannot take [0] of meta, which is a dict, not a list"),
    ({"p": "${a.data.none.x}"}, 'args.p: ${a.data.none.x}: cannot take field "x" of none, which is null, not a dict'),
    ({"p": "${a.data.files[0].stem}"},
     'args.p: ${a.data.files[0].stem}: cannot take field "stem" of files[0], which is a str, not a dict'),
    ({"my key": ["ok", "${a.x}"]}, 'args["my key"][1]: ${a.x}: a has no field "x" (it has: text, data, status,'
                                   " call_id)"),
])
def test_a_reference_that_cannot_be_resolved_says_where_and_why(args: dict[str, Any], message: str) -> None:
    with pytest.raises(BadReference) as caught:
        resolve(args, SMALL)
    assert str(caught.value) == message
    assert isinstance(caught.value, ValueError)


def test_a_bad_reference_carries_its_parts() -> None:
    with pytest.raises(BadReference) as caught:
        resolve({"cmd": ["ls", "${gone.text}"]}, SMALL)
    error = caught.value
    assert (error.where, error.reference, error.reason) == ("args.cmd[1]", "${gone.text}", 'no result for call "gone"')


def test_a_missing_field_lists_only_the_first_few_fields() -> None:
    with pytest.raises(BadReference, match=r"\(it has: text, data, status, call_id\)$"):
        resolve("${read_cfg.nope}", RESULTS)
    with pytest.raises(BadReference, match=r"it has: files, size, ratio, ok, none, name, meta, rows, \.\.\.\)$"):
        resolve("${read_cfg.data.nope}", RESULTS)


@pytest.mark.parametrize(("text", "message"), [
    ("${", "${: expected a call id at position 2, found the end of the text"),
    ("${}", "${}: expected a call id at position 2, found '}'"),
    ("${{a}}", "${{a}: expected a call id at position 2, found '{'"),
    ("${a.}", "${a.}: expected a field name after '.' at position 4, found '}'"),
    ("${a..b}", "${a..b}: expected a field name after '.' at position 4, found '.'"),
    ("${a[}", "${a[}: expected an integer index or a quoted key after '[' at position 4, found '}'"),
    ("${a[x]}", "${a[x]}: expected an integer index or a quoted key after '[' at position 4, found 'x'"),
    ("${a[0}", "${a[0}: expected ']' at position 5, found '}'"),
    ("${a[-]}", "${a[-]}: expected a digit at position 5, found ']'"),
    ("${a[1.5]}", "${a[1.5]}: expected ']' at position 5, found '.'"),
    ("${a[12345678901234567890]}", "${a[12345678901234567890]}: expected ']' after at most 18 digits"
                                   " at position 22, found '9'"),
    ("${ a }", "${ a }: expected a call id at position 2, found ' '"),
    ("${a.b c}", "${a.b c}: expected '.', '[' or '}' at position 5, found ' '"),
    ("${1a}", "${1a}: expected a call id at position 2, found '1'"),
    ("${a", "${a: expected '.', '[' or '}' at position 3, found the end of the text"),
    ("${a['x}", "${a['x}: expected the closing ' at position 7, found the end of the text"),
    ('${a["x\\"]}', '${a["x\\"]}: expected the closing " at position 10, found the end of the text'),
    ("${a['\\n']}", "${a['\\n']}: expected a quote or a backslash after '\\' at position 6, found 'n'"),
    ("see ${a.b} and ${c.}", "${c.}: expected a field name after '.' at position 19, found '}'"),
])
def test_a_syntax_error_names_the_reference_the_position_and_what_was_expected(text: str, message: str) -> None:
    with pytest.raises(BadReference) as by_find:
        find_references({"prompt": text})
    with pytest.raises(BadReference) as by_resolve:
        resolve({"prompt": text}, {"a": {"b": 1}, "c": {}})
    assert str(by_find.value) == str(by_resolve.value) == f"args.prompt: {message}"


def test_a_syntax_error_deep_in_the_args_names_its_path() -> None:
    args = {"edits": [{"new_string": "fine"}, {"new_string": "x", "old_string": "oops ${a."}]}
    with pytest.raises(BadReference, match=r"^args\.edits\[1\]\.old_string: \$\{a\.: expected a field name"):
        find_references(args)
