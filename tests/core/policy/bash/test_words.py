"""A shell word's value after quote removal, or why it is only known at run time."""

from __future__ import annotations

import pytest

from core.policy.bash.words import WordValue, brace_words, is_device

from .harness import Bash


@pytest.mark.parametrize("spelling", ["rm", "'rm'", "\"rm\"", "r''m", "\\rm", "r\\m", "'r'\"m\""])
def test_quotes_and_escapes_are_removed_so_every_spelling_is_the_same_static_word(bash: Bash, spelling: str) -> None:
    command = bash.analysis(f"{spelling} -rf /").commands[0]
    assert command.argv == ("rm", "-rf", "/")
    assert command.static
    assert command.effect == "deny"


@pytest.mark.parametrize(("word", "why"), [
    ("$X", "a variable"),
    ("\"$X\"", "a variable"),
    ("${X:-y}", "a parameter expansion"),
    ("$(ls)", "a command substitution"),
    ("`ls`", "a command substitution"),
    ("<(ls)", "a process substitution"),
    ("$'\\x72m'", "ANSI-C quoting"),
    ("$\"rm\"", "a locale-translated string"),
    ("x{a,b}", "brace expansion"),
    ("$((1+2))", "arithmetic"),
    ("~root", "a ~user path"),
    ("${x@P}", "a prompt expansion"),
])
def test_a_computed_word_says_what_makes_it_computed(bash: Bash, word: str, why: str) -> None:
    analysis = bash.analysis(f"{word} x")
    command = analysis.commands[0]
    assert command.dynamic == (0,)
    assert analysis.verdict_hint == "ask" and "the command name is only known at run time" in analysis.reason
    assert why in analysis.reason


@pytest.mark.parametrize(("word", "path"), [
    ("~", ""),
    ("~/.ssh/id_rsa", "/.ssh/id_rsa"),
    ("$HOME/.ssh/id_rsa", "/.ssh/id_rsa"),
    ("${HOME}/.ssh/id_rsa", "/.ssh/id_rsa"),
    ("\"$HOME\"/.ssh/id_rsa", "/.ssh/id_rsa"),
    ("~/\".ssh\"/id_rsa", "/.ssh/id_rsa"),
])
def test_the_home_directory_is_known_before_the_command_runs(bash: Bash, word: str, path: str) -> None:
    command = bash.analysis(f"cat {word}").commands[0]
    assert command.argv == ("cat", f"{bash.home}{path}")
    assert command.static
    assert bash.analysis("cat '~/.ssh/id_rsa'").commands[0].argv == ("cat", "~/.ssh/id_rsa")   # quoted: no tilde


def _brace(text: str) -> WordValue:
    return WordValue(text, text, 0, 0, frozenset({"brace"}))


@pytest.mark.parametrize(("word", "words"), [
    ("src/{a,b}.py", {"src/a.py", "src/b.py"}),
    ("f{1..3}", {"f1", "f2", "f3"}),
    ("{a..c}", {"a", "b", "c"}),
    ("x{1..7..3}", {"x1", "x4", "x7"}),
    ("{a,b}{1,2}", {"a1", "a2", "b1", "b2"}),
    ("{a,{b,c}}", {"a", "b", "c"}),
    ("{,x}", {"", "x"}),
])
def test_a_static_brace_expansion_is_expanded_to_the_words_bash_makes(word: str, words: set[str]) -> None:
    assert set(brace_words(_brace(word), "/home/u") or ()) == words


@pytest.mark.parametrize("word", ["f{1..300}", "{a,b}{c,d}{e,f}{g,h}{i,j}{k,l}{m,n}{o,p}{q,r}", "'{a,b}'", "$x{a,b}"])
def test_a_brace_expansion_too_big_or_not_plain_text_stays_a_run_time_word(word: str) -> None:
    assert brace_words(_brace(word), "/home/u") is None


@pytest.mark.parametrize(("path", "device"), [
    ("/dev/null", True), ("/dev/stdout", True), ("/dev/stderr", True), ("/dev/fd/3", True), ("/dev/tty", True),
    ("/dev/sda", False), ("/dev/tcp/10.0.0.1/80", False), ("/dev/nullx", False), ("dev/null", False),
])
def test_only_paths_that_name_no_file_count_as_devices(path: str, device: bool) -> None:
    assert is_device(path) is device


@pytest.mark.parametrize(("line", "words"), [
    ("cat /a/$X/b/$Y/c", 2), ("cat x`id`y", 2), ("cat a{$B,c}d", 2), ("cat < /a/$X/b/$Y/c", 1), ("x`id` a", 2),
    ("cat a b", 3),
])
def test_a_word_tree_sitter_splits_in_two_is_one_word_as_bash_reads_it(bash: Bash, line: str, words: int) -> None:
    command = bash.analysis(line).commands[0]
    assert len(command.argv) == words, command.argv


@pytest.mark.parametrize(("word", "words"), [
    ("{~/.ssh/id_rsa,/dev/null}", {"/home/u/.ssh/id_rsa", "/dev/null"}), ("{~,x}/k", {"/home/u/k", "x/k"}),
    ("a{~,b}", {"a~", "ab"}), ("{~root,x}", None),
])
def test_each_word_of_a_brace_expansion_is_then_tilde_expanded(word: str, words: set[str] | None) -> None:
    found = brace_words(_brace(word), "/home/u")
    assert (set(found) if found is not None else None) == words
