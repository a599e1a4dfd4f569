"""What the approval panel writes about a request (gui.window.approvals.text): who asks and why, in full and
escaped; what a previewed command printed; and why a command cannot run in preview."""

from __future__ import annotations

from typing import Any

import pytest

from core import AgentStarted, ApprovalRequested, Impact, OverlaySupport, Timeline
from core.changes.diffs import compute_diff
from gui.window.approvals.text import PRINTED_LINES, agent_path, detail_html, printed, why_no_preview

PREVIEWS = OverlaySupport(available=True, detail="overlayfs in a user namespace")


def _timeline() -> Timeline:
    timeline = Timeline()
    for seq, (agent, name, parent) in enumerate((("a1", "lead", None), ("a2", "frontend", "a1"),
                                                 ("a3", "docs-writer", "a2")), 1):
        timeline.apply(AgentStarted(seq=seq, agent_id=agent, session_id="s", name=name, agent_kind="scripted",
                                    parent_id=parent))
    return timeline


def _request(tool: str = "Write", **fields: Any) -> ApprovalRequested:
    return ApprovalRequested(**{"call_id": "c1", "agent_id": "a3", "tool": tool, "summary": "notes.md",
                                "reason": "writes need approval in this mode", "args": {}, **fields})


def test_the_asking_agent_is_named_with_its_parents() -> None:
    timeline = _timeline()
    assert agent_path(timeline, "a3") == "lead › frontend › docs-writer"
    assert agent_path(timeline, "a1") == "lead"
    assert agent_path(timeline, "gone") == "gone"  # an agent the timeline does not know: its id, not nothing


def test_the_detail_says_who_asks_what_the_agent_said_the_reason_the_rule_and_every_impact_reason() -> None:
    reasons = tuple(f"writes file{i}.txt" for i in range(6))
    request = _request(args={"description": "Regenerate the fixtures"}, rule="Write(docs/**)",
                       impact=Impact(level="medium", reasons=reasons))
    text = detail_html(request, _timeline())
    assert "Asked by <b>lead › frontend › docs-writer</b>" in text
    assert "“Regenerate the fixtures”" in text and "writes need approval in this mode" in text
    assert "(rule Write(docs/**))" in text
    assert "MEDIUM impact" in text and all(r in text for r in reasons) and "more)" not in text


def test_markup_in_what_the_agent_wrote_shows_literally() -> None:
    request = _request(args={"description": "<img src=x onerror=alert(1)> & <b>now</b>"},
                       reason="asks about <script>")
    text = detail_html(request, _timeline())
    assert "<img" not in text and "<script>" not in text and "<b>now" not in text
    assert "&lt;img src=x onerror=alert(1)&gt; &amp; &lt;b&gt;now&lt;/b&gt;" in text and "&lt;script&gt;" in text


def test_a_previewed_command_shows_what_it_ran_and_the_last_lines_it_printed() -> None:
    output = "".join(f"step {n}\n" for n in range(1, 21))
    diff = compute_diff("out.txt", None, b"made\n")
    request = _request("Bash", summary="make all", args={"command": "make all"}, diffs=(diff,), output=output,
                       reason="it changed 1 file; network calls are not shown")
    text = detail_html(request, _timeline())
    assert "<b>Previewed:</b> <code>make all</code>" in text and "network calls are not shown" in text
    shown = [f"step {n}" for n in range(21 - PRINTED_LINES, 21)]
    assert "\n".join(shown) in text and f"step {20 - PRINTED_LINES}\n" not in text  # the end, where it says how


def test_a_command_that_printed_nothing_says_so_and_printed_markup_shows_literally() -> None:
    assert "It printed nothing." in printed("\n\n")
    assert "&lt;error&gt; a &amp; b" in printed("<error> a & b\n")


@pytest.mark.parametrize(("request_", "previews", "why"), [
    (_request("Write"), PREVIEWS, "Only a command can run in preview"),
    (_request("Bash", args={"command": "rm -rf build", "run_in_background": True}), PREVIEWS,
     "A background shell outlives its call, so it runs as it is: no preview"),
    (_request("Bash", args={"command": "npm run dev"}), PREVIEWS,
     "`npm run dev` looks like a server or a watcher, whose effects are wanted at once: it runs as it is, no preview"),
    (_request("Bash", args={"command": "rm -rf build"}),
     OverlaySupport(available=False, detail="overlayfs is not allowed in this container"),
     "Previews are not available here: overlayfs is not allowed in this container"),
    (_request("Bash", args={"command": 42}), PREVIEWS, "Its arguments are not a command Belay can run"),
    (_request("Bash", args={"command": "rm -rf build"}), PREVIEWS, None),
], ids=["not a command", "background shell", "server", "no overlays here", "bad arguments", "can"])
def test_why_a_command_cannot_run_in_preview(request_: ApprovalRequested, previews: OverlaySupport,
                                              why: str | None) -> None:
    assert why_no_preview(request_, previews) == why
