"""The Grep tool: ripgrep over the workspace, with a time-limited pure-Python fallback.

ripgrep's regex engine is linear-time, so a pathological pattern cannot hang
the console; it runs with `--no-config`, stdin closed, in its own process
group, under a time limit and an output cap, and does not follow symlinks.
Without rg, the same search runs as a small ripgrep-compatible Python
process (see `fallback_main`) under the same limits, because Python's `re`
can backtrack for ever.  The fallback ignores .gitignore and knows only a
few `type` names.

Both print each file's name followed by a NUL byte (`--null`), so the
output is split into rows by file without guessing where a name with a
colon ends.  Rows of files `ToolContext.may_read` refuses (a Read deny
rule, a secret) are dropped, whatever path the search was given, without
a word: a note that files were hidden would appear only when a denied file
matched, and so tell the agent, one pattern at a time, what it holds.  What is shown is made safe as
Read's text is: control characters as escapes, lines cut at 2,000
characters with a marker.  An argument ripgrep cannot be given (a NUL
byte) is an invalid-args error, not a crash.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import signal
import stat
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import ConfigDict, Field

from core.errors import ErrorKind, ToolError
from core.paths import Workspace
from core.process.output import MAX_LINE_CHARS, cut_line, visible
from core.store import fsio
from core.tasks import shielded
from core.tools.base import Annotations, RetryPolicy, RunTool, ToolArgs, ToolContext, ToolOutput, read_places
from core.tools.listing import glob_regex, readable
from core.tools.names import ToolName

TIME_LIMIT_S = 20.0
MAX_OUTPUT_BYTES = 2 * 1024 * 1024
MAX_RESULT_LINES = 500
MAX_RESULT_CHARS = 25_000
MAX_COLUMNS = 4000
"""Longest line ripgrep prints whole; past it, a preview of this many characters (Belay shows 2,000)."""
_PREVIEW_CUT = re.compile(r" \[\.\.\. (?:omitted end of long line|[0-9]+ more match(?:es)?)\]$")
"""How ripgrep's --max-columns-preview ends a line it cut."""
_RECORD = re.compile("--\n|([^\0\n]*?): (binary file matches[^\n]*)\n|([^\0]*?)\0([^\n]*)\n")
"""One row of --null output: a break between context groups, ripgrep's note on a binary file it was asked to
search (printed without a NUL), or a file's name, a NUL and what follows it (a name may hold a newline)."""
_STDERR_KEEP = 16 * 1024
_FALLBACK = ("import sys, types; core = types.ModuleType('core'); core.__path__ = [sys.argv[1] + '/core']; "
             "sys.modules['core'] = core; from core.tools.grep import fallback_main; fallback_main()")
"""The fallback process's program.  `core` stands in as a bare package so that its __init__ (the console and
all it imports: seconds on a busy machine) is not run; only the modules the search needs are loaded."""

Mode = Literal["content", "files_with_matches", "count"]


class GrepArgs(ToolArgs):
    model_config = ConfigDict(populate_by_name=True, use_attribute_docstrings=True)

    pattern: str = Field(min_length=1)
    """The regular expression to search for (ripgrep syntax)."""
    path: str | None = None
    """The absolute path of the file or directory to search; the workspace root when omitted."""
    glob: str | None = None
    """Only search files matching this glob, e.g. "*.py" or "src/**/*.ts"."""
    type: str | None = None
    """Only search files of this ripgrep type, e.g. "py", "js", "rust"."""
    output_mode: Mode = "files_with_matches"
    """"content" shows matching lines, "files_with_matches" the files, "count" matches per file."""
    before: int | None = Field(default=None, alias="-B", ge=0)
    """Lines to show before each match (content mode)."""
    after: int | None = Field(default=None, alias="-A", ge=0)
    """Lines to show after each match (content mode)."""
    context: int | None = Field(default=None, alias="-C", ge=0)
    """Lines to show before and after each match (content mode)."""
    line_numbers: bool | None = Field(default=None, alias="-n")
    """Show line numbers (content mode); on by default."""
    case_insensitive: bool | None = Field(default=None, alias="-i")
    """Match without regard to case."""
    head_limit: int | None = Field(default=None, ge=1)
    """Return only the first N lines or entries of the result."""
    multiline: bool | None = None
    """Let patterns span lines, with "." matching newlines."""


