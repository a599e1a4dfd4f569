"""Permission rules in Claude Code's syntax: parsing, normal forms, errors, and what each kind matches."""

from __future__ import annotations

import pytest

from core.policy.rules import loose_forms, parse_rule

WS, HOME = "/w/proj", "/home/u"


@pytest.mark.parametrize(("text", "normal", "kind"), [
    ("Bash", "Bash", "tool"),
    ("Bash(*)", "Bash", "tool"),
    ("  Bash( npm  run test:* ) ", "Bash(npm run test:*)", "prefix"),
    ("Bash(git commit:*)", "Bash(git commit:*)", "prefix"),
    ("Bash('my tool' --x:*)", "Bash('my tool' --x:*)", "prefix"),
    ("Bash(ls)", "Bash(ls)", "exact"),
    ("Bash(git  *  main)", "Bash(git * main)", "glob"),
    ("Read(./src/**)", "Read(./src/**)", "path"),
    ("Edit(//etc/hosts)", "Edit(//etc/hosts)", "path"),
    ("Read(~/.ssh/**)", "Read(~/.ssh/**)", "path"),
    ("WebFetch(domain:Example.COM)", "WebFetch(domain:example.com)", "domain"),
    ("mcp__github", "mcp__github", "server"),
    ("mcp__github__*", "mcp__github", "server"),
    ("mcp__github__create_issue", "mcp__github__create_issue", "tool"),
    ("Write", "Write", "tool"),
])
def test_rules_parse_to_a_normal_form(text: str, normal: str, kind: str) -> None:
    rule = parse_rule(text)
    assert (rule.text, rule.kind) == (normal, kind)
    assert parse_rule(rule.text).text == normal


@pytest.mark.parametrize(("text", "complaint"), [
    ("", "empty"),
    ("Bash(", "missing ')'"),
    ("Bash)", "')' without '('"),
    ("Bash()", "empty parentheses"),
    ("Bash(npm:* run)", "only allowed at the end"),
    ("Bash(np*m:*)", "not both"),
    ("Bash(:*)", "no command"),
    ("Bash('unclosed:*)", "quotation"),
    ("Bash x(ls)", "not a tool name"),
    ("Task(foo)", "takes no specifier"),
    ("WebFetch(example.com)", "takes no specifier"),
    ("mcp__", "mcp__<server>"),
    ("mcp__a____b", "mcp__<server>"),
    ("Read(~bob/x)", "~user"),
    ("Read(../other/**)", "'..'"),
    ("Edit(./a/../b)", "'..'"),
    ("Read([z-a])", "bad character range"),
    ("Read([a--z])", "range of dashes"),
])
def test_a_malformed_rule_names_itself_and_the_problem(text: str, complaint: str) -> None:
    with pytest.raises(ValueError) as raised:
        parse_rule(text)
    assert complaint in str(raised.value) and repr(text) in str(raised.value)


@pytest.mark.parametrize("bad", [None, 3, ["Bash"]])
def test_a_rule_that_is_not_a_string_is_a_value_error(bad: object) -> None:
    with pytest.raises(ValueError, match="a rule is a string"):
        parse_rule(bad)  # type: ignore[arg-type]


@pytest.mark.parametrize(("rule", "argv", "matches"), [
    ("Bash(npm run test:*)", ("npm", "run", "test"), True),
    ("Bash(npm run test:*)", ("npm", "run", "test", "--", "-x"), True),
    ("Bash(npm run test:*)", ("npm", "run", "testx"), False),      # words, not characters
    ("Bash(npm run test:*)", ("npm", "run"), False),
    ("Bash(ls)", ("ls",), True),
    ("Bash(ls)", ("ls", "-la"), False),
    ("Bash(ls *)", ("ls",), True),                                  # a trailing ` *` also matches nothing
    ("Bash(ls *)", ("ls", "-la", "/"), True),
    ("Bash(ls *)", ("lsblk",), False),
    ("Bash(git * main)", ("git", "push", "origin", "main"), True),
    ("Bash(git * main)", ("git", "push", "main", "--force"), False),
    ("Bash(git * main)", ("git", "main"), False),
    ("Bash(*test*)", ("pytest", "-q"), True),
    ("Bash", ("anything",), True),
    ("Read(./src/**)", ("cat", "src/x"), False),                    # a path rule says nothing about words
])
def test_bash_rules_match_one_simple_command_by_its_words(rule: str, argv: tuple[str, ...], matches: bool) -> None:
    assert parse_rule(rule).matches_command(argv) is matches


