"""Commands previewed before their effects land, with real commands in a real layer (`[bash] effects`):
a person applies all of a command's changes, some files, or none, and the workspace holds exactly that."""

from __future__ import annotations

import asyncio
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from core import ApprovalRequested, Console, RunStatus
from core.process.overlay import overlay_support
from core.tools.bash import BashSettings
from tests.conftest import run, wait_until

needs_layers = pytest.mark.skipif(not overlay_support().available, reason=overlay_support().detail)
Answerer = Callable[[Console, ApprovalRequested], None]


def _tree(root: Path) -> dict[str, tuple[bytes | str, int, int]]:
    """Every entry under `root`: its bytes (a link's target), mode and mtime."""
    found: dict[str, tuple[bytes | str, int, int]] = {}
    for path in sorted(root.rglob("*")):
        st = path.lstat()
        content: bytes | str = os.readlink(path) if path.is_symlink() else path.read_bytes() if path.is_file() else ""
        found[str(path.relative_to(root))] = (content, st.st_mode, st.st_mtime_ns)
    return found


def _approve_the_command_then(answer: Answerer) -> Answerer:
    """The command's own approval (no diffs) is given; the preview (with diffs) is answered by `answer`."""
    def respond(console: Console, request: ApprovalRequested) -> None:
        if request.diffs:
            answer(console, request)
        else:
            console.approve(request.call_id)
    return respond


async def _bash(console: Console, command: str, answer: Answerer) -> tuple[Any, list[ApprovalRequested]]:
    """Run `command` as an agent's Bash call, answering each approval as it comes; the previews asked."""
    console.register_approver("test")
    agent = await console.start_agent("agent", "scripted")
    asked: list[ApprovalRequested] = []
    answered: set[tuple[str, int]] = set()

    async def answering() -> None:
        while True:
            for request in console.pending_approvals():
                key = (request.call_id, len(request.diffs))
                if key not in answered:
                    answered.add(key)
                    if request.diffs:
                        asked.append(request)
                    answer(console, request)
            await asyncio.sleep(0.01)

    answerer = asyncio.ensure_future(answering())
    try:
        outcome = await console.call(agent, "Bash", {"command": command})
    finally:
        answerer.cancel()
    return outcome, asked


def _previewing(workspace: Path) -> Console:
    return Console(workspace, bash=BashSettings(effects="preview"))


@needs_layers
def test_sed_over_twenty_files_previewed_then_half_applied_lands_in_those_files_only(workspace: Path) -> None:
    names = [f"f{n:02}.txt" for n in range(20)]
    for n, name in enumerate(names):
        (workspace / name).write_bytes(f"hello {n}\nkeep\n".encode())
    kept, dropped = names[:10], names[10:]

    def half(console: Console, request: ApprovalRequested) -> None:
        console.approve(request.call_id, hunks={**{n: [0] for n in kept}, **{n: [] for n in dropped}})

    async def scenario() -> None:
        async with _previewing(workspace) as console:
            outcome, asked = await _bash(console, "sed -i s/hello/bye/ f*.txt && echo edited",
                                         _approve_the_command_then(half))
            assert outcome.status == RunStatus.DONE, outcome.text
            assert [d.path for d in asked[0].diffs] == names  # the person saw every file it would change
            assert "edited" in outcome.text and "applied: f00.txt" in outcome.text
            assert "discarded: f10.txt" in outcome.text
            for n, name in enumerate(names):
                word = "bye" if name in kept else "hello"
                assert (workspace / name).read_bytes() == f"{word} {n}\nkeep\n".encode()
            record = await console.call_record(outcome.call_id)
            assert record is not None and sorted(c.path for c in record.changes) == kept  # journaled as its own
            undone = await console.undo(outcome.call_id)
            assert undone.ok, undone
            assert all((workspace / name).read_bytes().startswith(b"hello") for name in names)

    run(scenario())


