"""The hostile harness's outside agent: Claude Code as Belay's hooks see it, played by the test.

A call arrives as Claude Code's PreToolUse over the console's real endpoint (the Unix socket, the token,
the framing, by the hook client's own `ask_console`: the path a real `belay` hook command takes, less the
interpreter start).  Where Belay allows it, the agent carries it out the way Claude Code would, with Belay's
answer applied (its `updatedInput` included): a command runs as `bash -c` in the workspace, in the agent's
environment, its output read as Claude Code reads it (stdout, then stderr) and cut by the agent's
timeout; a file tool reads or writes the file itself, following links as a plain open does.  Then it
reports back (PostToolUse, or PostToolUseFailure for a command that exited non-zero), so Belay records the
call and removes its pids group.
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
import signal
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from core.outside.endpoint import install_token
from core.outside.hook_client import ask_console
from core.policy.settings import config_dir

CLAUDE_DEFAULT_TIMEOUT_S = 120.0
"""Claude Code's Bash runs a command for 2 minutes unless its `timeout` (ms) says otherwise."""
READ_CAP_BYTES = 4 * 2**20
"""What the agent keeps of a stream: a command that floods past Belay's filter shows as a text this long
(and fails the case's caps) instead of filling the test's memory."""
MODES = {"default": "default", "accept_edits": "acceptEdits", "plan": "plan", "bypass": "bypassPermissions"}
"""Belay's permission modes as Claude Code names them in a hook event's `permission_mode`."""


@dataclass
class Answer:
    """What Belay's PreToolUse answered."""

    decision: str
    reason: str
    updated: dict[str, Any] | None


@dataclass
class Carried:
    """How the agent's own tool ended: `done` (a command: it ran to its end, whatever its exit code, as Belay's
    own Bash counts it), `failed` (the tool could not do it) or `timed_out`; and what the model is given."""

    status: str
    text: str
    response: Any = None
    exit_code: int | None = None
    """A command's exit code; a non-zero one is reported as Claude Code does, by PostToolUseFailure."""


class HookAgent:
    """One Claude Code session talking to one console: numbered tool uses, its project directory, its mode."""

    def __init__(self, socket_path: Path, workspace: Path, mode: str, timeout_cap_s: float) -> None:
        self.socket_path, self.workspace, self.timeout_cap_s = str(socket_path), workspace, timeout_cap_s
        self.mode = MODES.get(mode, mode)
        self.token = install_token(config_dir())
        self.uses = 0
        self.session = f"hostile-{os.getpid()}-{time.monotonic_ns()}"

    def _event(self, name: str, **fields: Any) -> dict[str, Any]:
        return {"session_id": self.session, "transcript_path": str(self.workspace / ".no-transcript"),
                "cwd": str(self.workspace), "permission_mode": self.mode, "hook_event_name": name, **fields}

    def _send(self, event: dict[str, Any]) -> dict[str, Any]:
        code, out, err = ask_console(self.socket_path, self.token, json.dumps(event).encode(), max_wait_s=120)
        assert code == 0, f"the hook exited {code}: {err.decode(errors='replace')[:300]}"
        return json.loads(out) if out.strip() else {}

    def pre(self, tool: str, tool_input: dict[str, Any]) -> tuple[str, Answer]:
        """PreToolUse: (tool_use_id, Belay's answer)."""
        self.uses += 1
        use_id = f"toolu_hostile_{self.uses}"
        out = self._send(self._event("PreToolUse", tool_name=tool, tool_input=tool_input, tool_use_id=use_id))
        spec = out.get("hookSpecificOutput", {})
        return use_id, Answer(spec.get("permissionDecision", ""), str(spec.get("permissionDecisionReason", "")),
                              spec.get("updatedInput"))

    def post(self, use_id: str, tool: str, tool_input: dict[str, Any], carried: Carried) -> None:
        """Report back as Claude Code does: PostToolUse, or PostToolUseFailure for a failed call."""
        if carried.status == "done" and not carried.exit_code:
            self._send(self._event("PostToolUse", tool_name=tool, tool_input=tool_input, tool_use_id=use_id,
                                   tool_response=carried.response))
        else:
            self._send(self._event("PostToolUseFailure", tool_name=tool, tool_input=tool_input, tool_use_id=use_id,
                                   error=carried.text[:10_000], is_interrupt=carried.status == "timed_out"))

    def carry_out(self, tool: str, tool_input: dict[str, Any]) -> Carried:
        """Run the allowed call as Claude Code's own tool would (blocking)."""
        try:
            if tool == "Bash":
                return self._bash(tool_input)
            return _FILE_TOOLS[tool](tool_input, self.workspace)
        except (OSError, ValueError, KeyError, TypeError, re.error) as e:  # the agent's tool fails, as it would
            return Carried("failed", f"<tool_use_error>{type(e).__name__}: {e}</tool_use_error>")

    def _bash(self, tool_input: dict[str, Any]) -> Carried:
        timeout = tool_input.get("timeout")
        limit = min(timeout / 1000 if isinstance(timeout, int) and timeout > 0 else CLAUDE_DEFAULT_TIMEOUT_S,
                    self.timeout_cap_s)
        proc = subprocess.Popen(["bash", "-c", tool_input["command"]], cwd=self.workspace, env=dict(os.environ),
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                start_new_session=True)
        assert proc.stdout is not None and proc.stderr is not None
        streams = [_Kept(proc.stdout), _Kept(proc.stderr)]
        timed_out = False
        try:
            proc.wait(timeout=limit)
        except subprocess.TimeoutExpired:  # Claude Code kills the command's whole tree
            timed_out = True
        finally:
            _kill_group(proc.pid)
            proc.wait()
        out, err = (s.text() for s in streams)
        text = out + (("\n" if out else "") + err if err else "")
        if timed_out:
            return Carried("timed_out", f"Command timed out after {limit:g} s\n{text}")
        if proc.returncode != 0:
            return Carried("done", f"Exit code {proc.returncode}\n{text}", exit_code=proc.returncode)
        return Carried("done", text, {"stdout": out, "stderr": err, "interrupted": False, "isImage": False}, 0)