class Grep(RunTool[GrepArgs]):
    name = ToolName.GREP
    typical_s = 0.3
    """A search of the tree."""
    description = (
        "Search file contents with a regular expression (ripgrep syntax), e.g. \"def \\w+\" or "
        "\"TODO|FIXME\". Filter files with glob (\"*.py\") or type (\"py\"). output_mode: "
        "\"files_with_matches\" (default, absolute paths, newest first), \"content\" (path:line:text, "
        "with -A/-B/-C context), or \"count\". Use -i for case-insensitive search and multiline for "
        "patterns spanning lines. Skips .git, files ignored by .gitignore and files Read deny rules cover "
        "(it says how many)."
    )
    Args = GrepArgs
    annotations = Annotations(read_only=True, destructive=False, idempotent=True)
    timeout_s = 30.0
    cacheable = True
    retry = RetryPolicy()

    def reads(self, args: GrepArgs, workspace: Workspace) -> frozenset[str] | None:
        return read_places(workspace, args.path, tree=True)  # a file named as the path reads as a tree of one

    def summary(self, args: GrepArgs, workspace: Workspace) -> str:
        where = f" in {workspace.describe(args.path)}" if args.path else ""
        return visible(f"{args.pattern!r}{where}" + (f" ({args.glob})" if args.glob else ""), multiline=False)

    async def run(self, args: GrepArgs, ctx: ToolContext) -> ToolOutput:
        _check_passable(args)
        ws = ctx.workspace
        target = ws.resolve(args.path, "path") if args.path is not None else ws.root
        _check_target(ws, target, await asyncio.to_thread(fsio.stat_path, ws, target))
        rg = find_rg()
        argv = rg_argv(rg, args, target) if rg else _fallback_argv(args, ws, target)
        rc, out, err = await run_capped(argv, TIME_LIMIT_S, MAX_OUTPUT_BYTES)
        unreadable = rc == 2 and not err.strip()  # --no-messages: only files it could not open or read
        if rc not in (0, 1) and not out and not unreadable:
            raise _search_error(err, args, rc)
        rows, _, full = await asyncio.to_thread(_allowed, ws, parse_rows(out, args.output_mode), args,
                                                ctx.may_read)
        notes = [note for note in (_stopped_note(rc), UNREADABLE_NOTE if unreadable else "") if note]
        return _result(rows, args, notes, full)


def _check_passable(args: GrepArgs) -> None:
    """Refuse what cannot reach ripgrep's command line: a NUL byte ends a C string."""
    for name, value in (("pattern", args.pattern), ("glob", args.glob), ("type", args.type)):
        if value is not None and "\0" in value:
            hint = " Write it as \\x00 in the pattern." if name == "pattern" else ""
            raise ToolError(ErrorKind.INVALID_ARGS, f"{name} contains a NUL character, which cannot be passed to"
                            " the search", f"Remove the NUL character.{hint}")


@dataclass(frozen=True)
class SearchRow:
    """One row of the search's output: the file it is about, and what follows the file's name."""

    path: str
    """The file as the search printed it (absolute); "" for the "--" between groups of context lines."""
    rest: str
    """"12:text" (a match) or "12-text" (context) in content mode, the count in count mode, "" for a file
    listed as matching, or ripgrep's note on a binary file."""


def parse_rows(out: bytes, mode: Mode) -> list[SearchRow]:
    """The rows of --null output; a last row cut off by the output cap (no terminator) is dropped."""
    text = out.decode("utf-8", errors="surrogateescape")  # names exactly as on disk, for may_read
    if mode == "files_with_matches":
        return [SearchRow(path, "") for path in text.split("\0")[:-1] if path]
    rows, at = [], 0
    while record := _RECORD.match(text, at):
        note_path, note, path, rest = record.groups()
        rows.append(SearchRow(path, rest) if path is not None else SearchRow(note_path, note) if note
                    else SearchRow("", "--"))
        at = record.end()
    return rows


