"""Reading a plan for `belay run`: hostile plans are refused in one line, quickly, before anything runs."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import yaml

from gui.terminal.plans import MAX_DEPTH, MAX_PLAN_BYTES, BatchPlan, PlanError, ScriptPlan, load_plan

BOMB = """\
a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]
b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]
c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]
d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]
e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]
f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]
g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f]
h: &h [*g, *g, *g, *g, *g, *g, *g, *g, *g]
i: &i [*h, *h, *h, *h, *h, *h, *h, *h, *h]
calls: [{id: x, tool: Read, args: {file_path: *i}}]
"""


def _refusal(tmp_path: Path, text: str | bytes, name: str = "plan.yaml") -> str:
    path = tmp_path / name
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    with pytest.raises(PlanError) as caught:
        load_plan(path, tmp_path)
    message = str(caught.value)
    assert "\n" not in message
    return message


def _read(args: object) -> str:
    return json.dumps({"calls": [{"id": "r", "tool": "Read", "args": args}]})


def test_a_plain_plan_still_loads_with_the_workspace_filled_in(tmp_path: Path) -> None:
    path = tmp_path / "plan.yaml"
    path.write_text("calls:\n  - {id: r, tool: Read, args: {file_path: '{workspace}/a.py'}}\n")
    plan = load_plan(path, tmp_path)
    assert isinstance(plan, BatchPlan) and plan.calls[0].args == {"file_path": f"{tmp_path}/a.py"}


def test_a_yaml_alias_bomb_is_refused_at_the_first_anchor_in_no_time(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[yaml.Node] = []  # what YAML made into Python objects: expanding the bomb starts there
    construct = yaml.constructor.BaseConstructor.construct_document
    monkeypatch.setattr(yaml.constructor.BaseConstructor, "construct_document",
                        lambda loader, node: (built.append(node), construct(loader, node))[1])
    message = _refusal(tmp_path, BOMB)
    assert built == []  # refused while the text was read: nothing of it was ever built, let alone expanded
    assert message.startswith("plans may not use YAML aliases") and "line 1" in message


def test_a_lone_alias_or_a_merge_key_is_refused_too(tmp_path: Path) -> None:
    assert "YAML aliases" in _refusal(tmp_path, "calls:\n  - {id: x, tool: Read, args: *nowhere}\n")
    merge = "base: &b {tool: Read}\ncalls:\n  - {<<: *b, id: x, args: {file_path: a}}\n"
    assert "YAML aliases" in _refusal(tmp_path, merge)


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 100_000])
def test_deep_nesting_is_refused_in_json_and_in_yaml(tmp_path: Path, depth: int) -> None:
    nested = "[" * depth + "]" * depth
    assert f"nests more than {MAX_DEPTH} levels" in _refusal(tmp_path, nested, "plan.json")
    assert f"nests more than {MAX_DEPTH} levels" in _refusal(tmp_path, f"calls: {nested}\n")


def test_the_deepest_plan_allowed_still_loads(tmp_path: Path) -> None:
    args: object = {"file_path": "a"}
    for _ in range(MAX_DEPTH - 5):  # plan, calls, the call, args: four levels above the innermost
        args = {"x": args}
    path = tmp_path / "plan.json"
    path.write_text(_read(args))
    assert isinstance(load_plan(path, tmp_path), BatchPlan)


def test_a_plan_over_the_size_limit_is_refused_before_it_is_parsed(tmp_path: Path) -> None:
    content = "x" * MAX_PLAN_BYTES
    message = _refusal(tmp_path, _read({"file_path": "a", "content": content}), "plan.json")
    assert f"larger than {MAX_PLAN_BYTES // 1024} KB" in message


@pytest.mark.parametrize(("name", "text"), [
    ("plan.json", '{"calls": [{"id": "w", "tool": "Write", "args": {"file_path": "a", "content": "\\ud800"}}]}'),
    ("plan.yaml", 'calls:\n  - {id: w, tool: Write, args: {file_path: a, content: "\\ud800"}}\n'),
    ("key.json", '{"calls": [{"id": "w", "tool": "Write", "args": {"\\udc80": 1}}]}'),
])
def test_a_lone_surrogate_anywhere_in_a_plan_is_refused_saying_where(tmp_path: Path, name: str, text: str) -> None:
    message = _refusal(tmp_path, text, name)
    assert "lone surrogate" in message and "calls[0].args" in message


def test_a_number_of_thousands_of_digits_is_refused_in_one_line(tmp_path: Path) -> None:
    text = _read({"file_path": "a", "limit": 0}).replace('"limit": 0', '"limit": ' + "9" * 5000)
    message = _refusal(tmp_path, text, "plan.json")
    assert "4300 digits" in message and "sys." not in message


def test_text_that_is_not_utf8_and_a_fifo_are_refused(tmp_path: Path) -> None:
    assert "not UTF-8 text (byte 0xff" in _refusal(tmp_path, b"calls: \xff\n")
    fifo = tmp_path / "fifo.yaml"
    os.mkfifo(fifo)
    with pytest.raises(PlanError, match="is not a file"):
        load_plan(fifo, tmp_path)


def test_relative_paths_of_file_tools_are_taken_in_the_workspace_wherever_the_call_sits(tmp_path: Path) -> None:
    batch = tmp_path / "batch.yaml"
    batch.write_text("calls:\n"
                     "  - {id: a, tool: Read, args: {file_path: src/app.py}}\n"
                     "  - {id: b, toolName: Grep, parameters: {pattern: TODO, path: src}}\n"
                     "  - {id: c, tool: Read, args: {file_path: '${b.data.files[0]}'}}\n"
                     "  - {id: d, tool: Read, args: {file_path: /etc/hostname}}\n"
                     "  - {id: e, tool: mcp__files__read, args: {path: notes.txt}}\n"
                     "  - {id: f, tool: Read, args: {file_path: ../outside.txt}}\n")
    calls = {c.id: c.args for c in load_plan(batch, tmp_path).calls}  # type: ignore[union-attr]
    assert calls["a"] == {"file_path": f"{tmp_path}/src/app.py"}
    assert calls["b"] == {"pattern": "TODO", "path": f"{tmp_path}/src"}
    assert calls["c"] == {"file_path": "${b.data.files[0]}"}  # resolved by the batch, later
    assert calls["d"] == {"file_path": "/etc/hostname"}
    assert calls["e"] == {"path": "notes.txt"}  # an MCP server's arguments are its own
    assert calls["f"] == {"file_path": f"{tmp_path}/../outside.txt"}  # refused by the tool, as before

    script = tmp_path / "script.yaml"
    script.write_text("steps:\n"
                      "  - {tool: Read, args: {file_path: README.md}}\n"
                      "  - tool: Task\n"
                      "    args:\n"
                      "      description: docs\n"
                      "      steps: [{tool: Edit, args: {file_path: docs/usage.md, old_string: a, new_string: b}}]\n"
                      "review: [{tool: Write, path: 'tests/*', decision: deny}]\n")
    plan = load_plan(script, tmp_path)
    assert isinstance(plan, ScriptPlan)
    steps = plan.script.steps
    assert steps[0].args == {"file_path": f"{tmp_path}/README.md"}
    assert steps[1].args["steps"][0]["args"]["file_path"] == f"{tmp_path}/docs/usage.md"  # type: ignore[index]
    assert plan.script.review[0].path == "tests/*"  # a reviewer's glob is not a call's path
