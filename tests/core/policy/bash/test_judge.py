"""What each kind of command is judged to do, with no rules: read (allow), needs a person (ask), or refused.

`{OUT}` is a directory outside the workspace, `{HOME}` the (throwaway) home.
"""

from __future__ import annotations

import os

import pytest

from .harness import Bash

READ_ONLY = [
    "ls -la", "ls src", "cat notes.txt", "head -n 3 src/app.py", "wc -l src/*.py", "git status", "git log --oneline -5",
    "git diff HEAD~1", "git show HEAD:src/app.py", "git branch -a", "git config core.pager", "git -C src status",
    "git --no-pager log", "grep -rn TODO src", "grep -r /api/ .", "rg -t py import src", "rg -g '*.py' foo",
    "find . -name '*.py'", "sed -n 1,5p notes.txt", "sed 's/a/b/' notes.txt", "awk '{print $1}' notes.txt",
    "awk '$3 > 100' notes.txt", "jq . data.json", "sort notes.txt | uniq -c", "echo $HOME $PATH", "printf '%s\\n' x",
    "ls > /dev/null 2>&1", "git status 2>&1", "ls >&2", "cat < notes.txt", "cat <<< hello", "true && false || :",
    "\\ls", "'ls'", "l\"s\"", "ls {a,b}", "echo *", "diff <(ls) <(ls src)", "echo $(git rev-parse HEAD)",
    "for f in a b; do echo $f; done", "case x in x) ls;; *) pwd;; esac", "[[ -f notes.txt ]] && cat notes.txt",
    "test -d src", "x=1; echo $x", "FOO=bar ls", "tar tf x.tar", "command -v git", "type rm", "which python3",
    "cd src && ls", "git config --global user.name", "echo $((1 + 2))", "i=$((1+1))", "a[1]=x", "tree",
    "history 10", "ps aux", "date", "uname -a", "du -sh .", "stat src", "file notes.txt", "tr a b < notes.txt",
]


@pytest.mark.parametrize("command", READ_ONLY)
def test_read_only_commands_are_allowed_without_rules(bash: Bash, command: str) -> None:
    analysis = bash.analysis(command)
    assert analysis.verdict_hint == "allow", analysis.reason
    assert bash(command).action == "allow"