class _Kept:
    """A stream read on a thread to its end, keeping the first READ_CAP_BYTES (and counting the rest)."""

    def __init__(self, stream: IO[bytes]) -> None:
        self.data, self.total = bytearray(), 0
        self._thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self._thread.start()

    def _read(self, stream: IO[bytes]) -> None:
        with stream:
            while chunk := stream.read1(65536):  # type: ignore[attr-defined]  # a BufferedReader's
                self.total += len(chunk)
                self.data += chunk[: max(READ_CAP_BYTES - len(self.data), 0)]

    def text(self) -> str:
        self._thread.join(timeout=10)
        return self.data.decode("utf-8", errors="replace")


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _read(args: dict[str, Any], ws: Path) -> Carried:
    """Claude Code's Read: the file (links followed), numbered lines, long lines cut at 2,000 characters."""
    fd = os.open(args["file_path"], os.O_RDONLY | os.O_NONBLOCK)  # a FIFO would hold the agent, not the test
    with os.fdopen(fd, "rb") as f:
        text = f.read(READ_CAP_BYTES).decode("utf-8", errors="replace")
    lines = text.splitlines()
    start = int(args.get("offset") or 1)
    shown = lines[start - 1: start - 1 + int(args.get("limit") or 2000)]
    body = "\n".join(f"{n:>6}\t{line[:2000]}" for n, line in enumerate(shown, start))
    return Carried("done", body, {"type": "text", "file": {"filePath": args["file_path"], "content": text}})


def _write(args: dict[str, Any], ws: Path) -> Carried:
    path = Path(args["file_path"])
    original = path.read_text(encoding="utf-8") if path.is_file() else None
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(args["content"], encoding="utf-8")
    return Carried("done", f"File written: {path}", {"type": "update" if original is not None else "create",
                                                    "filePath": str(path), "content": args["content"],
                                                    "originalFile": original})


def _replaced(text: str, old: str, new: str, every: bool) -> str:
    if old not in text:
        raise ValueError("String to replace not found in file.")
    return text.replace(old, new) if every else text.replace(old, new, 1)


def _edit(args: dict[str, Any], ws: Path) -> Carried:
    path = Path(args["file_path"])
    original = path.read_text(encoding="utf-8")
    edits = args["edits"] if "edits" in args else [args]
    text = original
    for edit in edits:
        text = _replaced(text, edit["old_string"], edit["new_string"], bool(edit.get("replace_all")))
    path.write_text(text, encoding="utf-8")
    return Carried("done", f"The file {path} has been updated.", {"filePath": str(path), "originalFile": original})


def _notebook_edit(args: dict[str, Any], ws: Path) -> Carried:
    path = Path(args["notebook_path"])
    original = path.read_text(encoding="utf-8")
    notebook = json.loads(original)
    cells = notebook["cells"]
    index = next(i for i, c in enumerate(cells) if c.get("id") == args.get("cell_id"))
    mode = args.get("edit_mode") or "replace"
    if mode == "delete":
        del cells[index]
    elif mode == "insert":
        cells.insert(index + 1, {"cell_type": args.get("cell_type") or "code", "source": args["new_source"],
                                 "metadata": {}, "outputs": [], "execution_count": None})
    else:
        cells[index]["source"] = args["new_source"]
    path.write_text(json.dumps(notebook, indent=1), encoding="utf-8")
    return Carried("done", f"Updated cell {args.get('cell_id')}", {"notebook_path": str(path)})


def _walk(root: Path) -> list[Path]:
    """Files under `root`, links not followed into (ripgrep's and Claude Code's Glob's default)."""
    found = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != ".git"]
        found += [Path(folder, name) for name in files]
    return sorted(found)


def _grep(args: dict[str, Any], ws: Path) -> Carried:
    """Claude Code's Grep is ripgrep: linear-time, links not followed below the path given.  GNU grep -r does
    the same (ripgrep is not on every machine that runs these tests)."""
    mode = "-n" if args.get("output_mode") == "content" else "-l"
    done = subprocess.run(["grep", "-rIE", mode, "--exclude-dir=.git", "-e", args["pattern"], "--",
                           str(args.get("path") or ws)], capture_output=True, timeout=60)
    if done.returncode > 1:
        raise ValueError(done.stderr.decode(errors="replace").strip())
    text = done.stdout.decode(errors="replace").strip()
    return Carried("done", text or "No matches found", {"mode": args.get("output_mode")})


def _glob(args: dict[str, Any], ws: Path) -> Carried:
    root = Path(args.get("path") or ws)
    pattern = args["pattern"]
    hits = [str(p) for p in _walk(root) if fnmatch.fnmatch(str(p.relative_to(root)), pattern)
            or fnmatch.fnmatch(p.name, pattern.rsplit("/", 1)[-1]) and pattern.startswith("**/")]
    return Carried("done", "\n".join(hits) or "No files found", {"numFiles": len(hits)})


def _ls(args: dict[str, Any], ws: Path) -> Carried:
    names = sorted(os.listdir(args["path"]))
    return Carried("done", "\n".join(f"- {name}" for name in names), {"count": len(names)})


_FILE_TOOLS = {"Read": _read, "Write": _write, "Edit": _edit, "MultiEdit": _edit, "NotebookEdit": _notebook_edit,
               "Grep": _grep, "Glob": _glob, "LS": _ls}
