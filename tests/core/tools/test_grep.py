"""Grep: ripgrep's output modes, its linear-time engine, and the time-limited Python fallback."""

from __future__ import annotations

import asyncio
import json
import os
import signal
from pathlib import Path

import pytest
from pydantic import ValidationError

from core import Console, RunStatus, config_dir, install_token
from core.errors import ErrorKind, ToolError
from core.ids import AgentId, CallId
from core.paths import Workspace
from core.run.calls import CallOutcome
from core.tools import grep
from core.tools.base import ReadState, ToolContext, ToolOutput
from core.tools.grep import Grep, GrepArgs
from tests.conftest import RUNAWAY_S, run


def make_ctx(root: Path) -> ToolContext:
    return ToolContext(workspace=Workspace(root), agent_id=AgentId("a"), call_id=CallId("c"), read_state=ReadState())


def search(root: Path, **args: object) -> ToolOutput:
    return asyncio.run(Grep().run(GrepArgs.model_validate(args), make_ctx(root)))


def search_error(root: Path, **args: object) -> ToolError:
    with pytest.raises(ToolError) as info:
        search(root, **args)
    return info.value


@pytest.fixture(params=["rg", "python"])
def engine(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Every behaviour test runs against ripgrep and against the fallback."""
    if request.param == "rg":
        assert grep.find_rg() is not None, "the ripgrep wheel should put rg beside the interpreter"
    else:
        monkeypatch.setattr(grep, "find_rg", lambda: None)
    return str(request.param)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    files = {"src/app.py": "import os\n# TODO: split\ndef main():\n    return os.getcwd()\n",
             "src/util.py": "def helper():\n    pass  # todo later\n",
             "README.md": "TODO list\n", ".git/config": "TODO in git\n"}
    for rel, text in files.items():
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(text)
    os.utime(ws / "README.md", ns=(10**9, 10**9))
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.py").write_text("TODO SECRET\n")
    (ws / "linked").symlink_to(outside)
    return ws


def test_files_with_matches_lists_absolute_paths_newest_first(root: Path, engine: str) -> None:
    out = search(root, pattern="TODO")
    assert out.data["files"] == [str(root / "src/app.py"), str(root / "README.md")]
    assert "SECRET" not in out.text and ".git" not in out.text and "linked" not in out.text


def test_content_mode_shows_path_line_and_text(root: Path, engine: str) -> None:
    out = search(root, pattern="todo", output_mode="content", **{"-i": True}, glob="*.py")
    assert out.text.split("\n") == [f"{root}/src/app.py:2:# TODO: split",
                                    f"{root}/src/util.py:2:    pass  # todo later"]


def test_context_lines_and_head_limit(root: Path, engine: str) -> None:
    out = search(root, pattern="def main", output_mode="content", path=f"{root}/src/app.py", **{"-B": 1})
    assert out.text.split("\n") == [f"{root}/src/app.py-2-# TODO: split", f"{root}/src/app.py:3:def main():"]
    limited = search(root, pattern=".", output_mode="content", path=f"{root}/src", head_limit=2)
    assert len(limited.text.split("\n")) == 2


def test_count_mode(root: Path, engine: str) -> None:
    out = search(root, pattern="o", output_mode="count", type="py")
    assert out.data["matches"] == 3
    assert out.text.split("\n") == [f"{root}/src/app.py:2", f"{root}/src/util.py:1",
                                    "Found 3 matching lines in 2 files."]


def test_no_matches_and_bad_patterns(root: Path, engine: str) -> None:
    assert search(root, pattern="nothing-like-this").text == "No matches found"
    error = search_error(root, pattern="(unclosed")
    assert error.kind is ErrorKind.INVALID_ARGS and "(unclosed" in error.info.message


def test_multiline_patterns_span_lines(root: Path, engine: str) -> None:
    out = search(root, pattern=r"split\ndef", multiline=True, output_mode="content")
    assert out.text.split("\n") == [f"{root}/src/app.py:2:# TODO: split", f"{root}/src/app.py:3:def main():"]


def test_paths_are_checked(root: Path, tmp_path: Path, engine: str) -> None:
    assert search_error(root, pattern="x", path=str(tmp_path)).kind is ErrorKind.OUTSIDE_WORKSPACE
    assert search_error(root, pattern="x", path=f"{root}/linked").kind is ErrorKind.OUTSIDE_WORKSPACE
    assert search_error(root, pattern="x", path=f"{root}/nope").kind is ErrorKind.NOT_FOUND


def test_a_pattern_starting_with_a_dash_is_a_pattern(root: Path, engine: str) -> None:
    (root / "flags.txt").write_text("use --version here\n")
    assert search(root, pattern="--version").data["files"] == [str(root / "flags.txt")]


@pytest.mark.timeout(RUNAWAY_S)  # a backtracking engine takes 2^40 steps here
def test_catastrophic_backtracking_finishes_quickly_with_rg(root: Path) -> None:
    (root / "evil.txt").write_text("a" * 40 + "!\n")
    assert search(root, pattern="(a+)+$", path=f"{root}/evil.txt").text == "No matches found"  # searched, not stopped


@pytest.mark.timeout(RUNAWAY_S)  # Python's backtracking engine takes 2^40 steps here: stopped, or it runs for days
def test_the_fallback_is_stopped_at_its_time_limit(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(grep, "find_rg", lambda: None)
    monkeypatch.setattr(grep, "TIME_LIMIT_S", 2.0)
    (root / "evil.txt").write_text("a" * 40 + "!\n")
    error = search_error(root, pattern="(a+)+$", path=f"{root}/evil.txt")
    assert error.kind is ErrorKind.TIMEOUT


def test_alias_arguments_validate() -> None:
    args = GrepArgs.model_validate({"pattern": "x", "-i": True, "-n": False, "-A": 1, "-B": 2, "-C": 3})
    assert (args.case_insensitive, args.line_numbers, args.after, args.before, args.context) == (True, False, 1, 2, 3)
    assert args.model_dump(by_alias=True)["-i"] is True
    for bad in ({"pattern": "x", "-i": "yes"}, {"pattern": "x", "output_mode": "lines"}, {"pattern": ""},
                {"pattern": "x", "-A": -1}, {"pattern": "x", "unknown": 1}):
        with pytest.raises(ValidationError):
            GrepArgs.model_validate(bad)


def test_summary(root: Path) -> None:
    args = GrepArgs.model_validate({"pattern": "TODO", "path": f"{root}/src", "glob": "*.py"})
    assert Grep().summary(args, Workspace(root)) == "'TODO' in src (*.py)"


@pytest.mark.timeout(RUNAWAY_S)
def test_output_beyond_the_cap_stops_the_search() -> None:
    """Each time: the search's end was once unseen in 1 run in 20 or so (its pipe's reading paused past the cap),
    and the search then waited out its whole time limit."""
    for _ in range(30):  # a time limit of an hour: only the cap can end `yes` before the test's deadline
        rc, out, _ = asyncio.run(grep.run_capped(["yes", "match"], 3600, 1000))
        assert rc == -signal.SIGKILL and 0 < len(out) <= 1000 and out.endswith(b"match\n")


def test_a_cancelled_search_kills_its_process(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"

    async def cancel_soon() -> None:
        task = asyncio.ensure_future(grep.run_capped(["sh", "-c", f"echo $$ > {pid_file}; exec sleep 30"], 60, 1000))
        while not pid_file.exists() or not pid_file.read_text().strip():
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(cancel_soon())
    with pytest.raises(ProcessLookupError):
        os.kill(int(pid_file.read_text()), 0)


@pytest.mark.timeout(RUNAWAY_S)  # a FIFO read waits for a writer: forever, here
def test_a_fifo_named_explicitly_is_refused_not_waited_on(root: Path, engine: str) -> None:
    os.mkfifo(root / "pipe")
    assert search_error(root, pattern="x", path=f"{root}/pipe").kind is ErrorKind.NOT_REGULAR_FILE
    assert search(root, pattern="TODO", path=str(root)).data["files"]  # and a walk skips it


def deny_env(path: Path) -> str | None:
    """A stand-in for the policy's read filter with `Read(./.env)` denied."""
    return f"{path} matches the deny rule Read(./.env)" if path.name == ".env" else None