def _allowed(ws: Workspace, rows: list[SearchRow], args: GrepArgs,
             may_read: Callable[[Path], str | None]) -> tuple[list[SearchRow], list[str], bool]:
    """The rows of files the Read rules let the agent see, why each other file was hidden, and whether a list
    of files was checked only as far as it is shown (files mode: a list of thousands is not checked whole).
    Blocking."""
    if args.output_mode == "files_with_matches":
        return readable(_newest_first(ws, rows), lambda row: row.path, may_read, args.head_limit or MAX_RESULT_LINES)
    kept, hidden, _ = readable(rows, lambda row: row.path, may_read)
    return _tidy_breaks(kept), hidden, False


def _tidy_breaks(rows: list[SearchRow]) -> list[SearchRow]:
    """No "--" first, last or twice in a row, as happens when the file between two was hidden."""
    tidy: list[SearchRow] = []
    for row in rows:
        if row.path or (tidy and tidy[-1].path):
            tidy.append(row)
    return tidy[:-1] if tidy and not tidy[-1].path else tidy


UNREADABLE_NOTE = "(Some files could not be read, for example removed while the search ran; they were skipped.)"


def _stopped_note(rc: int) -> str:
    if rc != -signal.SIGKILL:
        return ""
    return f"(The search printed over {MAX_OUTPUT_BYTES:,} bytes and was stopped; narrow it with path, glob or type.)"


def _check_target(ws: Workspace, target: Path, st: os.stat_result | None) -> None:
    """A directory or a regular file; rg would block for ever reading a FIFO named explicitly."""
    rel = ws.relative(target)
    if st is None:
        raise ToolError(ErrorKind.NOT_FOUND, f"{rel} does not exist", "Check the path with LS or Glob.")
    if stat.S_ISLNK(st.st_mode):
        raise ToolError(ErrorKind.OUTSIDE_WORKSPACE, f"{rel} changed while it was being checked (it is now a symlink)",
                        "Check the path and retry.")
    if not (stat.S_ISDIR(st.st_mode) or stat.S_ISREG(st.st_mode)):
        raise ToolError(ErrorKind.NOT_REGULAR_FILE, f"{rel} is not a regular file or a directory",
                        "Search a directory or a regular file.")


def find_rg() -> str | None:
    """The rg binary the ripgrep wheel put beside the interpreter, else one on PATH."""
    beside = Path(sys.executable).parent / "rg"
    return str(beside) if os.access(beside, os.X_OK) else shutil.which("rg")


def rg_argv(rg: str, args: GrepArgs, target: Path) -> list[str]:
    """The ripgrep command line for `args`; the pattern goes through --regexp so "-x" is a pattern."""
    argv = [rg, "--no-config", "--color=never", "--no-messages", "--hidden", "--sort=path", "--null",
            f"--max-columns={MAX_COLUMNS}", "--max-columns-preview"]
    if args.case_insensitive:
        argv.append("--ignore-case")
    if args.multiline:
        argv += ["--multiline", "--multiline-dotall"]
    if args.glob:
        argv += ["--glob", args.glob]
    argv.append("--glob=!.git")
    if args.type:
        argv += ["--type", args.type]
    argv += _mode_flags(args)
    return [*argv, "--regexp", args.pattern, "--", str(target)]


def _mode_flags(args: GrepArgs) -> list[str]:
    if args.output_mode == "files_with_matches":
        return ["--files-with-matches"]
    if args.output_mode == "count":
        return ["--count", "--with-filename"]
    flags = ["--with-filename", "--no-heading", "--line-number"]  # numbers tell a match from context
    for flag, value in (("-B", args.before), ("-A", args.after), ("-C", args.context)):
        if value is not None:
            flags.append(f"{flag}{value}")
    return flags