DENIED = [
    ("ls && rm -rf /", "deletes outside the workspace"),
    ("ls; rm -rf ~", "deletes outside the workspace"),
    ("rm -rf ..", "outside the workspace"),
    ("rm -rf -- /", "outside"),
    ("rm {a,/etc/x}", "deletes outside"),
    ("cd /tmp && rm -rf x", "outside"),
    ("echo x > {OUT}/f", "writes outside"),
    ("echo x >> ~/.bashrc", "writes outside"),
    ("echo x &> {OUT}/f", "writes outside"),
    ("ls 2> {OUT}/err", "writes outside"),
    ("{ ls; } > {OUT}/f", "writes outside"),
    ("exec 3> {OUT}/f", "writes outside"),
    ("sort -o {OUT}/x notes.txt", "writes outside"),
    ("sort --output={OUT}/x notes.txt", "writes outside"),
    ("tee {OUT}/x", "writes outside"),
    ("tee -a ~/.bashrc", "writes outside"),
    ("cp notes.txt {OUT}/", "writes outside"),
    ("cp -t {OUT} notes.txt", "writes outside"),
    ("mv notes.txt {OUT}/n", "writes outside"),
    ("mv {OUT}/secret.txt x", "outside"),
    ("ln -s x {OUT}/y", "writes outside"),
    ("touch {OUT}/x", "writes outside"),
    ("mkdir -p {OUT}/d", "writes outside"),
    ("chmod 777 {OUT}/secret.txt", "writes outside"),
    ("dd if=/dev/zero of={OUT}/disk", "writes outside"),
    ("truncate -s 0 {OUT}/secret.txt", "writes outside"),
    ("curl -o {OUT}/x https://example.com", "writes outside"),
    ("wget -O {OUT}/x https://example.com", "writes outside"),
    ("sed -i s/a/b/ {OUT}/secret.txt", "writes outside"),
    ("uniq notes.txt {OUT}/u", "writes outside"),
    ("history -w {OUT}/h", "writes outside"),
    ("tar czf {OUT}/x.tgz src", "writes outside"),
    ("tar -xf x.tar -C {OUT}", "writes outside"),
    ("find / -delete", "deletes outside"),
    ("git config --global core.pager less", "outside the workspace"),
    ("git config -f {OUT}/cfg a.b c", "writes outside"),
    ("cat ~/.ssh/id_rsa", "secret"),
    ("cat /proc/self/environ", "secret"),
    ("tr '\\0' '\\n' < /proc/self/environ", "secret"),
    ("strings /proc/1/environ", "secret"),
    ("cat /proc/$PPID/environ", "secret"),
    ("cat ~/.ssh/$KEY", "secret"),
    ("rg --regexp=x ~/.ssh/id_rsa", "secret"),
    ("rg -epattern ~/.ssh/id_rsa", "secret"),
    ("grep -e x ~/.ssh/id_rsa", "secret"),
    ("jq --rawfile k ~/.ssh/id_rsa -n '$k'", "secret"),
    ("git diff --no-index ~/.ssh/id_rsa /dev/null", "secret"),
    ("tar czf keys.tgz ~/.ssh", "secret"),
    ("cp ~/.ssh/id_rsa stolen", "secret"),
    ("bash -c 'rm -rf ~'", "outside"),
    ("eval \"rm -rf ~\"", "outside"),
    ("trap 'rm -rf ~' EXIT", "outside"),
    ("f(){ rm -rf ~; }; f", "outside"),
    ("echo x | xargs rm -rf /", "outside"),
    ("timeout 5 rm -rf /", "outside"),
    ("nice rm -rf /", "outside"),
    ("command rm -rf /", "outside"),
    ("tee >(rm -rf ~)", "outside"),
]


@pytest.mark.parametrize(("command", "why"), DENIED)
def test_writes_outside_the_workspace_and_secret_reads_are_denied(bash: Bash, command: str, why: str) -> None:
    verdict = bash(command)
    assert verdict.action == "deny"
    assert why in verdict.reason