def search_denying(root: Path, **args: object) -> ToolOutput:
    ctx = make_ctx(root)
    ctx.may_read = deny_env
    return asyncio.run(Grep().run(GrepArgs.model_validate(args), ctx))


def test_a_nul_byte_in_an_argument_is_an_invalid_args_error_not_a_crash(root: Path, engine: str) -> None:
    error = search_error(root, pattern="TO\0DO")
    assert error.kind is ErrorKind.INVALID_ARGS
    assert error.info.message == "pattern contains a NUL character, which cannot be passed to the search"
    assert "\\x00" in error.info.suggestion
    assert search_error(root, pattern="TODO", glob="*.py\0").kind is ErrorKind.INVALID_ARGS
    assert search_error(root, pattern="TODO", type="py\0").kind is ErrorKind.INVALID_ARGS
    assert search_error(root, pattern="TODO", path=f"{root}/src\0").kind is ErrorKind.INVALID_ARGS


@pytest.fixture
def with_env(root: Path) -> Path:
    (root / ".env").write_text("API_KEY=sk-TODO-secret\nother\n")
    (root / "sub").mkdir()
    (root / "sub" / ".env").write_text("TODO nested secret\n")
    return root


@pytest.mark.parametrize("where", [None, "", "sub"])
def test_files_a_read_deny_rule_covers_are_hidden_from_every_mode(with_env: Path, engine: str,
                                                                   where: str | None) -> None:
    path = {} if where is None else {"path": str(with_env / where) if where else str(with_env)}
    for mode in ("content", "files_with_matches", "count"):
        out = search_denying(with_env, pattern="TODO", output_mode=mode, **path)
        assert "secret" not in out.text and ".env" not in out.text
        assert "hidden" not in out.text  # a note would say a denied file matched: a leak, one pattern at a time