def _fallback_argv(args: GrepArgs, ws: Workspace, target: Path) -> list[str]:
    spec = {"root": str(ws.root), "target": str(target), **args.model_dump()}
    package_root = str(Path(__file__).resolve().parents[2])
    return [sys.executable, "-I", "-c", _FALLBACK, package_root, json.dumps(spec)]


async def run_capped(argv: list[str], time_limit: float, cap: int) -> tuple[int, bytes, bytes]:
    """Run `argv` with stdin closed; kill its process group on timeout, cancel or a full output cap.

    The exit status is -SIGKILL whenever the output reached the cap, even if the process had already ended
    by itself when it was killed: what it printed was cut either way.
    """
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, start_new_session=True, cwd="/",
            env={"PATH": os.environ.get("PATH", os.defpath), "LC_ALL": "C.UTF-8"})
    except OSError as e:
        raise ToolError(ErrorKind.SYSTEM, f"could not start the search program {argv[0]}: {e.strerror}",
                        "Reinstall Belay so that its ripgrep is present.") from None
    try:
        async with asyncio.timeout(time_limit):
            (out, capped), (err, _) = await asyncio.gather(_read(proc.stdout, cap, proc),
                                                           _read(proc.stderr, _STDERR_KEEP, None))
            rc = await proc.wait()
            return (-signal.SIGKILL if capped else rc), out, err
    except TimeoutError:
        raise ToolError(ErrorKind.TIMEOUT, f"the search took longer than {time_limit:g} s and was stopped",
                        "Use a simpler pattern, or narrow it with path, glob or type.") from None
    finally:
        if proc.returncode is None:
            _kill(proc)
        await shielded(proc.communicate())  # the rest of a cut search's output, so its pipes are closed, not leaked


async def _read(stream: asyncio.StreamReader | None, cap: int,
                stop: asyncio.subprocess.Process | None) -> tuple[bytes, bool]:
    """Up to `cap` bytes, and whether the cap cut them; past it, kill the producer (`stop`, if given), and read
    and drop the rest."""
    assert stream is not None
    kept = bytearray()
    killed = False
    # Read to the end even once the producer is killed (the end then comes at once): Python 3.11's proc.wait()
    # returns only once every pipe is closed, and a pipe whose reader stopped past its buffer's high-water mark
    # stays paused, its end unseen: the wait then lasted until the time limit (1 search in 20).
    while chunk := await stream.read(65536):
        kept += chunk[: max(cap - len(kept), 0)]
        if len(kept) >= cap and stop is not None and not killed:
            _kill(stop)
            killed = True
    if killed:
        return bytes(kept[: max(kept.rfind(b"\n"), kept.rfind(b"\0")) + 1]), True  # drop the cut line or name
    return bytes(kept), len(kept) >= cap


def _kill(proc: asyncio.subprocess.Process) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        return  # it has already exited


def _search_error(err: bytes, args: GrepArgs, rc: int) -> ToolError:
    text = err.decode("utf-8", errors="replace").strip()
    if rc < 0 and not text:
        text = f"the search program was stopped by signal {-rc}"
    if "regex" in text or "parse error" in text:
        return ToolError(ErrorKind.INVALID_ARGS, f"pattern {args.pattern!r} is not a valid regular expression: "
                         f"{text.splitlines()[-1] if text else ''}", "Escape special characters such as ( [ { with \\.")
    if "unrecognized file type" in text or "glob" in text:
        return ToolError(ErrorKind.INVALID_ARGS, text.splitlines()[0], "Check the glob and type arguments.")
    return ToolError(ErrorKind.SYSTEM, f"the search failed: {text[:500] or 'no error message'}",
                     "Retry, or narrow the search.")


def _newest_first(ws: Workspace, rows: list[SearchRow]) -> list[SearchRow]:
    def mtime(p: str) -> int:
        st = fsio.stat_path(ws, Path(p)) if ws.contains(p) else None
        return st.st_mtime_ns if st else 0
    return sorted(rows, key=lambda row: (-mtime(row.path), row.path))