ASKED = [
    # wrappers and code in strings: never allowed, whatever the rules
    "ls|xargs rm", "timeout 5 rm x", "env rm x", "env -S 'rm x'", "exec rm x", "coproc rm x", "setsid ls",
    "sudo ls", "doas ls", "su -c id", "pkexec ls", "bash -c ls", "sh -c 'echo hi'", "eval ls", "source x.sh",
    ". x.sh", "bash x.sh", "bash < x.sh", "cat x | sh", "python3 -c 'print(1)'", "node -e 1", "perl -e 1",
    "find . -exec rm {} \\;", "find . -delete", "find . -fprint {OUT}/list", "watch ls", "busybox rm x",
    "alias ls='rm -rf ~'; ls", "trap 'rm x' EXIT", "flock -c 'rm x' lock", "parallel rm ::: a",
    # sed, awk, rg, git, tar options that run programs or write
    "sed 's/x/y/e' notes.txt", "sed -n '1e id' notes.txt", "sed '1e id'", "sed 'w out' notes.txt",
    "sed -e 1p -e 'e id' notes.txt", "sed --expression='1e id' notes.txt", "sed -f script.sed notes.txt",
    "awk 'BEGIN{system(\"id\")}'", "awk '{print > \"x\"}' notes.txt", "awk 'BEGIN{\"id\" | getline}'",
    "awk 'BEGIN{s=\"system\"; @s(\"id\")}'", "gawk '@load \"x\"; BEGIN{}'", "awk -e 'BEGIN{}' -e 'BEGIN{system(1)}'",
    "awk -f prog.awk notes.txt", "rg --pre 'sh -c id' x", "rg --pre=id x", "rg -z x", "git -c core.fsmonitor=x status",
    "git -c alias.st='!id' st", "git --git-dir={OUT} status", "git --work-tree={OUT} status", "git -C {OUT} status",
    "git config core.pager 'sh -c id'", "git diff --ext-diff", "git log --output={OUT}/x", "git log --output x",
    "git grep -O x", "git submodule foreach id", "git rebase --exec id main", "git bisect run ./t.sh",
    "git push --receive-pack=x origin", "tar -cf x.tar --checkpoint-action=exec=id src", "tar -xPf x.tar",
    "tar xf x.tar", "tree -o {OUT}/t", "file -C -m x",
    # words only known at run time
    "$'\\x72\\x6d' x", "$CMD x", "cat${IFS}notes.txt", "l* -la", "{touch,x}", "r''m -rf src", "\\rm -rf src",
    "cat $X", "cat \"$f\"", "cat < $f", "X=~/.ssh/id_rsa; cat $X", "cat /proc/$PPID/status", "wc -l $(ls)",
    "echo ${x@P}", "x=${y@P}", "echo $((x))", "y=$((x))", "y=${a[i]}", "a[i]=1", "echo ${s:0:n}",
    "declare -i n; n=x", "(( a[$(id)] ))", "(( x++ ))", "[[ $x -eq 1 ]]", "let x=1", "read 'a[i]'",
    "cat <<-EOF\n\t$(id)\n\tEOF", "cat <<EOF\n${a[i]}\nEOF", "cat <<< $((x))", "echo ~root", "ls ~+",
    # the environment of later commands
    "PATH=/tmp ls", "LD_PRELOAD=x.so ls", "IFS=/ ls", "export X=1", "export BASH_ENV=x", "declare -n r=PATH",
    "declare -x PATH=/tmp", "BASH_ENV=x bash x.sh", "GIT_SSH_COMMAND=id git fetch", "printf -v PATH /tmp",
    "read -r PATH", "hash -p /bin/rm ls",
    # writes in the workspace, reads outside it, unknown programs, the network
    "rm notes.txt", "echo x > out.txt", "touch new", "mkdir build", "cp notes.txt copy", "mv notes.txt n",
    "sed -i 's/a/b/' notes.txt", "tee out.log", "sort -o sorted notes.txt", "rm -rf .", "rm -rf *", "ls /",
    "cat /etc/hostname", "cat < /etc/hostname", "ls ..", "cat ../x", "grep -f /etc/hostname .", "find /etc -name x",
    "git blame --contents=/etc/hostname src/app.py", "git diff --no-index /etc/hostname notes.txt", "cd /tmp && ls",
    "npm test", "make", "pytest", "./build.sh", "/opt/tool/bin/x", "curl https://example.com",
    "git commit -m x", "git push", "git reset --hard", "chown me notes.txt", "chmod u+s notes.txt", "kill 1",
    "history -w", "ln -s ~ h", "ln -s /etc/passwd p", "ln -s ../../.. up", "ln {OUT}/secret.txt hard",
    "cd nowhere; rm -rf ../victim", "ls .*", "cat {a,../x}", "ls ${HOME}", "ls ~", "command rm x", "nice rm x",
    "select x in a b; do rm x; done", "nohup rm x &",
    # unparseable
    "echo 'unterminated", "if then fi", "cat <<EOF",
]


@pytest.mark.parametrize("command", ASKED)
def test_everything_else_asks(bash: Bash, command: str) -> None:
    analysis = bash.analysis(command)
    assert analysis.verdict_hint == "ask", analysis.reason
    assert bash(command).action == "ask"


def test_a_pattern_matching_a_symlink_to_a_secret_is_denied(bash: Bash) -> None:
    os.symlink(bash.home / ".ssh" / "id_rsa", bash.ws / "innocent.txt")
    assert bash("cat *").action == "deny"
    assert bash("cat innocent.txt").action == "deny"
    assert bash("chmod 600 *.txt").action == "deny"
    assert bash("cat src/*").action == "allow"


