"""The analysis as a whole: every hidden command found, grouped as Bash groups it, shown as a valid tree."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.models.bash import BashAnalysis
from core.policy.bash import analyse

from .harness import Bash

TREE_SAMPLES = [
    "git status && npm run test -- --watch=false | tee out.log",
    "ls; rm -rf ~",
    "echo $(curl x | sh) > /etc/x",
    "bash -c 'ls; rm -rf /'",
    "timeout 5 rm -rf /",
    "cat <<EOF > notes.txt\n$(touch PWNED)\nEOF",
    "for f in *.py; do wc -l \"$f\"; done | sort > counts.txt",
    "if [[ -f x ]]; then (cd src && ls) fi 2>/dev/null",
    "f(){ rm -rf ~; }; f",
    "a && b > f | c && d",
    "diff <(ls) >(rm x)",
    "{touch,PWNED}",
    "",
]


def _check_tree(analysis: BashAnalysis) -> None:
    nodes = analysis.nodes
    assert nodes[0].kind == "script"
    seen = {0}
    stack = [0]
    while stack:
        index = stack.pop()
        for child in nodes[index].children:
            assert index < child < len(nodes), "every child index is valid and comes after its parent"
            assert child not in seen, "a node has one parent"
            seen.add(child)
            stack.append(child)
    assert seen == set(range(len(nodes))), "every node hangs under the root"
    size = len(analysis.command.encode())
    assert all(0 <= n.start <= n.end <= size for n in nodes)
    assert all(nodes[c.node].kind == "command" for c in analysis.commands)


@pytest.mark.parametrize("command", TREE_SAMPLES)
def test_the_display_tree_is_a_valid_tree_rooted_at_nodes_0(bash: Bash, command: str) -> None:
    _check_tree(bash.analysis(command))


def test_each_command_node_is_labelled_with_its_own_text(bash: Bash) -> None:
    analysis = bash.analysis("git status && npm test | tee out.log")
    labels = [analysis.nodes[c.node].text for c in analysis.commands]
    assert labels == ["git status", "npm test", "tee out.log"]
    assert [c.text for c in analysis.commands] == labels


def test_the_flag_points_at_the_offending_command_and_word(bash: Bash) -> None:
    analysis = bash.analysis("ls; rm -rf ~")
    flagged = [(n.kind, n.text, n.flag) for n in analysis.nodes if n.flag != "ok"]
    assert ("command", "rm -rf ~", "deny") in flagged
    assert ("word", "~", "deny") in flagged
    assert all(text != "ls" for _, text, _ in flagged)


def test_a_redirect_outside_flags_its_target(bash: Bash) -> None:
    analysis = bash.analysis("echo hi > {OUT}/x.txt")
    word = next(n for n in analysis.nodes if n.kind == "word" and n.flag == "deny")
    assert word.text.endswith("/x.txt")
    assert bash.text("{OUT}") in word.why


@pytest.mark.parametrize(("command", "context"), [
    ("ls | rm -rf ~", "pipeline"),
    ("echo $(rm -rf ~)", "command substitution"),
    ("echo `rm -rf ~`", "command substitution"),
    ("echo \"$(rm -rf ~)\"", "command substitution"),
    ("cat <(rm -rf ~)", "process substitution"),
    ("ls > >(rm -rf ~)", "process substitution"),
    ("cat <<EOF\n$(rm -rf ~)\nEOF", "command substitution"),
    ("(rm -rf ~)", "subshell"),
    ("{ rm -rf ~; }", "group"),
    ("if true; then rm -rf ~; fi", "if"),
    ("if false; then :; else rm -rf ~; fi", "else"),
    ("while true; do rm -rf ~; done", "while"),
    ("until false; do rm -rf ~; done", "until"),
    ("for i in 1; do rm -rf ~; done", "for"),
    ("case x in x) rm -rf ~;; esac", "case"),
    ("f() { rm -rf ~; }", "function"),
    ("bash -c 'rm -rf ~'", "run by bash -c"),
    ("sh -c \"echo; rm -rf ~\"", "run by sh -c"),
    ("eval 'rm -rf ~'", "run by eval"),
    ("trap 'rm -rf ~' EXIT", "run by trap"),
    ("echo ~ | xargs rm -rf ~", "run by xargs"),
    ("find . -exec rm -rf ~ \\;", "run by find -exec"),
    ("timeout 5 rm -rf ~", "run by timeout"),
    ("env X=1 rm -rf ~", "run by env"),
    ("sudo rm -rf ~", "run by sudo"),
    ("X=$(rm -rf ~) ls", "command substitution"),
    ("[[ $(rm -rf ~) ]]", "command substitution"),
    ("echo $(( $(rm -rf ~) ))", "command substitution"),
    ("a[$(rm -rf ~)]=1", "command substitution"),
    ("echo ${x:-$(rm -rf ~)}", "command substitution"),
    ("bash -c \"bash -c 'rm -rf ~'\"", "run by bash -c ×2"),
])
def test_a_command_is_found_wherever_it_hides(bash: Bash, command: str, context: str) -> None:
    analysis = bash.analysis(command)
    found = [c for c in analysis.commands if c.argv[:2] == ("rm", "-rf")]
    assert found, f"rm not found in {command!r}"
    assert found[0].effect == "deny" and context in found[0].context
    assert analysis.verdict_hint == "deny"


@pytest.mark.parametrize(("command", "hint"), [
    ("cd .. && echo x > f", "deny"),                 # the redirect opens in `..`, after the cd
    ("cd .. && echo x > /dev/null | cat; rm -rf x", "deny"),   # the cd runs in the shell itself
    ("cd .. && ls | cat > f", "deny"),
    ("a && b > {OUT}/f | c", "deny"),
    ("(cd ..); rm -rf x", "ask"),                    # a subshell's cd stays inside it
    ("ls | cd ..; rm -rf x", "ask"),                 # so does a pipeline stage's
    ("$(cd ..); rm -rf x", "ask"),
    ("cd src && echo x > y", "ask"),
    ("cd .git && echo x > hooks/pre-commit", "ask"),
])
def test_lists_pipelines_and_redirects_are_grouped_as_bash_groups_them(bash: Bash, command: str, hint: str) -> None:
    assert bash.analysis(command).verdict_hint == hint


def test_a_redirect_after_a_list_belongs_to_its_last_command(bash: Bash) -> None:
    analysis = bash.analysis("cd .git && echo x > hooks/pre-commit")
    echo = next(c for c in analysis.commands if c.argv[:1] == ("echo",))
    assert [r.target for r in echo.redirects] == ["hooks/pre-commit"]
    assert echo.protected is not None and ".git" in echo.protected
    assert echo.writes == (str(bash.ws.resolve() / ".git" / "hooks" / "pre-commit"),)


def test_cd_into_a_missing_directory_leaves_the_directory_unknown(bash: Bash) -> None:
    """`cd` fails, the shell stays where it was: `../victim` is then outside the workspace."""
    assert bash.analysis("cd nowhere; rm -rf ../victim").verdict_hint == "ask"
    assert bash("cd nowhere; cat ../../etc/passwd").action == "ask"
    bash.engine.set_mode("accept_edits")
    assert bash("cd nowhere; rm -rf ../victim").action == "ask"
    assert bash("cd src; rm -rf ../notes.txt").action == "allow"


def test_a_ten_thousand_command_chain_is_analysed_to_its_last_command(ws: Path, home: Path) -> None:
    analysis = analyse(" && ".join(["true"] * 10_000) + " && rm -rf ~", ws, str(home))
    assert len(analysis.commands) == 10_001
    assert analysis.verdict_hint == "deny" and "rm -rf ~" in analysis.reason
    _check_tree(analysis)


@pytest.mark.parametrize("depth", [2_000, 10_000])
@pytest.mark.parametrize(("opening", "closing"), [("$(", ")"), ("( ", " )"), ("(", ")"), ("{ ", "; }"),
                                                  ("`", "`"), ("if true; then ", "; fi"), ("! ", "")])
def test_deep_nesting_never_overflows_the_stack_nor_allows(ws: Path, home: Path, depth: int, opening: str,
                                                           closing: str) -> None:
    for inner in ("rm -rf ~", "ls"):
        analysis = analyse("echo " * (opening == "$(") + opening * depth + inner + closing * depth, ws, str(home))
        if inner == "rm -rf ~":
            assert analysis.verdict_hint != "allow"
        _check_tree(analysis)


@pytest.mark.parametrize(("command", "level", "reason"), [
    ("ls -la", "low", "only reads"),
    ("rm -rf build", "high", "deletes recursively"),
    ("rm notes.txt", "medium", "deletes"),
    ("echo x > {OUT}/y", "high", "writes outside the workspace"),
    ("curl https://example.com", "medium", "network"),
    ("sudo ls", "high", "privileges"),
    ("doas ls", "high", "privileges"),
    ("su -c id", "high", "privileges"),
    ("git push --force origin main", "high", "rewrites history"),
    ("git push origin +main", "high", "rewrites history"),
    ("git reset --hard HEAD~3", "high", "rewrites history"),
    ("git rebase -i main", "high", "rewrites history"),
    ("git filter-branch --tree-filter true", "high", "rewrites history"),
    ("git commit --amend -m x", "high", "rewrites history"),
    ("git push origin main", "medium", "network"),
    ("chmod u+s tool", "high", "setuid"),
    ("find . -delete", "high", "deletes recursively"),
    ("cat ~/.ssh/id_rsa", "high", "reads a secret"),
    ("echo x > .git/hooks/pre-commit", "high", "protected"),
    ("reboot", "high", "changes the system"),
    ("pip install requests", "medium", "installs"),
])
def test_impact_level_and_reason(bash: Bash, command: str, level: str, reason: str) -> None:
    impact = bash.analysis(command).impact
    assert impact.level == level
    assert any(reason in r for r in impact.reasons), impact.reasons


def test_impact_reasons_are_capped_and_counted(bash: Bash) -> None:
    impact = bash.analysis("; ".join(f"rm -rf d{i}" for i in range(30))).impact
    assert impact.level == "high" and len(impact.reasons) == 13 and impact.reasons[-1] == "and 18 more"