def test_the_answer_does_not_tell_whether_a_denied_file_matched(with_env: Path, engine: str) -> None:
    matching = search_denying(with_env, pattern="sk-TODO", output_mode="content")  # only .env holds it
    missing = search_denying(with_env, pattern="no-such-text", output_mode="content")
    assert matching.text == missing.text == "No matches found"


def test_a_denied_file_searched_by_name_shows_nothing(with_env: Path, engine: str) -> None:
    out = search_denying(with_env, pattern="API_KEY", path=str(with_env / ".env"), output_mode="content")
    assert out.text == "No matches found"


def test_context_breaks_stay_tidy_around_a_hidden_file(root: Path, engine: str) -> None:
    (root / "a.txt").write_text("x\nneedle\n")
    (root / ".env").write_text("needle\n")
    (root / "z.txt").write_text("needle\ny\n")
    out = search_denying(root, pattern="needle", output_mode="content", **{"-C": 1})
    assert out.text.split("\n") == [f"{root}/a.txt-1-x", f"{root}/a.txt:2:needle", "--",
                                    f"{root}/z.txt:1:needle", f"{root}/z.txt-2-y"]


def test_matching_lines_show_control_sequences_as_escapes(root: Path, engine: str) -> None:
    (root / "spoof.txt").write_text("TODO\x1b[2K\x1b]52;c;Y3VybA==\x07done\r\n")
    out = search(root, pattern="TODO", output_mode="content", path=str(root / "spoof.txt"))
    assert out.text == f"{root}/spoof.txt:1:TODO\\x1b[2K\\x1b]52;c;Y3VybA==\\x07done"


