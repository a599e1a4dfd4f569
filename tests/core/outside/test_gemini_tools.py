"""Gemini CLI's tool calls as Belay's tools judge them, and edited content back in Gemini's form."""

from __future__ import annotations

from core.outside.gemini_tools import BelayCall, belay_call, gemini_args, own_tool, takes_the_lock
from core.tools.bash import BashArgs
from core.tools.edit import EditArgs
from core.tools.write import WriteArgs

CWD = "/work/proj"


def test_file_tools_become_write_and_edit_with_paths_made_absolute_and_valid_for_belays_models() -> None:
    write = belay_call("write_file", {"file_path": "docs/a.md", "content": "x\n"}, CWD)
    assert write == BelayCall("Write", {"file_path": "/work/proj/docs/a.md", "content": "x\n"})
    WriteArgs.model_validate(write.args)
    edit = belay_call("replace", {"file_path": "/work/proj/a.py", "old_string": "a", "new_string": "b",
                                  "instruction": "rename", "allow_multiple": True}, CWD)
    assert edit == BelayCall("Edit", {"file_path": "/work/proj/a.py", "old_string": "a", "new_string": "b",
                                      "replace_all": True})
    EditArgs.model_validate(edit.args)


def test_a_shell_command_is_shown_as_it_runs_in_its_directory() -> None:
    here = belay_call("run_shell_command", {"command": "make", "description": "build", "dir_path": "."}, CWD)
    assert here == BelayCall("Bash", {"command": "make", "description": "build"})
    there = belay_call("run_shell_command", {"command": "make", "dir_path": "sub dir", "is_background": True}, CWD)
    assert there.args == {"command": "cd '/work/proj/sub dir' && make", "run_in_background": True}
    BashArgs.model_validate(there.args)


def test_read_only_and_spawning_tools_get_belays_names_and_unknown_tools_keep_theirs() -> None:
    assert belay_call("read_file", {"file_path": "a", "start_line": 3}, CWD) == BelayCall("Read", {"file_path": "/work/proj/a"})
    assert belay_call("list_directory", {}, CWD) == BelayCall("LS", {"path": CWD})
    assert belay_call("invoke_agent", {"agent_name": "generalist", "prompt": "p"}, CWD) == BelayCall(
        "Agent", {"description": "generalist", "prompt": "p", "subagent_type": "generalist"})
    assert belay_call("mcp_github_create_issue", {"title": "t"}, CWD) == BelayCall("mcp_github_create_issue", {"title": "t"})


def test_edited_content_goes_back_as_the_whole_argument_set_of_the_gemini_tool() -> None:
    original = {"file_path": "a.md", "content": "draft"}
    assert gemini_args("write_file", original, {"file_path": "/w/a.md", "content": "final"}) == {
        "file_path": "a.md", "content": "final"}
    replace = {"file_path": "a.md", "old_string": "x", "new_string": "y", "instruction": "i"}
    assert gemini_args("replace", replace, {"old_string": "whole\n", "new_string": "edited\n", "replace_all": False}) == {
        **replace, "old_string": "whole\n", "new_string": "edited\n", "allow_multiple": False}
    shell = {"command": "ls", "dir_path": "src", "description": "list"}
    assert gemini_args("run_shell_command", shell, {"command": "bwrap ... -- ls"}) == {**shell, "command": "bwrap ... -- ls"}
    assert gemini_args("read_file", {"file_path": "a.md"}, {"content": "x"}) is None


def test_gemini_clis_own_harmless_tools_are_read_only_and_only_they_take_no_lock() -> None:
    topic = own_tool("update_topic")
    assert topic is not None and topic.name == "update_topic" and topic.annotations.read_only
    assert own_tool("save_memory") is None and own_tool("run_shell_command") is None
    assert not takes_the_lock(belay_call("update_topic", {}, CWD), read_only=True)
    assert takes_the_lock(belay_call("run_shell_command", {"command": "make"}, CWD), read_only=False)
    assert not takes_the_lock(belay_call("write_file", {"file_path": "a", "content": ""}, CWD), read_only=False)
