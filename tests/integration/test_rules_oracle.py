"""Rules mean at least what Claude Code makes them mean: Belay is never looser than the real CLI.

Each rule set below is one Claude Code session (tests/integration/rules_oracle.py runs it offline
against the scripted model) and the same calls put to Belay's policy.  A call Claude Code asks about
must not be allowed by Belay; a call it denies must be denied.  Belay may be stricter.  How to read a
failure: tests/integration/RULES_ORACLE.md.
"""

from __future__ import annotations

import pytest

from tests.integration.rules_oracle import RuleSet, bash, edit, fetch, judge_all, mcp, read, report, write

TABLE = (
    RuleSet("prefix", allow=("Bash(npm run test:*)",), calls=(
        bash("npm run test"),
        bash("npm run test -- --watch"),
        bash("npm run test:unit"),
        bash("npm run build"),
        bash("npm  run   test"),
        bash('npm run "test"'),
        bash("npm run test && npm run build"),
        bash("npm run test; rm -f gone.txt"),
        bash("npm run test | grep ok"),
        bash("npm run test || npm publish"),
        bash("npm run test $(npm run build)"),
    )),
    RuleSet("one command", allow=("Bash(mytool:*)",), calls=(
        bash("mytool"),
        bash("mytool a"),
        bash("mytoolx a"),
        bash('"mytool" a'),
        bash('mytool "a b"'),
        bash("mytool 'a; rm -f gone.txt'"),
        bash("mytool a && mytool b"),
        bash("mytool a && rm -f gone.txt"),
        bash("mytool a; npm run build"),
        bash("mytool a | wc -l"),
        bash("mytool a | npm run build"),
        bash("mytool a || npm run build"),
        bash("bash -c 'mytool a'"),
        bash("mytool `npm run build`"),
    )),
    RuleSet("redirects", allow=("Bash(mytool:*)",), calls=(
        bash("mytool a > out.txt"),
        bash("mytool a >> out.txt"),
        bash("mytool a > src/out.txt"),
        bash("mytool a > /dev/null"),
        bash("mytool a 2>&1"),
        bash("mytool a 2>/dev/null"),
        bash("mytool a > {home}/out.txt"),
        bash("mytool a < src/a.txt"),
        bash("mytool a | tee out2.txt"),
    )),
    RuleSet("wrappers", allow=("Bash(mytool:*)",), calls=(
        bash("timeout 5 mytool a"),
        bash("nice mytool a"),
        bash("nice -n 5 mytool a"),
        bash("env X=1 mytool a"),
        bash("X=1 mytool a"),
        bash("nohup mytool a"),
        bash("time mytool a"),
        bash("command mytool a"),
        bash("xargs mytool < src/a.txt"),
        bash("sudo mytool a"),
    )),
    RuleSet("wildcards", allow=("Bash(mytool * end)", "Bash(npm run *)", "Bash(mytool exact)"), calls=(
        bash("mytool exact"),
        bash("mytool exact more"),
        bash("mytool a end"),
        bash("mytool a b end"),
        bash("mytool end"),
        bash("mytool a end more"),
        bash("mytool a end && rm -f gone.txt"),
        bash("npm run"),
        bash("npm run lint"),
        bash("npm run lint -- --fix"),
        bash("npm runner"),
        bash("npm install"),
    )),
    RuleSet("read-only commands", calls=(
        bash("ls"),
        bash("ls -la src"),
        bash("cat src/a.txt"),
        bash("head -1 src/a.txt"),
        bash("wc -l src/a.txt"),
        bash("grep old src/a.txt"),
        bash("find . -name '*.txt'"),
        bash("cat src/a.txt | sort | uniq"),
        bash("pwd"),
        bash("echo hi"),
        bash("env"),
        bash("printenv"),
        bash("printenv HOME"),
        bash("cat {home}/h.txt"),
        bash("cat /etc/hostname"),
        bash("ls /"),
        bash("echo hi > hi.txt"),
        bash("touch new.txt"),
        bash("rm -f src/b.txt"),
        bash("mkdir made"),
        bash("cp src/a.txt src/c.txt"),
        bash("sed -i s/old/new/ src/a.txt"),
        bash("find . -name '*.txt' -delete"),
        bash("git status"),
        bash("npm test"),
    )),
    RuleSet("denied commands", deny=("Bash(rm:*)", "Bash(npm publish:*)"), calls=(
        bash("rm -f gone.txt"),
        bash("rm"),
        bash("/bin/rm -f gone.txt"),
        bash('"rm" -f gone.txt'),
        bash("echo ok && rm -f gone.txt"),
        bash("echo ok; rm -f gone.txt"),
        bash("echo gone.txt | xargs rm -f"),
        bash("timeout 5 rm -f gone.txt"),
        bash("nice rm -f gone.txt"),
        bash("env X=1 rm -f gone.txt"),
        bash("X=1 rm -f gone.txt"),
        bash("command rm -f gone.txt"),
        bash("bash -c 'rm -f gone.txt'"),
        bash("sh -c 'rm -f gone.txt'"),
        bash("echo $(rm -f gone.txt)"),
        bash("npm publish"),
        bash("npm publish --dry-run"),
        bash("npm  publish"),
        bash("npm run publish"),
    )),
    RuleSet("ask rules", allow=("Bash(mytool:*)", "Edit(./docs/**)"), ask=("Bash(mytool push:*)", "Edit(./docs/private/**)"),
            calls=(
        bash("mytool pull"),
        bash("mytool push origin"),
        bash("mytool pull && mytool push"),
        bash("timeout 5 mytool push"),
        write("{ws}/docs/new.txt"),
        write("{ws}/docs/private/p.txt"),
    )),
    RuleSet("denied reads", deny=("Read(./secrets/**)", "Read(./.env)"), calls=(
        read("{ws}/secrets/k.txt"),
        read("{ws}/src/a.txt"),
        read("{ws}/.env"),
        bash("cat secrets/k.txt"),
        bash("cat ./secrets/../secrets/k.txt"),
        bash("head -1 secrets/k.txt"),
        bash("grep -r key secrets"),
        bash("grep -r key ."),
        bash("ls secrets"),
        bash("cat .env"),
        bash("cat src/a.txt"),
        bash("cp secrets/k.txt leaked.txt"),
        bash("cat secrets/*"),
        bash("wc -l < secrets/k.txt"),
        bash("cd secrets && cat k.txt"),
        write("{ws}/secrets/new.txt"),
    )),
    RuleSet("denied edits", deny=("Edit(./src/**)",), calls=(
        write("{ws}/src/n.txt"),
        write("{ws}/docs/n.txt"),
        bash("echo x > src/o.txt"),
        bash("touch src/t.txt"),
        bash("rm src/a.txt"),
        bash("sed -i s/old/new/ src/b.txt"),
        bash("cp docs/e.txt src/"),
        bash("cat src/a.txt"),
    )),
    RuleSet("path globs", allow=("Edit(*.md)", "Edit(./docs/*.txt)"), ask=("Read(./docs/**)",), calls=(
        write("{ws}/notes.md"),
        write("{ws}/src/deep/notes.md"),
        write("{ws}/docs/x.txt"),
        write("{ws}/docs/sub/x.txt"),
        write("{ws}/notes.txt"),
        read("{ws}/docs/e.txt"),
        read("{ws}/src/a.txt"),
        bash("cat docs/e.txt"),
    )),
    RuleSet("edit paths", allow=("Edit(./src/**)",), calls=(
        read("{ws}/src/a.txt"),
        edit("{ws}/src/a.txt"),
        write("{ws}/src/new.txt"),
        write("{ws}/src/deep/x.txt"),
        write("{ws}/docs/n.txt"),
        write("{ws}/n.txt"),
        write("{home}/w.txt"),
        read("{ws}/docs/e.txt", setup=True),
        edit("{ws}/docs/e.txt"),
        read("{home}/h.txt"),
        read("/etc/hostname"),
        bash("echo x > src/out.txt"),
        bash("cp src/b.txt src/c.txt"),
        bash("echo x > docs/out.txt"),
    )),
    RuleSet("read paths", allow=("Read(~/h.txt)", "Read(//etc/hostname)"), calls=(
        read("{home}/h.txt"),
        read("/etc/hostname"),
        read("/etc/passwd"),
        bash("cat {home}/h.txt"),
        bash("cat /etc/hostname"),
    )),
    RuleSet("web fetch", allow=("WebFetch(domain:example.com)",), deny=("WebFetch(domain:evil.example.org)",), calls=(
        fetch("https://example.com/page"),
        fetch("https://docs.example.com/page"),
        fetch("https://notexample.com/page"),
        fetch("https://other.org/page"),
        fetch("https://evil.example.org/page"),
        fetch("https://sub.evil.example.org/page"),
        fetch("http://example.com:8080/page"),
    )),
    RuleSet("web fetch, no rules", calls=(
        fetch("https://example.com/page"),
    )),
    RuleSet("mcp server", allow=("mcp__srv",), calls=(
        mcp("mcp__srv__tool"),
        mcp("mcp__srv__other"),
    )),
    RuleSet("mcp wildcard", allow=("mcp__srv__*",), calls=(
        mcp("mcp__srv__tool"),
    )),
    RuleSet("mcp tool", allow=("mcp__srv__tool",), deny=("mcp__srv__other",), calls=(
        mcp("mcp__srv__tool"),
        mcp("mcp__srv__other"),
    )),
    RuleSet("mcp, no rules", calls=(
        mcp("mcp__srv__tool"),
    )),
)


@pytest.mark.timeout(300)
def test_belay_is_never_looser_than_claude_code_on_the_same_rules_and_calls() -> None:
    rows = judge_all(TABLE)
    print(report(rows))  # the whole table, shown with -s or on failure
    unclassified = [r for r in rows if r.outcome == "unclassified"]
    assert not unclassified, "Claude Code's answer is none of allow/ask/deny (fix the case):\n" + "\n".join(
        map(str, unclassified))
    looser = [r for r in rows if r.outcome == "looser"]
    assert not looser, f"Belay is looser than Claude Code on {len(looser)} of {len(rows)} calls:\n" + "\n".join(
        map(str, looser))
