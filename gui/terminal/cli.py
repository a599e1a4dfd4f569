"""The `belay` command line: the front door to the window and the journal."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from gui.terminal.cli_args import (
    JSON_HELP,
    Parser,
    common,
    concurrency,
    current_workspace,
    folder,
    head,
    moment,
    port,
    seconds,
)

if TYPE_CHECKING:
    from core import BelayError

MCP_PORT = 7391
"""`belay mcp-serve --http`'s port unless told: fixed, so a client's configuration keeps working."""

def _parser() -> Parser:
    parser = Parser(prog="belay", description="Supervise AI coding agents: approve, record, undo. "
                                                                "Without a command: open the console (`belay watch`).")
    parser.add_argument("--version", action=_Version, help="show the version and exit")
    parser.add_argument("--tray", action="store_true",
                        help="without a command: start in the system tray, without the first-run screen (the "
                             "autostart entry uses this)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    parser.commands = sub.choices

    demo = sub.add_parser("demo", help="open the window with a scripted agent working on a demo workspace")
    demo.add_argument("--workspace", metavar="DIR",
                      help="the folder to copy the demo workspace into (default: a new temporary folder)")
    common(demo, workspace=None)
    demo.add_argument("--script", metavar="FILE", help="a scripted agent to run instead of the demo's")
    demo.add_argument("--auto-approve", action="store_true",
                      help="answer approvals automatically (approve, or deny where the script's review says)")
    demo.add_argument("--quit-when-done", action="store_true", help="exit when the agent has finished")
    demo.add_argument("--screenshot", metavar="FILE", help="save a PNG of the window at the end")
    demo.add_argument("--pace", type=seconds, default=None, metavar="SECONDS",
                      help="seconds between steps (default 0.4 when watched, 0 with --quit-when-done)")

    calls = sub.add_parser("calls", help="list the journaled calls of a workspace")
    common(calls, json=True)

    undo = sub.add_parser("undo", help="undo one journaled call (or an undo: that redoes it)")
    undo.add_argument("call_id", metavar="CALL_ID", help="a call id, as `belay calls` lists them")
    common(undo)
    undo.add_argument("--file", action="append", dest="files", metavar="PATH",
                      help="undo only this file's change (repeatable; relative to the workspace)")
    undo.add_argument("--force", action="store_true",
                      help="overwrite files changed after the call where a merge is not possible")
    undo.add_argument("--json", action="store_true", help=JSON_HELP)

    redo = sub.add_parser("redo", help="put back what undoing a call took away")
    redo.add_argument("call_id", metavar="CALL_ID", help="the call whose undo is taken back, as `belay calls` "
                                                         "lists it")
    common(redo, json=True)
    redo.add_argument("--file", action="append", dest="files", metavar="PATH",
                      help="redo only this file's change (repeatable; relative to the workspace)")

    export = sub.add_parser(
        "export", help="write a workspace's journal as JSON Lines (sessions, agents, calls, decisions, changes)",
        description="Every session, agent, batch, call, decision, file change and undo recorded for the workspace, "
                    "one JSON object per line (resources/schemas/export.schema.json describes them). Paths and "
                    "content hashes, not contents: a call's arguments and output only with --contents. Reads the "
                    "journal without changing it, also while a window has the workspace open.")
    common(export)
    export.add_argument("--format", choices=["jsonl"], default="jsonl", help="the output format (jsonl, the only "
                                                                              "one so far)")
    export.add_argument("--since", type=moment, metavar="WHEN",
                        help="only the calls made since then (an ISO date or time, or an age: 90m, 12h, 7d), with "
                             "what they belong to")
    export.add_argument("--session", metavar="ID", help="only this session's records")
    export.add_argument("--contents", action="store_true", help="add each call's arguments and output")
    export.add_argument("--output", "-o", metavar="FILE", help="write here instead of to standard output")

    verify = sub.add_parser(
        "verify", help="check that nothing in a workspace's journal was changed outside Belay",
        description="Each row Belay writes to the journal is sealed: hashed into one chain of seals. This checks "
                    "the chain and every row against its latest seal, and names the first that does not match (a "
                    "row edited, added or removed with another program, or a seal changed). Exit status 0 when "
                    "all match, 1 when not. Reads the journal without changing it, also while a window has it open.")
    common(verify)
    verify.add_argument("--expect", metavar="COUNT:HEX", type=head,
                        help="a head an earlier verify printed: the chain must still hold it")

    serve = sub.add_parser(
        "serve", help="run a workspace's console without a window, for a window elsewhere to attach to (over ssh)",
        description="Opens the workspace's console as the window would (journal, change capture, undo, the socket "
                    "the agents' hooks use) and lets a window or terminal attach to it through that socket, "
                    "which `belay attach ssh://host/path` reaches through ssh. Calls that need a person wait for "
                    "one to attach (or for their rule's timeout). Prints one JSON line when ready (socket, "
                    "token, protocol version, pid), then runs until stopped.")
    common(serve)
    serve.add_argument("--ensure", action="store_true",
                       help="print the line of the console already serving the workspace, or start one in the "
                            "background and print its line once it is ready")

    attach = sub.add_parser(
        "attach", help="follow a console (on this host or another, over ssh) and answer its approvals here",
        description="TARGET is ssh://[user@]host[:port]/path (the console `belay serve` runs there, started if "
                    "need be, reached through your own ssh) or a local workspace whose console runs. Prints each "
                    "call as it ends and asks about each approval; a dropped link is attached again.")
    attach.add_argument("target", metavar="TARGET", help="ssh://[user@]host[:port]/path, or a local workspace")
    attach.add_argument("--ssh", default="ssh", help="the ssh command and its options (default: ssh)")
    attach.add_argument("--remote-belay", default="belay", metavar="CMD",
                        help="how the host runs Belay (default: belay; pipx puts it in ~/.local/bin)")
    common(attach, workspace=None)

    gc = sub.add_parser("gc", help="end undo history past the retention in settings and free what it kept",
                        description="Remove a workspace's sessions older than [storage] keep_days (then the oldest "
                                    "while its state is over max_gb), the stored copies no kept record refers to, "
                                    "and compact the journal. Says what undo history it ends before it does; "
                                    "refuses while a window has the workspace open.")
    common(gc)
    gc.add_argument("--dry-run", action="store_true", help="say what would be removed, remove nothing")
    gc.add_argument("--yes", action="store_true", help="do not ask at the terminal before removing")

    run = sub.add_parser("run", help="run a plan (a batch of calls or a scripted agent) without the window",
                         description="Run a plan headless: a batch ({calls: [...]}, or a bare list of calls) or a "
                                     "scripted agent ({steps: [...]}), JSON or YAML. Exit code 0 when every call "
                                     "succeeded, 1 when any failed, was denied or skipped, 2 for a bad plan or a "
                                     "journal Belay cannot use (damaged, or another program's).")
    run.add_argument("plan", metavar="PLAN", help="the plan file (JSON or YAML)")
    common(run, workspace="the folder the calls work in (default: the current folder)")
    run.add_argument("--auto", choices=("approve", "deny"),
                     help="answer approvals without asking (default: ask at the terminal)")
    run.add_argument("--json", action="store_true",
                     help="print every event as a JSON line, then a summary (needs --auto)")
    run.add_argument("--fail-fast", action="store_true", help="stop starting calls at the first failure")
    run.add_argument("--concurrency", type=concurrency, metavar="N", help="at most N calls at once (default 10)")

    watch = sub.add_parser("watch", help="open the window for every workspace and supervise outside agents "
                                         "(Claude Code, Codex, Gemini CLI through their hooks, MCP clients through "
                                         "`belay mcp-serve`)")
    watch.add_argument("host", nargs="?", metavar="ssh://HOST/PATH",
                       help="also follow the console of a workspace on another host, through your own ssh "
                            "(`belay serve` is started there if none runs)")
    watch.add_argument("--workspace", metavar="DIR",
                       help="a folder to supervise at once (without it, the window waits for any project whose agent "
                            "asks)")
    watch.add_argument("--ssh", default="ssh", help="with ssh://…: the ssh command and its options (default: ssh)")
    watch.add_argument("--remote-belay", default="belay", metavar="CMD",
                       help="with ssh://…: how the host runs Belay (default: belay)")
    common(watch, workspace=None)
    watch.add_argument("--screenshot", metavar="FILE", help="with --quit-after: save a PNG of the window first")
    watch.add_argument("--quit-after", type=seconds, metavar="SECONDS", help="close by itself after this long (for "
                                                                               "checks)")

    serve = sub.add_parser("mcp-serve", help="offer Belay's supervised tools to an MCP client; every call goes "
                                              "through the running console (`belay watch`)",
                           description="Serve Belay's supervised tools (Read, Write, Edit, Bash, ...) over MCP: "
                                       "over stdio for a client that starts this command, or over Streamable HTTP "
                                       "on the loopback interface with --http (clients send the install's token "
                                       "as a bearer token). Each call runs in the console that watches the "
                                       "workspace: policy, approval in its window, journal, undo.")
    common(serve, workspace="the folder the client works in (default: the current folder); the console watching "
                              "it or its nearest parent runs the calls")
    serve.add_argument("--http", action="store_true", help="serve Streamable HTTP at http://HOST:PORT/mcp instead "
                                                           "of stdio")
    serve.add_argument("--host", help="with --http: a loopback address (default 127.0.0.1)")
    serve.add_argument("--port", type=port,
                       help=f"with --http: the port (default {MCP_PORT}; 0 picks a free one, printed at start)")

    claude = sub.add_parser("claude", help="start Claude Code on a workspace under Belay's supervision")
    claude.add_argument("prompt", nargs="?", help="what to ask Claude (default: asked in the window)")
    common(claude, workspace="the folder Claude Code works in (default: the current folder)")
    claude.add_argument("--model", help="the model to use (default: Claude Code's)")
    claude.add_argument("--auto-approve", action="store_true", help="approve every request (for unattended checks)")
    claude.add_argument("--quit-when-done", action="store_true", help="close when the session ends")
    claude.add_argument("--screenshot", metavar="FILE", help="with --quit-when-done: save a PNG of the window")

    hooks = sub.add_parser("hooks", help="install or remove Belay's hooks in Claude Code, Codex or Gemini CLI")
    hooks.add_argument("action", choices=("install", "uninstall"), metavar="install|uninstall",
                       help="add Belay's hooks, or take exactly them out again")
    hooks.add_argument("--agent", choices=("claude", "codex", "gemini"), default="claude",
                       help="the agent CLI whose settings get the hooks (default: claude)")
    where = hooks.add_mutually_exclusive_group()
    where.add_argument("--project", metavar="DIR", type=folder,
                       help="the project's own settings for this machine (Claude Code: .claude/settings.local.json; "
                            "default: the current folder)")
    where.add_argument("--user", action="store_true", help="your user settings (Claude Code: ~/.claude/settings.json)")
    common(hooks, workspace=None)
    hooks.add_argument("--http", action="store_true",
                       help="Claude Code in one project: its tool calls as http hooks to the console's loopback port "
                            "(no process per call) instead of the hook command; see docs/agents.md for what that "
                            "gives up")
    return parser


class _Version(argparse.Action):
    """`--version`, looked up when asked for: importlib.metadata is slow to import for every start."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS,
                 default: str = argparse.SUPPRESS, help: str | None = None) -> None:
        super().__init__(option_strings=option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        print(f"belay {version()}")
        parser.exit()


def version() -> str:
    """The installed distribution's version (the bundle carries its metadata too)."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed_version
    try:
        return installed_version("belay-console")
    except PackageNotFoundError:
        return "(not installed)"


def bare_console(tray: bool) -> argparse.Namespace:
    """`belay` alone: the console (`belay watch`), with the first-run screen until it was seen; `--tray` (the
    autostart entry, at login) starts it without one."""
    return argparse.Namespace(command="watch", workspace=None, state_dir=None, screenshot=None, quit_after=None,
                              tray=tray, first_run=not tray)


WINDOWED = ("demo", "watch", "claude")
"""The commands that open a window (and a bare `belay`, which is `watch`)."""


def no_display(command: str, screenshot: str | None, environ: dict[str, str] | None = None) -> str | None:
    """Why a window cannot open here, in one line with the way round it; None when it can.

    Without this Qt's xcb plugin finds no X server and aborts the interpreter (SIGABRT, rc 134).  Only
    X11/Wayland platforms need a display server; QT_QPA_PLATFORM (offscreen, vnc...) chosen by the person wins.
    A command saving a screenshot needs no display: it is switched to the offscreen platform instead.
    """
    env = os.environ if environ is None else environ
    if not sys.platform.startswith(("linux", "freebsd", "openbsd", "netbsd")):
        return None
    if env.get("DISPLAY") or env.get("WAYLAND_DISPLAY"):
        return None
    chosen = env.get("QT_QPA_PLATFORM", "")
    if chosen and not chosen.startswith(("xcb", "wayland")):
        return None
    if screenshot:
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
        return None
    unattended = {"demo": "belay demo --auto-approve --quit-when-done --screenshot demo.png",
                  "watch": "belay watch --quit-after 5 --screenshot console.png",
                  "claude": "belay claude PROMPT --auto-approve --quit-when-done --screenshot claude.png"}[command]
    return (f"no display to open a window on (neither DISPLAY nor WAYLAND_DISPLAY is set); run it on a desktop, "
            f"or unattended, which needs none: {unattended}")


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; what goes wrong reaches the person as one line on stderr, never a traceback.

    A `BelayError` (a damaged journal, a missing workspace...) is expected bad state or input: its message
    and suggestion, exit 2.  Anything else is a bug: one line saying so, exit 1; BELAY_DEBUG=1 shows where.
    """
    args = _parsed(argv)
    bare = args.command is None
    if bare:
        args = bare_console(args.tray)
    if args.command in WINDOWED:
        problem = no_display(args.command, args.screenshot)
        if problem:
            print(f"belay{'' if bare else ' ' + args.command}: {problem}", file=sys.stderr)
            return 2
    problem = _not_unicode(args) or _contradiction(args)
    if problem:
        _say(args.command, problem)
        return 2
    _default_workspace(args)
    try:
        return _dispatch(args)
    except _belay_error() as e:  # evaluated only when something was raised: the core's models load lazily
        _say(args.command, _sentences(e.info.message, e.info.suggestion))
        return 2
    except BrokenPipeError:  # `belay calls | head`: the reader had enough (as Python's docs recommend)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except OSError as e:  # the state directory cannot be made, a disk is full: the machine's state, not a bug
        where = f" ({e.filename})" if e.filename else ""
        _say(args.command, f"{e.strerror or e}{where}; Belay could not go on and changed nothing more")
        return 2
    except KeyboardInterrupt:
        _say(args.command, "interrupted")
        return 130
    except Exception as e:  # noqa: BLE001 - the boundary: a bug still ends in one line, not a traceback
        if os.environ.get("BELAY_DEBUG"):
            import traceback

            traceback.print_exc()
        _say(args.command, f"unexpected error ({type(e).__name__}: {e}); this is a bug in Belay, please report "
                           "it (BELAY_DEBUG=1 shows where it happened)")
        return 1


def _belay_error() -> type[BelayError]:
    from core import BelayError
    return BelayError


FOUND = ("calls", "undo", "redo", "export", "verify", "serve", "gc")
"""The commands whose --workspace defaults to the workspace the current folder is in (`current_workspace`)."""


def _parsed(argv: Sequence[str] | None) -> argparse.Namespace:
    """The command line, a stray argument said by the command's own parser, which names the command."""
    parser = _parser()
    args, extra = parser.parse_known_args(argv)
    if extra:
        parser.commands.get(args.command or "", parser).error(f"unrecognized arguments: {' '.join(extra)}")
    return args


def _default_workspace(args: argparse.Namespace) -> None:
    if args.command in FOUND and getattr(args, "workspace", None) is None:
        args.workspace = current_workspace(args.state_dir)


def _contradiction(args: argparse.Namespace) -> str | None:
    """Options that cannot go together, said before anything starts."""
    if args.command == "demo" and args.quit_when_done and not args.auto_approve:
        return ("--quit-when-done needs --auto-approve: with nobody to answer, the demo would wait for ever; add "
                "--auto-approve, or leave out --quit-when-done to answer in the window")
    if args.command == "watch" and args.screenshot and args.quit_after is None:
        return "--screenshot goes with --quit-after (the picture is taken just before the window closes)"
    return None


_SHOWN_AS = {"files": "--file", "call_id": "call id", "plan": "plan", "prompt": "prompt", "action": "action"}


def _not_unicode(args: argparse.Namespace) -> str | None:
    """An argument that is not UTF-8 (bytes a terminal passed through as lone surrogates) cannot be journaled
    or looked up: said here, naming it, before anything opens."""
    for name, value in vars(args).items():
        for text in value if isinstance(value, list) else [value]:
            if isinstance(text, str) and any("\ud800" <= c <= "\udfff" for c in text):
                shown = text.encode("utf-8", "backslashreplace").decode()
                label = _SHOWN_AS.get(name, "--" + name.replace("_", "-"))
                return f"the {label} '{shown}' is not valid UTF-8 text; Belay records names and paths as UTF-8"
    return None


def _sentences(*parts: str) -> str:
    return " ".join(p if p.endswith((".", "!", "?")) else f"{p}." for p in parts if p)


def _say(command: str, text: str) -> None:
    print(f"belay {command}: {' '.join(text.split())}", file=sys.stderr)


def _dispatch(args: argparse.Namespace) -> int:
    if args.command == "calls":
        from gui.terminal.commands import list_calls
        return list_calls(args.workspace, args.state_dir, args.json)
    if args.command == "run":
        from gui.terminal.run import RunOptions, run_plan
        return run_plan(RunOptions(plan=args.plan, workspace=args.workspace, state_dir=args.state_dir,
                                   auto=args.auto, as_json=args.json, fail_fast=args.fail_fast,
                                   concurrency=args.concurrency))
    if args.command == "hooks":
        from gui.terminal.commands import hooks_command
        return hooks_command(args.action, args.project, args.user, args.state_dir, agent=args.agent,
                             http=args.http)
    if args.command == "mcp-serve":
        if not args.http and (args.host is not None or args.port is not None):
            print("belay mcp-serve: --host and --port go with --http (stdio needs neither)", file=sys.stderr)
            return 2
        from gui.terminal.mcp_serve import ServeOptions, run_mcp_serve
        return run_mcp_serve(ServeOptions(workspace=args.workspace, state_dir=args.state_dir, http=args.http,
                                          host=args.host or "127.0.0.1",
                                          port=MCP_PORT if args.port is None else args.port))
    if args.command == "claude":
        from gui.window.app import ClaudeOptions, run_claude
        return run_claude(ClaudeOptions(prompt=args.prompt, workspace=args.workspace, state_dir=args.state_dir,
                                        model=args.model, auto_approve=args.auto_approve,
                                        quit_when_done=args.quit_when_done, screenshot=args.screenshot))
    if args.command == "watch":
        from gui.window.app import WatchOptions, run_watch
        return run_watch(WatchOptions(workspace=args.workspace, state_dir=args.state_dir,
                                      screenshot=args.screenshot, quit_after=args.quit_after,
                                      tray=getattr(args, "tray", False), first_run=getattr(args, "first_run", False),
                                      host=getattr(args, "host", None), ssh=getattr(args, "ssh", "ssh"),
                                      remote_belay=getattr(args, "remote_belay", "belay")))
    if args.command in ("attach", "serve"):
        from gui.terminal.attach import remote_command
        return remote_command(args)
    if args.command in ("export", "verify", "gc"):
        from gui.terminal.storage import storage_command
        return storage_command(args)
    if args.command in ("undo", "redo"):
        from gui.terminal.commands import undo_call
        return undo_call(args.workspace, args.call_id, args.state_dir, getattr(args, "force", False), args.json,
                         args.files, redo=args.command == "redo")
    from gui.window.app import DemoOptions, run_demo
    return run_demo(DemoOptions(
        workspace=args.workspace, state_dir=args.state_dir, script=args.script,
        auto_approve=args.auto_approve, quit_when_done=args.quit_when_done, screenshot=args.screenshot,
        pace=args.pace if args.pace is not None else (0.0 if args.quit_when_done else 0.4),
    ))


if __name__ == "__main__":
    sys.exit(main())