def _result(rows: list[SearchRow], args: GrepArgs, notes: list[str], full: bool) -> ToolOutput:
    if not rows:
        return ToolOutput("\n".join(["No matches found", *notes]), {"files": [], "matches": 0})
    if args.output_mode == "count":
        counts = {visible(row.path, multiline=False): int(row.rest) for row in rows if row.rest.isdigit()}
        summary = f"Found {sum(counts.values()):,} matching lines in {len(counts):,} files."
        shown, note = _limited([f"{path}:{n}" for path, n in counts.items()], args.head_limit)
        return ToolOutput("\n".join([*shown, summary, *note, *notes]),
                          {"matches": sum(counts.values()), "files": list(counts)})
    if args.output_mode == "files_with_matches":
        shown, note = _limited([visible(row.path, multiline=False) for row in rows], args.head_limit)
        if full and len(shown) == len(rows):  # files past these were not checked against the Read rules:
            note = ["(There may be more matching files: narrow the search or raise head_limit.)"]  # no count
        many = "file" if len(rows) == 1 else "files"
        head = f"Found {len(rows):,} files" if not full else f"Showing the {len(rows):,} newest matching {many}"
        return ToolOutput("\n".join([head, *shown, *note, *notes]), {"files": shown})
    shown, note = _limited([_content_line(row, args.line_numbers is not False) for row in rows], args.head_limit)
    return ToolOutput("\n".join(shown + note + notes), {"matches": sum(1 for row in rows if row.path)})


def _content_line(row: SearchRow, numbered: bool) -> str:
    """path:12:text for a match, path-12-text for context, as ripgrep prints them, made safe to show."""
    if not row.path:
        return "--"
    path = visible(row.path, multiline=False)
    number = re.match(r"([0-9]+)([:-])", row.rest)
    if number is None:
        return f"{path}: {visible(row.rest, multiline=False)}"  # ripgrep's note on a binary file
    sep, text = number.group(2), _shown_text(row.rest[number.end():])
    return f"{path}{sep}{number.group(1)}{sep}{text}" if numbered else f"{path}{sep}{text}"


def _shown_text(text: str) -> str:
    """A matching line as Read shows lines: escapes visible, cut at 2,000 characters saying how much was cut."""
    text = text.removesuffix("\r")
    preview = _PREVIEW_CUT.search(text)
    if preview is None:
        return cut_line(visible(text))
    head = visible(text[: preview.start()])[:MAX_LINE_CHARS]
    return f"{head}... [line cut at {len(head):,} of more than {MAX_COLUMNS:,} characters]"


def _limited(lines: list[str], head_limit: int | None) -> tuple[list[str], list[str]]:
    """The first lines (head_limit, else up to the line and character caps), and a note when more exist."""
    total = len(lines)
    wanted = lines[: head_limit or MAX_RESULT_LINES]
    shown: list[str] = []
    size = 0
    for line in wanted:
        if shown and size + len(line) > MAX_RESULT_CHARS:
            break
        shown.append(line)
        size += len(line) + 1
    if len(shown) == total or (head_limit and len(shown) == head_limit):
        return shown, []
    return shown, [f"(Showing {len(shown):,} of {total:,} result lines; narrow the search or use head_limit.)"]


def fallback_main() -> None:
    """Entry point of the fallback search process (argv: package root, JSON spec): a small ripgrep."""
    spec = json.loads(sys.argv[2])
    flags = (re.IGNORECASE if spec["case_insensitive"] else 0) | (re.MULTILINE | re.DOTALL if spec["multiline"] else 0)
    try:
        regex = re.compile(spec["pattern"], flags)
    except re.error as e:
        _fail(f"regex parse error: {e}")
    if spec["type"] and spec["type"] not in _TYPES:
        _fail(f"unrecognized file type: {spec['type']}")
    ws, found = Workspace(spec["root"]), False
    for path in _candidates(ws, Path(spec["target"]), spec):
        try:
            data = fsio.read_file(ws, path)
        except ToolError:
            continue  # vanished, swapped or too large: rg skips such files too
        if b"\0" not in data[:8192]:
            found = _emit(str(path), data.decode("utf-8", errors="replace"), regex, spec, found) or found
    sys.exit(0 if found else 1)