@needs_layers
def test_a_generator_s_tree_discarded_leaves_the_workspace_byte_identical(workspace: Path) -> None:
    (workspace / "lib").mkdir()
    (workspace / "lib" / "main.py").write_text("print('main')\n")
    (workspace / "old.txt").write_text("old\n")
    before = _tree(workspace)

    def discard(console: Console, request: ApprovalRequested) -> None:
        console.deny(request.call_id, "not this time")

    async def scenario() -> None:
        async with _previewing(workspace) as console:
            command = ("mkdir -p gen/a/b && for i in 1 2 3; do echo $i > gen/a/b/f$i.py; done; "
                       "echo changed >> lib/main.py; rm old.txt; chmod +x lib/main.py")
            outcome, asked = await _bash(console, command, _approve_the_command_then(discard))
            assert sorted(d.path for d in asked[0].diffs) == ["gen/a/b/f1.py", "gen/a/b/f2.py", "gen/a/b/f3.py",
                                                              "lib/main.py", "old.txt"]
            assert "none were applied: not this time" in outcome.text
            record = await console.call_record(outcome.call_id)
            assert record is not None and record.changes == ()

    run(scenario())
    assert {k: v for k, v in _tree(workspace).items() if not k.startswith(".belay")} == \
        {k: v for k, v in before.items() if not k.startswith(".belay")}


@needs_layers
def test_deletion_rename_binary_and_a_symlink_are_shown_and_applied(workspace: Path) -> None:
    (workspace / "gone.txt").write_text("bye\n")
    (workspace / "before.txt").write_text("moving " * 40 + "\n")
    blob = b"\x00\x01\x02\xff\xfe" * 200

    def everything(console: Console, request: ApprovalRequested) -> None:
        console.approve(request.call_id)

    async def scenario() -> None:
        async with _previewing(workspace) as console:
            command = ("rm gone.txt; mv before.txt after.txt; printf '\\000\\001\\002\\377\\376%.0s' $(seq 200) > data.bin; "
                       "ln -s after.txt link")
            outcome, asked = await _bash(console, command, _approve_the_command_then(everything))
            assert {d.path: d.status for d in asked[0].diffs} == {
                "gone.txt": "delete", "before.txt": "delete", "after.txt": "create", "data.bin": "create"}
            assert not (workspace / "gone.txt").exists() and not (workspace / "before.txt").exists()
            assert (workspace / "after.txt").read_text() == "moving " * 40 + "\n"
            assert (workspace / "data.bin").read_bytes() == blob
            assert os.readlink(workspace / "link") == "after.txt"  # a link is applied with the files
            assert "link (a link to after.txt)" in asked[0].reason and "applied: " in outcome.text
            record = await console.call_record(outcome.call_id)
            assert record is not None and "link" in {c.path for c in record.changes}  # and undoable like them

    run(scenario())


@needs_layers
def test_a_command_that_fails_halfway_shows_its_partial_effects_and_applies_none_when_denied(
        workspace: Path) -> None:
    def deny(console: Console, request: ApprovalRequested) -> None:
        console.deny(request.call_id, "it failed")

    async def scenario() -> None:
        async with _previewing(workspace) as console:
            outcome, asked = await _bash(console, "echo half > half.txt && false && echo never > never.txt",
                                         _approve_the_command_then(deny))
            assert [d.path for d in asked[0].diffs] == ["half.txt"]
            assert "Exit code 1" in outcome.text and "none were applied" in outcome.text
            assert not (workspace / "half.txt").exists()

    run(scenario())


@needs_layers
def test_a_command_cancelled_while_it_runs_leaves_no_layer_and_no_process(workspace: Path) -> None:
    layers = Path(tempfile.gettempdir())
    before = set(layers.glob("belay-layer-*"))

    def never(console: Console, request: ApprovalRequested) -> None:
        if not request.diffs:
            console.approve(request.call_id)

    async def scenario() -> None:
        async with _previewing(workspace) as console:
            task = asyncio.ensure_future(_bash(console, "echo x > x.txt; sleep 31.7", never))
            await wait_until(lambda: _sleepers("31.7"), what="the command to be running")
            assert set(layers.glob("belay-layer-*")) - before  # it runs in a layer
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            await wait_until(lambda: not _sleepers("31.7"), what="the command's processes to be gone")
            assert set(layers.glob("belay-layer-*")) == before
            assert not (workspace / "x.txt").exists()

    run(scenario())