def test_a_file_name_with_escapes_or_newlines_cannot_forge_output(root: Path, engine: str) -> None:
    (root / "evil\x1b[2J\nREADME.md:1:fake").write_text("TODO\n")
    out = search(root, pattern="TODO", path=str(root), glob="evil*")
    assert out.text.split("\n") == ["Found 1 files", f"{root}/evil\\x1b[2J\\nREADME.md:1:fake"]
    content = search(root, pattern="TODO", output_mode="content", glob="evil*")
    assert content.text == f"{root}/evil\\x1b[2J\\nREADME.md:1:fake:1:TODO"


def test_long_matching_lines_are_cut_at_2000_characters_saying_so(root: Path, engine: str) -> None:
    (root / "wide.txt").write_text("TODO" + "w" * 2996 + "\n")
    out = search(root, pattern="TODO", output_mode="content", path=str(root / "wide.txt"))
    assert out.text == f"{root}/wide.txt:1:TODO{'w' * 1996}... [line cut: 1,000 of 3,000 characters not shown]"


def test_a_minified_line_is_cut_even_when_ripgrep_only_sends_a_preview(root: Path) -> None:
    (root / "bundle.js").write_text("TODO" + "m" * 50_000 + "\n")
    out = search(root, pattern="TODO", output_mode="content", path=str(root / "bundle.js"))
    assert out.text.startswith(f"{root}/bundle.js:1:TODO{'m' * 1996}... [line cut")
    assert len(out.text) < 2200 and "4,000" in out.text