def test_a_symlink_to_outside_is_an_escape_for_every_path_through_it(bash: Bash) -> None:
    os.symlink(bash.outside, bash.ws / "door")
    assert bash("echo x > door/f").action == "deny"
    assert bash("rm -rf door/").action == "deny"
    assert bash("cat door/secret.txt").action == "ask"


def test_the_whole_workspace_deleted_asks_even_in_accept_edits(bash: Bash) -> None:
    bash.engine.set_mode("accept_edits")
    for command in ("rm -rf .", "rm -rf ./", "rm -rf *", "rm -rf {WS}"):
        verdict = bash(command)
        assert verdict.action == "ask" and "whole workspace" in verdict.reason
    assert bash("rm -rf src").action == "allow"


SUBSCRIPTS = [
    "test -v 'x[$(rm -rf ../victim)]'", "test -R 'x[$(id)]'", "[ -v 'a[$(id)]' ]", "test -v a[i]", "test -v \"$x\"",
    "[ -v $x ]", "test $x", "[ -n $x ]", "[ \"$a\" \"$b\" ]", "[[ -v $x ]]", "[[ -v \"$x\" ]]", "[[ -v a[i] ]]",
    "[[ -R $x ]]", "wait -p 'a[$(id)]'", "wait -p a[i]", "wait -np \"$x\"", "wait $x $y", "printf -v \"$x\" y",
    "printf -v 'a[$(id)]' x", "read 'a[$(id)]'", "declare 'a[$(id)]=1'", "local 'a[$(id)]'", "typeset -p 'a[i]'",
    "(( a[$(id)] ))", "echo $(( a[$(id)] ))", "let 'a[$(id)]=1'", "echo ${x[$(id)]}", "echo ${x:$(id)}",
]


@pytest.mark.parametrize("command", SUBSCRIPTS)
def test_a_word_bash_may_take_for_a_variable_name_with_a_run_time_subscript_asks(bash: Bash, command: str) -> None:
    """Bash evaluates a subscript as arithmetic, and arithmetic runs `$(...)` hidden in it (or in a value)."""
    analysis = bash.analysis(command)
    assert analysis.verdict_hint == "ask", analysis.reason
    assert bash(command).action == "ask"


@pytest.mark.parametrize("command", ["test -v x", "test -v a[1]", "[[ -v PATH ]]", "[ -n \"$PWD\" ]",
                                     "[ \"$USER\" = y ]", "f=a; test -f \"$f\"", "wait", "wait -p v", "[[ $x == y ]]"])
def test_a_test_of_literal_names_or_quoted_values_stays_read_only(bash: Bash, command: str) -> None:
    assert bash.analysis(command).verdict_hint == "allow"


ENVIRONMENT = [
    "echo $TOKEN", "echo \"$TOKEN\"", "printf '%s' \"${TOKEN}\"", "ls $TOKEN", "echo ${UNSET:-$TOKEN}",
    "x=$TOKEN; echo $x", "for t in $TOKEN; do echo $t; done", "cat <<EOF\n$TOKEN\nEOF", "cat <<< $TOKEN",
    "set", "declare", "typeset", "declare -p", "typeset -p", "declare -p TOKEN", "export -p", "compgen -v",
    "compgen -e", "jq -n env", "jq -n '$ENV'", "jq -n '$ENV.TOKEN'", "awk 'BEGIN{print ENVIRON[\"TOKEN\"]}'",
    "ps eww", "ps e", "ps auxe", "env", "printenv", "nice echo $TOKEN",
]


@pytest.mark.parametrize("command", ENVIRONMENT)
def test_what_prints_the_environment_needs_a_rule_like_printenv(bash: Bash, command: str) -> None:
    """The environment holds API keys and tokens: showing it to the agent is not only reading."""
    analysis = bash.analysis(command)
    assert analysis.verdict_hint == "ask", analysis.reason
    assert bash(command).action in ("ask", "deny")


@pytest.mark.parametrize("command", ["echo $HOME $PWD $USER", "x=1; echo $x", "for f in a b; do echo $f; done",
                                     "echo $?", "cat <<'EOF'\n$TOKEN\nEOF", "set -e", "declare -p PWD", "ps aux",
                                     "jq .env x.json", "awk '{print $1}' notes.txt"])
