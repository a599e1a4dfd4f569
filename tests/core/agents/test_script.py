"""The script format: one meaning in YAML or JSON, clear refusals of malformed scripts, `{workspace}` filled in."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import ValidationError

from core.agents.script import Script, Step, load_script, substitute

SCRIPT: dict[str, Any] = {
    "name": "fixer",
    "description": "Reads, surveys, writes.",
    "steps": [
        {"id": "read_app", "tool": "Read", "args": {"file_path": "{workspace}/src/app.py"}},
        {"id": "survey", "batch": {"name": "survey", "fail_fast": True, "calls": [
            {"id": "files", "toolName": "Glob", "parameters": {"pattern": "src/**/*.py"}},
            {"id": "first", "tool": "Read", "args": {"file_path": "${files.data.files[0]}"}, "dependsOn": ["files"]},
        ]}},
        {"id": "raw", "tool": "Read", "args": '{"file_path": "{workspace}/a", "file_path": "/etc/passwd"}',
         "pause": 0.5},
    ],
    "review": [{"tool": "Write", "path": "tests/*", "decision": "deny", "reason": "Keep the tests."}],
    "undo_after": ["read_app"],
}


def test_a_script_means_the_same_in_yaml_and_json(tmp_path: Path) -> None:
    (tmp_path / "s.yaml").write_text(yaml.safe_dump(SCRIPT))
    (tmp_path / "s.yml").write_text(yaml.safe_dump(SCRIPT))
    (tmp_path / "s.json").write_text(json.dumps(SCRIPT))
    from_yaml, from_yml, from_json = (load_script(tmp_path / name) for name in ("s.yaml", "s.yml", "s.json"))
    assert from_yaml == from_yml == from_json
    read_app, survey, raw = from_json.steps
    assert survey.batch is not None and survey.batch.fail_fast and survey.batch.concurrency == 10
    [files, first] = survey.batch.calls
    assert (files.tool, files.args) == ("Glob", {"pattern": "src/**/*.py"})  # the seed material's spelling
    assert first.depends_on == ("files",)
    assert raw.args == SCRIPT["steps"][2]["args"] and raw.pause == 0.5  # raw JSON stays text, for the pipeline
    assert from_json.review[0].decision == "deny" and from_json.undo_after == ["read_app"]


@pytest.mark.parametrize(("step", "problem"), [
    ({"tool": "Read", "batch": {"calls": [{"id": "a", "tool": "LS"}]}}, "either a tool (with args) or a batch"),
    ({"id": "nothing"}, "either a tool (with args) or a batch"),
    ({"tool_name": "Read"}, "steps.0.tool_name\n  Extra inputs are not permitted"),
    ({"batch": {"calls": []}}, "at least 1 item"),
    ({"batch": {"calls": [{"id": "a", "tool": "LS"}], "concurrency": 0}}, "greater than or equal to 1"),
    ({"batch": {"calls": [{"id": "a", "tool": "LS"}], "concurrency": 65}}, "less than or equal to 64"),
    ({"batch": {"calls": [{"id": "not an id", "tool": "LS"}]}}, "steps.0.batch.calls.0.id\n  String should match pattern"),
])
def test_a_malformed_step_is_refused_naming_the_problem(step: dict[str, Any], problem: str) -> None:
    with pytest.raises(ValidationError, match=re.escape(problem)):
        Script.model_validate({"steps": [step]})


def test_a_malformed_review_rule_or_a_missing_step_list_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match="review.0.decision"):
        Script.model_validate({"steps": [], "review": [{"tool": "Write", "decision": "maybe"}]})
    (tmp_path / "empty.yaml").write_text("name: no steps\n")
    with pytest.raises(ValidationError, match="steps"):
        load_script(tmp_path / "empty.yaml")


def test_substitute_fills_in_the_workspace_in_every_nested_string_and_nothing_else() -> None:
    step = Step.model_validate(SCRIPT["steps"][0])
    args = {"file_path": "{workspace}/src/app.py", "edits": [{"old": "{workspace}", "n": 3}, None, True],
            "note": "from {workspace} to {workspace}/out", "ref": "${files.data.files[0]}", "limit": 2.5}
    filled = substitute(args, "/ws")
    assert filled == {"file_path": "/ws/src/app.py", "edits": [{"old": "/ws", "n": 3}, None, True],
                      "note": "from /ws to /ws/out", "ref": "${files.data.files[0]}", "limit": 2.5}
    assert args["file_path"] == "{workspace}/src/app.py"  # the script itself is left as written
    assert substitute(step.args, "/ws") == {"file_path": "/ws/src/app.py"}
    assert substitute('{"file_path": "{workspace}/a"}', "/ws") == '{"file_path": "/ws/a"}'  # raw JSON too
