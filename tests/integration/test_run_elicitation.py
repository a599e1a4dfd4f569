"""`belay run` and an MCP server that asks the person for input: nobody can fill in a form, so it is declined.

`belay run` answers approvals (on the terminal, or with --auto), never a server's form: the question is
declined at once, the server hears "decline", and the run goes on.  A real server (the toy server on the
official SDK, tests/core/mcp/toy_server.py --eliciting) over stdio.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.integration.test_run_cli import TOY, _calls, _mcp_servers, _plan, _run


def _book(tmp_path: Path) -> Path:
    _mcp_servers(toy=(str(TOY), "stdio", "--eliciting"))
    return _plan(tmp_path, "book.json", {"name": "book", "calls": [{"id": "book", "tool": "mcp__toy__book",
                                                                    "args": {}}]})


def test_a_servers_question_is_declined_in_a_headless_run(workspace: Path, state_dir: Path, tmp_path: Path) -> None:
    result = _run(_book(tmp_path), workspace, state_dir, "--json", "--auto", "approve")
    assert result.returncode == 0, result.stdout + result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    kinds = [e["kind"] for e in events]
    asked = [e for e in events if e["kind"] == "elicitation_requested"]
    resolved = [e for e in events if e["kind"] == "elicitation_resolved"]
    assert len(asked) == 1 and asked[0]["server"] == "toy" and asked[0]["message"] == "Who is the booking for?"
    assert [(r["action"], r["by"]) for r in resolved] == [("decline", "headless")]
    assert kinds.index("elicitation_requested") < kinds.index("elicitation_resolved")
    [finished] = [e for e in events if e["kind"] == "call_finished"]
    assert finished["status"] == "done" and "not booked: decline" in json.dumps(finished)


def test_terminal_prompts_answer_the_approval_but_not_the_servers_form(workspace: Path, state_dir: Path,
                                                                       tmp_path: Path) -> None:
    """The person at the terminal approves the call; its question for input is still declined, not left
    waiting for an answer the terminal cannot give."""
    result = _run(_book(tmp_path), workspace, state_dir, answers="y\n")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Summary  book: 1 call, 1 succeeded" in result.stdout, result.stdout
    assert [c["status"] for c in _calls(workspace, state_dir)] == ["done"]