@pytest.mark.parametrize(("rule", "path", "matches"), [
    ("Read(./src/**)", f"{WS}/src/a/b.py", True),
    ("Read(./src/**)", f"{WS}/src", False),
    ("Read(./src/**)", f"{WS}/lib/src/a.py", False),
    ("Read(src)", f"{WS}/lib/src/a.py", True),                      # no slash: any depth, contents included
    ("Read(/src/*.py)", f"{WS}/src/a.py", True),                    # `/x` is relative to the workspace root
    ("Read(/src/*.py)", f"{WS}/src/sub/a.py", False),
    ("Read(*.env)", f"{WS}/deep/er/prod.env", True),
    ("Read(*.env)", f"{WS}/prod.env.bak", False),
    ("Read(.env)", f"{WS}/.env", True),
    ("Read(./docs/**/*.md)", f"{WS}/docs/a.md", True),
    ("Read(./docs/**/*.md)", f"{WS}/docs/x/y/a.md", True),
    ("Read(./a?.txt)", f"{WS}/ab.txt", True),
    ("Read(./a?.txt)", f"{WS}/a/.txt", False),
    ("Read(./[ab].txt)", f"{WS}/b.txt", True),
    ("Read(./[!ab].txt)", f"{WS}/b.txt", False),
    ("Read(./[[]x)", f"{WS}/[x", True),
    ("Read(//etc/**)", "/etc/ssl/certs/x", True),
    ("Read(//etc/**)", f"{WS}/etc/x", False),
    ("Read(~/.ssh/**)", f"{HOME}/.ssh/id_rsa", True),
    ("Read(~/.ssh/**)", f"{WS}/.ssh/id_rsa", False),
    ("Read(~)", f"{HOME}/anything", True),
    ("Read(./src/**)", "/w/project-other/src/x", False),            # compared by component, not by prefix
    ("Read", "/anywhere", True),
])
def test_path_rules_match_gitignore_style(rule: str, path: str, matches: bool) -> None:
    assert parse_rule(rule).matches_path(path, WS, HOME) is matches


@pytest.mark.parametrize(("rule", "tool", "covered"), [
    ("Edit", "Write", True), ("Edit(./x)", "MultiEdit", True), ("Edit(./x)", "NotebookEdit", True),
    ("Edit", "Read", False), ("Read", "Grep", True), ("Read", "Glob", True), ("Read", "LS", True),
    ("Read", "Edit", False), ("Write", "Edit", False),
    ("mcp__github", "mcp__github__create_issue", True), ("mcp__github", "mcp__githubx__t", False),
    ("mcp__github", "mcp__github", False), ("mcp__github__a", "mcp__github__b", False),
    ("mcp__github__a", "mcp__github__a", True), ("Bash(ls:*)", "Read", False),
])
def test_which_tools_a_rule_covers(rule: str, tool: str, covered: bool) -> None:
    assert parse_rule(rule).covers_tool(tool) is covered


@pytest.mark.parametrize(("url", "matches"), [
    ("https://example.com/x", True), ("https://docs.example.com/", True), ("http://EXAMPLE.com", True),
    ("https://notexample.com", False), ("https://example.com.evil.net", False), ("not a url", False),
])
def test_domain_rules_match_the_host_and_its_subdomains(url: str, matches: bool) -> None:
    assert parse_rule("WebFetch(domain:example.com)").matches_url(url) is matches


@pytest.mark.parametrize(("argv", "forms"), [
    (("ls",), []),
    (("/usr/bin/curl", "x"), [("curl", "x")]),
    (("git", "-C", ".", "--no-pager", "push"), [("git", "push")]),
    (("/usr/bin/git", "-c", "a=b", "push", "-f"), [("git", "-c", "a=b", "push", "-f"), ("git", "push", "-f")]),
    ((), []),
])
def test_loose_forms_are_the_other_spellings_deny_rules_see(argv: tuple[str, ...], forms: list[tuple[str, ...]]) -> None:
    assert loose_forms(argv) == forms
