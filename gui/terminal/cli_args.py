"""What the `belay` command line accepts, and how it says a mistake: the parser class, the options several commands
share (worded once), the values checked as they are read, and the workspace a command defaults to."""

from __future__ import annotations

import argparse
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

if TYPE_CHECKING:
    from datetime import datetime

JOURNAL = "journal.sqlite3"
"""The journal's file in a workspace's state folder (core.store.journal_file)."""

WORKSPACE_HELP = "the workspace (default: the one the current folder is in, else the current folder)"
STATE_HELP = "where Belay keeps journals and stored copies (default: BELAY_STATE_DIR, else the user data folder)"
JSON_HELP = "print JSON instead of text"


class Parser(argparse.ArgumentParser):
    """argparse, with its mistakes said in one line that names what the person typed and how to fix it (exit 2),
    never argparse's internal names or a usage block."""

    commands: Mapping[str, argparse.ArgumentParser] = {}
    """On the top parser: each command's own parser (`main` lets it name a stray argument)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {plain(message)}; see `{self.prog} --help`\n")


def plain(message: str) -> str:
    """argparse's message in the person's words: the option or value they typed, what would be right."""
    choice = re.fullmatch(r"argument ([^:]+): invalid choice: ('[^']*') \(choose from (.*)\)", message)
    if choice:
        name, value, choices = choice.groups()
        what = "a command" if name == "COMMAND" else f"a choice for {user_words(name)}"
        return f"{value} is not {what}: use one of {choices.replace(chr(39), '')}"
    if message.startswith("the following arguments are required: "):
        return f"missing {message.removeprefix('the following arguments are required: ')}"
    if message.startswith("unrecognized arguments: "):
        return f"{message.removeprefix('unrecognized arguments: ')}: not an option of this command"
    message = re.sub(r"not allowed with argument (\S+)", lambda m: f"cannot go with {user_words(m[1])}", message)
    return re.sub(r"^argument ([^:]+): ", lambda m: f"{user_words(m[1])}: ", message)


def user_words(name: str) -> str:
    """argparse's name for an argument ("-o/--output", "install|uninstall") as the person types it."""
    return name.split("/")[-1] if name.startswith("-") else name


def common(parser: argparse.ArgumentParser, *, workspace: str | None = WORKSPACE_HELP, json: bool = False) -> None:
    """The options several commands share, worded the same everywhere."""
    if workspace is not None:
        parser.add_argument("--workspace", metavar="DIR", help=workspace)  # each command says if it is missing
    parser.add_argument("--state-dir", metavar="DIR", help=STATE_HELP)
    if json:
        parser.add_argument("--json", action="store_true", help=JSON_HELP)



def port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"must be from 0 to 65535, not {value}")
    return value


def folder(text: str) -> str:
    """A folder that exists: a mistyped path is said at once, never created or taken for another."""
    if not os.path.isdir(os.path.expanduser(text)):
        what = "a file, not a folder" if os.path.exists(os.path.expanduser(text)) else "no such folder"
        raise argparse.ArgumentTypeError(f"{text!r} is {what}")
    return os.path.expanduser(text)


def seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not 0 <= value < float("inf"):
        raise argparse.ArgumentTypeError(f"must be 0 or more seconds, not {text}")
    return value


def current_workspace(state_dir: str | None, start: str | None = None) -> str:
    """The workspace the current folder is in: the nearest folder at or above it that Belay has a journal for,
    else the current folder itself."""
    from core import workspace_state_dir
    here = os.path.realpath(start or os.getcwd())
    path = here
    while True:
        if (workspace_state_dir(Path(path), state_dir) / JOURNAL).exists():
            return path
        parent = os.path.dirname(path)
        if parent == path:
            return here
        path = parent


def head(text: str) -> str:
    from core import parse_head
    try:
        parse_head(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    return text


def concurrency(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if not 1 <= value <= 64:
        raise argparse.ArgumentTypeError(f"must be from 1 to 64, not {value}")
    return value


def moment(text: str) -> datetime:
    """--since: an ISO date or time (UTC unless it says), or an age counted back from now (90m, 12h, 7d)."""
    from datetime import datetime, timedelta, timezone  # for this option only: a start without it is quicker

    ages = {"m": "minutes", "h": "hours", "d": "days"}
    if text[-1:] in ages and text[:-1].isdigit():
        return datetime.now(timezone.utc) - timedelta(**{ages[text[-1]]: int(text[:-1])})
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is neither an ISO date or time (2026-11-20, "
                                         "2026-11-20T09:30) nor an age (90m, 12h, 7d)") from None
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)