def _sleepers(marker: str) -> list[int]:
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if cmdline[:2] == [b"sleep", marker.encode()]:
            found.append(int(pid))
    return found


@needs_layers
def test_the_user_s_settings_turn_previews_on_and_a_denied_preview_lands_nothing(workspace: Path) -> None:
    (Path(os.environ["BELAY_CONFIG_DIR"]) / "settings.toml").write_text('[bash]\neffects = "preview"\n')

    def discard(console: Console, request: ApprovalRequested) -> None:
        console.deny(request.call_id)

    async def scenario() -> None:
        async with Console(workspace) as console:
            assert console.bash_settings.effects == "preview" and console.previews.available
            outcome, asked = await _bash(console, "echo new > fresh.txt", _approve_the_command_then(discard))
            assert [d.path for d in asked[0].diffs] == ["fresh.txt"] and not (workspace / "fresh.txt").exists()
            assert "none were applied" in outcome.text

    run(scenario())


@needs_layers
@pytest.mark.allow_warning_logs  # the two bad rules are reported, as settings problems are
def test_a_rule_can_ask_for_its_commands_to_run_in_preview(workspace: Path) -> None:
    (Path(os.environ["BELAY_CONFIG_DIR"]) / "settings.toml").write_text(
        '[permissions]\nallow = [{ rule = "Bash(sed:*)", preview = true }, "Bash(touch:*)",\n'
        '         { rule = "Write", preview = true }, { rule = "Bash(echo:*)", preview = "yes" }]\n')
    (workspace / "names.txt").write_text("alpha\n")

    def keep_none(console: Console, request: ApprovalRequested) -> None:
        console.deny(request.call_id, "not now")

    async def scenario() -> None:
        async with Console(workspace) as console:  # commands apply as they run, except the rule's
            assert any("preview applies to Bash rules only" in p for p in console.settings_problems)
            assert any("preview must be true or false" in p for p in console.settings_problems)
            outcome, asked = await _bash(console, "sed -i s/alpha/beta/ names.txt", keep_none)
            assert [d.path for d in asked[0].diffs] == ["names.txt"]  # allowed to run; its effects asked about
            assert (workspace / "names.txt").read_text() == "alpha\n" and "none were applied" in outcome.text
            touched, asked = await _bash(console, "touch made.txt", keep_none)
            assert asked == [] and (workspace / "made.txt").exists()  # another rule: applied as it ran

    run(scenario())


@needs_layers
def test_a_watcher_runs_as_it_is_its_effects_at_once_and_no_preview_asked(workspace: Path) -> None:
    def nothing(console: Console, request: ApprovalRequested) -> None:
        console.approve(request.call_id)

    async def scenario() -> None:
        async with _previewing(workspace) as console:
            agent_command = "echo started > live.txt; tail -f /dev/null"
            console.register_approver("test")
            agent = await console.start_agent("agent", "scripted")
            seen: list[bool] = []

            async def approving() -> None:
                while True:
                    for request in console.pending_approvals():
                        seen.append(bool(request.diffs))
                        nothing(console, request)
                    await asyncio.sleep(0.01)

            helper = asyncio.ensure_future(approving())
            try:
                call = asyncio.ensure_future(console.call(agent, "Bash", {"command": agent_command, "timeout": 3000}))
                await wait_until(lambda: (workspace / "live.txt").exists(), what="the watcher's file, at once")
                outcome = await call
            finally:
                helper.cancel()
            assert outcome.status == RunStatus.TIMED_OUT and not any(seen)  # never previewed

    run(scenario())