def _fail(message: str) -> None:
    print(message, file=sys.stderr)
    sys.exit(2)  # ripgrep's exit status for an error, as opposed to 1 for "no match"


_TYPES = {"py": ("*.py", "*.pyi"), "js": ("*.js", "*.mjs", "*.cjs", "*.jsx"), "ts": ("*.ts", "*.tsx", "*.cts", "*.mts"),
          "rust": ("*.rs",), "go": ("*.go",), "c": ("*.c", "*.h"), "cpp": ("*.cpp", "*.cc", "*.hpp", "*.h"),
          "java": ("*.java",), "md": ("*.md", "*.markdown"), "json": ("*.json",), "yaml": ("*.yaml", "*.yml"),
          "toml": ("*.toml",), "sh": ("*.sh", "*.bash"), "html": ("*.html", "*.htm"), "css": ("*.css",),
          "txt": ("*.txt",)}


def _candidates(ws: Workspace, target: Path, spec: dict[str, Any]) -> Iterator[Path]:
    st = fsio.stat_path(ws, target)
    if st is not None and stat.S_ISREG(st.st_mode):
        yield target
        return
    with fsio.open_dir(ws, target) as fd:
        for dirpath, dirs, files, dfd in os.fwalk(".", dir_fd=fd, follow_symlinks=False):
            dirs[:] = sorted(d for d in dirs if d != ".git")
            for name in sorted(files):
                rel = os.path.normpath(os.path.join(dirpath, name))
                if _selected(rel, spec) and stat.S_ISREG(os.stat(name, dir_fd=dfd, follow_symlinks=False).st_mode):
                    yield target / rel


def _selected(rel: str, spec: dict[str, Any]) -> bool:
    base = os.path.basename(rel)
    if spec["type"] and not any(glob_regex(g).fullmatch(base) for g in _TYPES[spec["type"]]):
        return False
    pattern = spec["glob"] or ""
    negated = pattern.startswith("!")
    pattern = pattern.removeprefix("!")
    if not pattern:
        return True
    return bool(glob_regex(pattern).fullmatch(rel if "/" in pattern else base)) != negated


def _emit(path: str, text: str, regex: re.Pattern[str], spec: dict[str, Any], after_another: bool) -> bool:
    """Print one file's results as rg --null does; `after_another`: a file's were printed before (a "--" goes
    between files' context groups)."""
    lines = text.split("\n")
    if len(lines) > 1 and lines[-1] == "":
        lines.pop()  # the end of the last line, not a line
    hits = _hit_lines(text, lines, regex, bool(spec["multiline"]))
    if not hits:
        return False
    if spec["output_mode"] == "files_with_matches":
        print(path, end="\0")
    elif spec["output_mode"] == "count":
        print(f"{path}\0{len(hits)}")
    else:
        context = spec["context"] or 0
        before, after = spec["before"] or context, spec["after"] or context
        shown = sorted({j for i in hits for j in range(max(i - before, 0), min(i + after + 1, len(lines)))})
        if after_another and (before or after):
            print("--")
        for k, i in enumerate(shown):
            if k and i != shown[k - 1] + 1:
                print("--")
            print(f"{path}\0{i + 1}{':' if i in hits else '-'}{lines[i]}")  # as rg --null --line-number
    return True


def _hit_lines(text: str, lines: list[str], regex: re.Pattern[str], multiline: bool) -> set[int]:
    if not multiline:
        return {i for i, line in enumerate(lines) if regex.search(line)}
    hits: set[int] = set()
    for m in regex.finditer(text):
        first = text.count("\n", 0, m.start())
        hits.update(range(first, first + m.group().count("\n") + 1))
    return hits
