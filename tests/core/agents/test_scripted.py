"""The scripted agent: steps through the pipeline, sub-agents as a tree."""

from __future__ import annotations

from pathlib import Path

from core import AutoReviewer, Console, RunStatus, Script, load_script, run_script
from tests.conftest import ROOT, run

SUB_SCRIPT = {
    "name": "lead",
    "steps": [
        {"tool": "Read", "args": {"file_path": "{workspace}/README.md"}},
        {"tool": "Task", "args": {
            "description": "edit docs", "subagent_type": "docs-writer", "tools": ["Read", "Edit"],
            "steps": [
                {"id": "sub_edit", "tool": "Edit", "args": {"file_path": "{workspace}/docs/usage.md",
                                                             "old_string": "# Using shop", "new_string": "# Shop"}},
                {"id": "sub_write", "tool": "Write", "args": {"file_path": "{workspace}/x", "content": "no"}},
            ]}},
    ],
}


def test_a_task_step_spawns_a_sub_agent_with_only_its_tools(workspace: Path) -> None:
    async def scenario() -> None:
        async with Console(workspace) as console:
            reviewer = AutoReviewer(console)
            reviewer.start()
            summary, agent = await run_script(console, Script.model_validate(SUB_SCRIPT))
            await reviewer.stop()
            t = console.timeline
            [lead] = [a for a in t.agents.values() if a.name == "lead"]
            [sub] = [a for a in t.agents.values() if a.name == "docs-writer"]
            task_call = next(r for r in t.runs.values() if r.tool == "Task")
            assert sub.parent_id == lead.agent_id and sub.spawned_by == task_call.call_id
            assert t.children(f"a:{lead.agent_id}")[1:3] == [f"r:{task_call.call_id}", f"a:{sub.agent_id}"]
            assert agent.outcomes["sub_edit"].status == RunStatus.DONE
            refused = agent.outcomes["sub_write"]
            assert refused.status == RunStatus.FAILED and "no tool named 'Write'" in refused.text
            assert "2 steps" in summary

    run(scenario())
    assert (workspace / "docs" / "usage.md").read_text().startswith("# Shop")
    assert not (workspace / "x").exists()


def test_the_shipped_demo_script_runs_to_the_end_with_the_review_rules(workspace: Path) -> None:
    script = load_script(ROOT / "resources" / "demo" / "script.yaml")

    async def scenario() -> dict[str, RunStatus]:
        async with Console(workspace) as console:
            reviewer = AutoReviewer(console, script.review)
            reviewer.start()
            _, agent = await run_script(console, script)
            await reviewer.stop()
            return {k: o.status for k, o in agent.outcomes.items()}

    statuses = run(scenario())
    assert statuses["gut_tests"] == RunStatus.DENIED
    assert all(s == RunStatus.DONE for k, s in statuses.items() if k != "gut_tests"), statuses
    assert "item.quantity" in (workspace / "src" / "shop" / "cart.py").read_text()
    assert "## Receipts" in (workspace / "docs" / "usage.md").read_text()
    assert "test_total_counts_quantities" in (workspace / "tests" / "test_cart.py").read_text()
