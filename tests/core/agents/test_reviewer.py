"""The unattended reviewer: approvals answered by its rules, through the console's commands, while it runs."""

from __future__ import annotations

import asyncio
from pathlib import Path

from core import AutoReviewer, Console, ReviewRule, RunStatus
from tests.conftest import run, wait_until


def test_the_first_matching_rule_decides_and_everything_else_is_approved(workspace: Path) -> None:
    tests_dir = workspace / "tests"
    original = (tests_dir / "test_cart.py").read_text()
    rules = [
        ReviewRule(tool="Write", path="tests/test_cart.py", decision="approve"),
        ReviewRule(tool="Write", path="tests/*", decision="deny", reason="Do not rewrite the tests."),
    ]

    async def scenario() -> None:
        async with Console(workspace) as console:
            reviewer = AutoReviewer(console, rules)
            reviewer.start()
            agent = await console.start_agent("agent", "scripted")

            async def write(path: Path, content: str) -> tuple[str, RunStatus, str]:
                outcome = await console.call(agent, "Write", {"file_path": str(path), "content": content})
                return outcome.call_id, outcome.status, outcome.text

            new_test = await write(tests_dir / "test_new.py", "assert True\n")
            cart_test = await write(tests_dir / "test_cart.py", original + "# reviewed\n")
            notes = await write(workspace / "notes.txt", "notes\n")
            edit = await console.call(agent, "Edit", {"file_path": str(tests_dir / "test_cart.py"),
                                                      "old_string": "# reviewed", "new_string": "# approved"})
            await reviewer.stop()
            assert new_test[1] == RunStatus.DENIED and "Do not rewrite the tests." in new_test[2]
            assert cart_test[1] == notes[1] == edit.status == RunStatus.DONE  # an earlier rule; no rule; another tool
            assert reviewer.answered == [(new_test[0], "deny"), (cart_test[0], "approve"), (notes[0], "approve"),
                                         (edit.call_id, "approve")]

    run(scenario())
    assert not (tests_dir / "test_new.py").exists()
    assert (tests_dir / "test_cart.py").read_text().endswith("# approved\n")


def test_a_command_with_no_diff_is_judged_by_its_summary(workspace: Path) -> None:
    rules = [ReviewRule(tool="Bash", path="rm *", decision="deny", reason="Nothing is deleted unattended.")]

    async def scenario() -> None:
        async with Console(workspace) as console:
            reviewer = AutoReviewer(console, rules)
            reviewer.start()
            agent = await console.start_agent("agent", "scripted")
            removal = await console.call(agent, "Bash", {"command": "rm -f README.md"})
            creation = await console.call(agent, "Bash", {"command": "touch made-by-bash"})
            await reviewer.stop()
            assert removal.status == RunStatus.DENIED and "Nothing is deleted unattended." in removal.text
            assert creation.status == RunStatus.DONE

    run(scenario())
    assert (workspace / "README.md").exists() and (workspace / "made-by-bash").exists()


def test_a_request_already_waiting_when_it_starts_is_answered(workspace: Path) -> None:
    async def scenario() -> None:
        async with Console(workspace) as console:
            console.register_approver("the window, before the reviewer took over")
            agent = await console.start_agent("agent", "scripted")
            call = asyncio.ensure_future(console.call(agent, "Write", {"file_path": str(workspace / "early.txt"),
                                                                       "content": "early\n"}))
            await wait_until(console.pending_approvals, what="the approval request")
            [request] = console.pending_approvals()
            reviewer = AutoReviewer(console)
            reviewer.start()
            outcome = await call
            await reviewer.stop()
            assert outcome.status == RunStatus.DONE and reviewer.answered == [(request.call_id, "approve")]

    run(scenario())
    assert (workspace / "early.txt").read_text() == "early\n"


def test_once_stopped_it_answers_nothing_and_asking_means_denying_again(workspace: Path) -> None:
    async def scenario() -> None:
        async with Console(workspace) as console:
            reviewer = AutoReviewer(console)
            reviewer.start()
            await reviewer.stop()
            agent = await console.start_agent("agent", "scripted")
            outcome = await console.call(agent, "Write", {"file_path": str(workspace / "late.txt"), "content": "1"})
            assert outcome.status == RunStatus.DENIED and "no window is attached" in outcome.text
            assert reviewer.answered == []

    run(scenario())
    assert not (workspace / "late.txt").exists()