def test_well_known_variables_and_ones_the_line_sets_are_shown_freely(bash: Bash, command: str) -> None:
    assert bash.analysis(command).verdict_hint == "allow", bash.analysis(command).reason


def test_a_rule_allows_printing_the_environment_as_it_allows_printenv(bash: Bash) -> None:
    bash.rules(allow=("Bash(printenv:*)", "Bash(set)", "Bash(ps:*)", "Bash(jq:*)"))
    assert all(bash(c).action == "allow" for c in ("printenv TOKEN", "set", "ps e", "jq -n env"))
    assert bash.rules(allow=("Bash(echo:*)",))("echo $TOKEN").action == "ask"  # no rule covers a run-time word


@pytest.mark.parametrize(("command", "action"), [
    ("cat {~/.ssh/id_rsa,/dev/null}", "deny"), ("cat {a,{~/.ssh/id_rsa,b}}", "deny"), ("cat {~,x}/.ssh/id_rsa", "deny"),
    ("head -c 9 {/dev/null,~/.ssh/id_rsa}", "deny"), ("dd if=~/.ssh/id_rsa", "deny"), ("rm {a,~/x}", "deny"),
    ("cat ~+/notes.txt", "ask"), ("cat ~-/x", "ask"), ("cat ~root/.ssh/id_rsa", "ask"), ("cat {~root,x}/y", "ask"),
    ("cat '~/.ssh/id_rsa'", "ask"), ("cat --file=~/.ssh/id_rsa", "ask"), ("cat x=a:~/.ssh/id_rsa", "allow"),
    ("cat {src,notes.txt}", "allow"),
])
def test_brace_and_tilde_expansion_are_expanded_as_bash_does_before_paths_are_checked(bash: Bash, command: str,
                                                                                       action: str) -> None:
    """`{~/.ssh/id_rsa,/dev/null}` is two words, the first the key: brace expansion comes before tilde expansion."""
    assert bash(command).action == action, bash(command).reason


@pytest.mark.parametrize("command", [
    "file -f list.txt", "file -flist.txt", "file --files-from list.txt", "file --files-from=list.txt",
    "file --files-f=list.txt", "file -f - < list.txt", "tar -cf - -T list.txt", "tar -c --files-from=list.txt -f -",
    "tar -cT list.txt -f -", "wc --files0-from=list.txt", "du --files0-from=list.txt", "du --files0-fr=list.txt",
    "sort --files0-from=list.txt", "sha256sum -c sums.txt", "md5sum --check sums.txt", "b2sum -wc sums.txt",
    "xargs -a list.txt cat", "cpio -o < list.txt", "rsync --files-from=list.txt . dst", "tree --fromfile list.txt",
    "find -files0-from list.txt -name x",
])
def test_a_reader_given_its_file_list_in_a_file_needs_a_rule(bash: Bash, command: str) -> None:
    """The files it reads are named inside the list, which Belay does not read: any of them may be a secret."""
    (bash.ws / "list.txt").write_text(f"{bash.home}/.ssh/id_rsa\n")
    assert bash(command).action == "ask", bash(command).reason


def test_a_file_list_that_is_itself_a_secret_is_refused(bash: Bash) -> None:
    for command in ("file -f ~/.ssh/id_rsa", "file -f{HOME}/.ssh/id_rsa", "wc --files0-from={HOME}/.ssh/id_rsa",
                    "tar -cf - -T ~/.ssh/id_rsa"):
        assert bash(command).action == "deny", command


def test_let_asks_even_where_a_rule_allows_it_unless_its_words_are_literal_numbers(bash: Bash) -> None:
    """A rule for `let` must not let `let 'a[$(id)]=1'` run id: arithmetic on names is never allowed by a rule."""
    bash.rules(allow=("Bash(let:*)",))
    assert bash("let 'a[$(rm -rf ../victim)]=1'").action == "ask"
    assert bash("let x=y").action == "ask"
    assert bash("let 1+2").action == "allow"