def test_a_search_stopped_at_its_output_cap_keeps_whole_names_and_says_it_stopped(
        root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(grep, "MAX_OUTPUT_BYTES", 4096)
    for i in range(400):
        (root / f"match-{i:03}.txt").write_text("needle\n")
    out = search(root, pattern="needle")
    assert 10 < len(out.data["files"]) < 400
    assert all(Path(f).name.startswith("match-") and Path(f).name.endswith(".txt") for f in out.data["files"])
    assert out.text.endswith("(The search printed over 4,096 bytes and was stopped; narrow it with path, glob or type.)")


def test_through_the_console_a_read_deny_rule_in_the_settings_hides_env_from_any_search(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / ".belay").mkdir(parents=True)
    (ws / ".belay" / "settings.toml").write_text('[permissions]\ndeny = ["Read(./.env)"]\n')
    (ws / ".env").write_text("API_KEY=sk-live-TODO\n")
    (ws / "app.py").write_text("# TODO: ship\n")

    async def scenario() -> list[CallOutcome]:
        async with Console(ws) as console:
            agent = await console.start_agent("agent", "scripted")
            searches = [{"pattern": "TODO", "output_mode": "content"},
                        {"pattern": "TODO", "output_mode": "content", "path": str(ws)},
                        {"pattern": "API_KEY", "output_mode": "count"}]
            return [await console.call(agent, "Grep", args) for args in searches]

    for outcome in run(scenario()):
        assert outcome.status is RunStatus.DONE
        assert "sk-live" not in outcome.text and ".env" not in outcome.text
        assert "hidden" not in outcome.text


def test_a_deny_rule_added_after_a_search_holds_for_the_same_search_again(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".env").write_text("API_KEY=sk-live-TODO\n")
    (ws / "app.py").write_text("# TODO: ship\n")

    async def scenario() -> tuple[CallOutcome, CallOutcome]:
        async with Console(ws) as console:
            agent = await console.start_agent("agent", "scripted")
            before = await console.call(agent, "Grep", {"pattern": "TODO", "output_mode": "content"})
            await console.add_rule("Read(./.env)", "deny", "session")
            return before, await console.call(agent, "Grep", {"pattern": "TODO", "output_mode": "content"})

    before, after = run(scenario())
    assert "sk-live" in before.text  # no rule yet
    assert "sk-live" not in after.text and "app.py" in after.text and "hidden" not in after.text


def test_a_long_file_list_is_checked_against_the_rules_only_as_far_as_it_is_shown(root: Path, engine: str) -> None:
    for i in range(60):
        (root / f"hit{i:02}.txt").write_text("needle\n")
    asked: list[Path] = []
    ctx = make_ctx(root)

    def deny_hit0x(path: Path) -> str | None:
        asked.append(path)
        return f"{path} matches the deny rule Read(./hit0*)" if path.name.startswith("hit0") else None

    ctx.may_read = deny_hit0x
    out = asyncio.run(Grep().run(GrepArgs.model_validate({"pattern": "needle", "head_limit": 5}), ctx))
    assert len(out.data["files"]) == 5 and not any("hit0" in f for f in out.data["files"])
    assert len(asked) < 20


def test_an_mcp_clients_search_through_the_consoles_socket_hides_what_the_settings_deny(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / ".belay").mkdir(parents=True)
    (ws / ".belay" / "settings.toml").write_text('[permissions]\ndeny = ["Read(./.env)"]\n')
    (ws / ".env").write_text("API_KEY=sk-live-TODO\n")
    (ws / "app.py").write_text("# TODO: ship\n")

    async def ask(socket: Path, **fields: object) -> dict[str, object]:
        """One call on the console's socket, as `belay mcp-serve` sends it."""
        reader, writer = await asyncio.open_unix_connection(str(socket))
        request = {"token": install_token(config_dir()), "kind": "call", "client": "zed", **fields}
        writer.write(json.dumps(request).encode() + b"\n")
        await writer.drain()
        answer = json.loads(await reader.readline())
        writer.close()
        await writer.wait_closed()
        return answer

    async def scenario() -> dict[str, object]:
        async with Console(ws) as console:
            assert console.endpoint is not None
            return await ask(console.endpoint.path, tool="Grep", args={"pattern": "TODO", "output_mode": "content"})

    answer = run(scenario())
    assert answer["status"] == "done" and "sk-live" not in str(answer["text"])
    assert "hidden" not in str(answer["text"]) and "app.py" in str(answer["text"])


def test_a_file_list_past_head_limit_says_the_same_whether_or_not_a_hidden_file_matched(
        root: Path, engine: str) -> None:
    (root / ".env").write_text("TODO=sk-live\n")
    os.utime(root / ".env", ns=(1, 1))  # the oldest match: past the page
    with_env = search_denying(root, pattern="TODO", head_limit=1)
    (root / ".env").unlink()
    without = search_denying(root, pattern="TODO", head_limit=1)
    assert with_env.text == without.text == "\n".join([
        "Showing the 1 newest matching file", f"{root}/src/app.py",
        "(There may be more matching files: narrow the search or raise head_limit.)"])


def test_a_binary_file_searched_by_name_is_summarised_not_shown(root: Path) -> None:
    (root / "blob.bin").write_bytes(b"\x7fELF TODO\0\x1b]52;c;eA==\x07" * 10)
    out = search(root, pattern="TODO", output_mode="content", path=str(root / "blob.bin"))
    assert out.text.startswith(f"{root}/blob.bin: binary file matches")
    assert "\x1b" not in out.text and "\x07" not in out.text and "\0" not in out.text


def test_files_the_search_could_not_read_are_skipped_with_a_note_not_an_error(root: Path,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    async def vanished(argv: list[str], time_limit: float, cap: int) -> tuple[int, bytes, bytes]:
        return 2, b"", b""  # ripgrep with --no-messages, a file removed while it searched

    monkeypatch.setattr(grep, "run_capped", vanished)
    out = search(root, pattern="TODO")
    assert out.text == f"No matches found\n{grep.UNREADABLE_NOTE}"

    async def broken(argv: list[str], time_limit: float, cap: int) -> tuple[int, bytes, bytes]:
        return -9, b"", b""

    monkeypatch.setattr(grep, "run_capped", broken)
    with pytest.raises(ToolError, match="stopped by signal 9"):
        search(root, pattern="TODO")
