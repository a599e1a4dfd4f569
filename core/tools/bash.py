"""The Bash tool and its background-shell companions BashOutput and KillShell, as in Claude Code.

A command runs as `bash --noprofile --norc -c <command>` in the workspace
root with stdin closed, stdout and stderr on one pipe, a filtered
environment (`core.process.environment`), resource limits (address space,
file size, no core dumps) and, when bubblewrap works here, inside its
sandbox (`core.process.sandbox`), which hides Belay's state and settings.
The limits are applied by `prlimit(1)` placed in the argv, or a short
Python exec wrapper when prlimit is missing, rather than a `preexec_fn`:
no Python code runs between fork and exec in a process that has Qt and
worker threads.  The number of processes is capped the same way, by an
argv prefix: the command joins a pids cgroup of its own, or (without one)
gets RLIMIT_NPROC in the sandbox's user namespace (`core.process.limits`),
so a fork bomb stops at `max_processes`.

The tool keeps its own per-call timeout (`timeout_s = None` for the
pipeline): on timeout the whole tree is killed and the call fails with
`timeout`, its message carrying the output produced until then.  A non-zero
exit is not a failure: the agent sees "Exit code N".  Hitting a resource
limit fails with `resource-limit`, output attached.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import signal
import sys
import tempfile
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from core.errors import ErrorKind, ToolError
from core.paths import Workspace
from core.process.environment import build_env, make_non_dumpable, refusal
from core.process.limits import PidsGroup, ProcessLimit, detect_limit, nproc_for
from core.process.output import Coalescer, LiveText, OutputCapture
from core.process.overlay import Layer
from core.process.sandbox import SandboxInfo, credential_paths, detect_sandbox, wrap
from core.process.shells import Launch, ShellManager, ShellProcess, discard, exit_code
from core.settings import config_root, state_root
from core.tasks import shielded, spawn
from core.tools.base import Annotations, RunTool, ToolArgs, ToolContext, ToolOutput
from core.tools.grep import find_rg
from core.tools.names import ToolName

MAX_COMMAND_BYTES = 128 * 1024
"""MAX_ARG_STRLEN on Linux: execve refuses a longer single argument."""
MAX_TIMEOUT_MS = 600_000
_MEMORY_WORDS = re.compile(r"MemoryError|Cannot allocate memory|std::bad_alloc|out of memory", re.IGNORECASE)
_LIMITS_PY = ("import os, resource as r, sys\n"
              "for k, v in ((r.RLIMIT_AS, sys.argv[1]), (r.RLIMIT_FSIZE, sys.argv[2]), (r.RLIMIT_CORE, '0'),\n"
              "             (r.RLIMIT_NPROC, sys.argv[3])):\n"
              "    v = int(v)\n"
              "    if v >= 0 or k != r.RLIMIT_NPROC: v = r.RLIM_INFINITY if v < 0 else v; r.setrlimit(k, (v, v))\n"
              "os.execv(sys.argv[4], sys.argv[4:])")

__all__ = ["BashArgs", "BashOutputTool", "BashSettings", "BashTool", "KillShellTool", "no_preview"]


class BashSettings(BaseModel):
    """How agent commands run; the console builds one from its settings."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    default_timeout_s: float = Field(default=120.0, gt=0)
    """Timeout when the call gives none."""
    max_timeout_s: float = Field(default=600.0, gt=0)
    """Upper bound for a call's timeout."""
    network: bool = True
    """Whether sandboxed commands may use the network (on by default: installs and fetches just work)."""
    env_passthrough: tuple[str, ...] = ()
    """Extra host variables commands may see; names that look like secrets or startup hooks are refused."""
    sandbox: Literal["auto", "off"] = "auto"
    """auto: bubblewrap when it works here; off: process group and /proc sweep only."""
    memory_limit_mb: int = Field(default=4096, ge=0)
    """Address-space limit (RLIMIT_AS) per process; 0 turns it off (some runtimes reserve more)."""
    file_size_limit_mb: int = Field(default=1024, ge=0)
    """Largest file a command may write (RLIMIT_FSIZE); 0 turns it off."""
    kill_grace_s: float = Field(default=2.0, ge=0)
    """Between SIGTERM and SIGKILL when a command is stopped."""
    drain_timeout_s: float = Field(default=2.0, ge=0)
    """How long to keep reading output after the command exits (orphans may hold the pipe)."""
    journal_output_bytes: int = Field(default=1_048_576, ge=0)
    """How much of a command's output is kept for the journal."""
    hidden_paths: tuple[str, ...] = ()
    """Directories sandboxed commands must not see, besides the console's state and settings directories."""
    effects: Literal["apply", "preview", "preview-unknown"] = "apply"
    """apply: a command changes the workspace as it runs (each change recorded, undoable); preview: it runs in a
    private layer and a person chooses which of its changes land; preview-unknown: preview the commands the policy
    cannot prove read-only (those proven read-only change nothing either way).  Background shells always apply."""
    max_processes: int = Field(default=256, ge=16, le=65536)
    """Processes (and threads) one command may have at once: a fork bomb stops there, and so does a build
    that needs more (raise it then)."""

    def overlaid(self, overrides: dict[str, Any], timeout_s: float | None) -> tuple[BashSettings, str | None]:
        """These settings under the user's `[bash]` table and `[timeouts] Bash = N` (the default when a
        call names none; 0: the maximum).  A bad value is reported, and these settings kept."""
        overrides = dict(overrides)
        if timeout_s is not None:
            overrides.setdefault("default_timeout_s", timeout_s or self.max_timeout_s)
        if not overrides:
            return self, None
        try:
            return BashSettings.model_validate({**self.model_dump(), **overrides}), None
        except ValidationError as e:
            why = "; ".join(f"{'.'.join(map(str, err['loc'])) or 'bash'}: {err['msg']}" for err in e.errors())
            return self, f"user settings [bash]: {why}; the defaults are used"

    @field_validator("env_passthrough")
    @classmethod
    def _no_secrets(cls, names: tuple[str, ...]) -> tuple[str, ...]:
        problems = [p for p in map(refusal, names) if p]
        if problems:
            raise ValueError("; ".join(problems))
        return names


class BashArgs(ToolArgs):
    model_config = ConfigDict(use_attribute_docstrings=True)

    command: str
    """The bash command to run (in the workspace root, stdin closed)."""
    timeout: int | None = None
    """Timeout in milliseconds (at most 600000; default 120000)."""
    description: str | None = None
    """What the command does, in 5-10 words, for the person watching."""
    run_in_background: bool = False
    """Run it in the background; read its output later with BashOutput."""

    @field_validator("command")
    @classmethod
    def _runnable(cls, command: str) -> str:
        if len(command) > MAX_COMMAND_BYTES or len(command.encode("utf-8", "surrogatepass")) > MAX_COMMAND_BYTES:
            raise ToolError(ErrorKind.TOO_LARGE, f"the command is {len(command):,} characters long; a command "
                            f"can be at most {MAX_COMMAND_BYTES:,} bytes (the system's limit for one argument)",
                            "Write long scripts to a file with Write, then run the file.")
        if "\0" in command:
            raise ValueError("the command contains a NUL byte, which no program can receive")
        if not command.strip():
            raise ValueError("the command is empty")
        return command

    @field_validator("timeout")
    @classmethod
    def _positive_clamped(cls, timeout: int | None) -> int | None:
        if timeout is not None and timeout <= 0:
            raise ValueError("the timeout must be a positive number of milliseconds")
        return None if timeout is None else min(timeout, MAX_TIMEOUT_MS)


class BashTool(RunTool[BashArgs]):
    name = ToolName.BASH
    typical_s = 1.0
    """A command: builds and tests take longer, lookups less; the journal's history of the same command word says."""
    description = (
        "Run a bash command in the workspace root and return its output (stdout and stderr merged). "
        "stdin is closed and there is no terminal: interactive programs get no input, editors and pagers "
        "are disabled. timeout is in milliseconds (default 120000, at most 600000); on timeout every process "
        "the command started is killed. Processes left running in the background are killed when the command "
        "ends: use run_in_background for servers and long jobs, then BashOutput and KillShell. Output over "
        "about 24,000 characters is cut in the middle. A non-zero exit status is reported as 'Exit code N'."
    )
    Args = BashArgs
    annotations = Annotations(read_only=False, destructive=True, open_world=True)
    timeout_s = None
    own_timeout = True
    captures_workspace = True

    def __init__(self, settings: BashSettings, shells: ShellManager) -> None:
        self.settings, self.shells = settings, shells
        self._hardened = False

    def summary(self, args: BashArgs, workspace: Workspace) -> str:
        first = args.command.strip().splitlines()[0]
        return first if len(first) <= 80 else first[:79] + "…"

    def with_limit(self, args: BashArgs, seconds: float) -> BashArgs:
        limit = min(max(round(seconds * 1000), 1), args.timeout or MAX_TIMEOUT_MS)
        return args.model_copy(update={"timeout": limit})

    def layerable(self, args: BashArgs) -> bool:
        return not args.run_in_background  # a background shell outlives its call, and its layer

    def previews(self, args: BashArgs, asked: bool = False) -> bool:
        return (asked or self.settings.effects != "apply") and no_preview(args) is None

    async def sandbox_info(self) -> SandboxInfo:
        """What commands run in: bubblewrap when settings allow and it works here (probed once), and what
        limits their processes (`processes`)."""
        info, limit = await asyncio.to_thread(self.containment)
        return info.model_copy(update={"processes": limit.text()})

    def hidden(self) -> list[Path]:
        """What a sandboxed command must not see (blocking: looks for the credential stores): the console's state
        and settings, the user's credential stores, and the `hidden_paths` setting."""
        return [state_root(), config_root(), *credential_paths(), *map(Path, self.settings.hidden_paths)]

    def containment(self) -> tuple[SandboxInfo, ProcessLimit]:
        """The sandbox and the process limit (blocking: both are probed, once per process)."""
        if self.settings.sandbox == "off":
            info = SandboxInfo(available=False, kind="none",
                               detail="sandbox turned off in settings: commands run in their own process group")
        else:
            info = detect_sandbox()
        return info, detect_limit(self.settings.max_processes, bwrap=info.executable if info.available else None)

    async def run(self, args: BashArgs, ctx: ToolContext) -> ToolOutput:
        if not self._hardened:
            make_non_dumpable()  # the console does this at start; be certain before the first command
            self._hardened = True
        info, limit = await asyncio.to_thread(self.containment)
        launch = await self._prepare(args.command, ctx.workspace.root, info, limit, ctx.layer)
        if args.run_in_background:
            assert ctx.layer is None, "a background shell outlives its call: it never runs in a layer"
            shell_id = await self.shells.start(launch, command=args.command, call_id=ctx.call_id)
            return ToolOutput(f"Started background shell {shell_id}; read its output with BashOutput "
                              f"(bash_id={shell_id!r}) and stop it with KillShell.",
                              {"shell_id": shell_id, "sandbox": info.kind})
        timeout_s = min(args.timeout / 1000 if args.timeout else self.settings.default_timeout_s,
                        self.settings.max_timeout_s)
        return await self._foreground(launch, timeout_s, ctx, info)

    async def _prepare(self, command: str, workspace: Path, info: SandboxInfo, limit: ProcessLimit,
                       layer: Layer | None = None) -> Launch:
        """`_launch` off the loop; if the call is cancelled meanwhile, what it made is removed."""
        task = spawn(asyncio.to_thread(self._launch, command, workspace, info, limit, layer), "prepare a command")
        try:
            return await shielded(task)
        except asyncio.CancelledError:
            if not task.cancelled() and task.exception() is None:
                discard(task.result())  # an empty directory and an empty cgroup: instant
            raise

    def _launch(self, command: str, workspace: Path, info: SandboxInfo, limit: ProcessLimit,
                layer: Layer | None = None) -> Launch:
        """The argv and environment for `command` (blocking: creates the private temp dir and pids cgroup), in
        `layer` when it runs in preview (the layer outside the sandbox: the sandbox binds the layered workspace)."""
        tmp = Path(tempfile.mkdtemp(prefix="belay-cmd-"))
        env = build_env(workspace, tmpdir="/tmp" if info.available else str(tmp),
                        passthrough=self.settings.env_passthrough)
        bash = shutil.which("bash", path=env["PATH"]) or "/bin/bash"
        argv = [*self._limits(env["PATH"], nproc_for(limit) or -1), bash, "--noprofile", "--norc", "-c", command]
        argv = wrap(argv, workspace=workspace, tmp=tmp, network=self.settings.network, info=info,
                    hide=self.hidden(), own_users=limit.kind == "rlimit")
        if layer is not None:
            argv = layer.wrap(argv)
        group = self._group(limit, tmp)
        return Launch(tuple([*group.join_argv(), *argv] if group else argv), env, workspace, tmp, info.available,
                      self.settings.kill_grace_s, self.settings.drain_timeout_s, group)

    @staticmethod
    def _group(limit: ProcessLimit, tmp: Path) -> PidsGroup | None:
        """The command's pids cgroup when that is how processes are limited here; never run without it."""
        if limit.kind != "cgroup":
            return None
        try:
            return PidsGroup.create(limit)
        except OSError as e:
            shutil.rmtree(tmp, ignore_errors=True)
            raise ToolError(ErrorKind.SYSTEM, f"could not create the command's pids cgroup in {limit.parent}: "
                            f"{e.strerror or e}", "Check the cgroup filesystem; the command was not run.") from None

    def _limits(self, path: str, nproc: int) -> list[str]:
        mem = self.settings.memory_limit_mb * 1024 * 1024 or -1
        fsize = self.settings.file_size_limit_mb * 1024 * 1024 or -1
        prlimit = shutil.which("prlimit", path=path)
        if prlimit is None:
            return [sys.executable, "-I", "-S", "-c", _LIMITS_PY, str(mem), str(fsize), str(nproc)]
        shown = [f"--as={mem}" if mem > 0 else "--as=unlimited", f"--fsize={fsize}" if fsize > 0 else
                 "--fsize=unlimited", *([f"--nproc={nproc}"] if nproc > 0 else [])]
        return [prlimit, *shown, "--core=0", "--"]

    async def _foreground(self, launch: Launch, limit: float, ctx: ToolContext, info: SandboxInfo) -> ToolOutput:
        capture = OutputCapture(journal_bytes=self.settings.journal_output_bytes)
        live, coalescer = LiveText(), Coalescer(ctx.emit_output) if ctx.emit_output else None

        def on_output(chunk: bytes) -> None:
            capture.feed(chunk)
            if coalescer is None:
                return
            if coalescer.full:
                coalescer.skip(len(chunk))
                live.resync()
            else:
                coalescer.feed(live.feed(chunk))

        process = ShellProcess(launch, on_output)
        oom_before = oom_kills()
        try:
            await process.start()
        except OSError as e:
            await asyncio.to_thread(discard, launch)
            raise ToolError(ErrorKind.SYSTEM, f"could not start bash: {e.strerror or e}",
                            "Check that bash is installed.") from None
        timed_out = False
        with self.shells.foreground(process):
            try:
                async with asyncio.timeout(limit):
                    await process.wait()
            except TimeoutError:
                timed_out = True
            finally:
                await shielded(process.close())
                if coalescer is not None:
                    coalescer.close()
        oom = oom_kills() > oom_before
        return self._result(process, capture, info, limit if timed_out else None, oom)

    def _result(self, process: ShellProcess, capture: OutputCapture, info: SandboxInfo,
                timed_out_after: float | None, oom: bool) -> ToolOutput:
        text = capture.text_for_agent()
        if timed_out_after is not None:
            raise ToolError(ErrorKind.TIMEOUT, f"the command timed out after {timed_out_after:g} s and was stopped, "
                            f"with every process it started. Output until then:\n{text or '(no output)'}",
                            "Use run_in_background for long jobs, or a larger timeout (ms, at most 600000).")
        code = exit_code(process.returncode)
        problem = self._limit_hit(code, text, oom, process.refused_processes)
        if problem:
            raise ToolError(ErrorKind.RESOURCE_LIMIT, f"the command {problem} (exit code {code}). "
                            f"Output:\n{text or '(no output)'}", "Use less memory, disk or processes, or raise "
                            "the limit in Belay's settings ([bash] in settings.toml).")
        shown = text or "(no output)"
        if code:
            shown = f"{text.rstrip(chr(10))}\nExit code {code}" if text else f"Exit code {code}"
        data: dict[str, Any] = {"exit_code": code, "output_bytes": capture.total, "truncated": capture.truncated,
                                "sandbox": info.kind}
        return ToolOutput(shown, data, full_text=capture.journal_text())

    def _limit_hit(self, code: int | None, text: str, oom: bool, refused: int) -> str | None:
        fsize, mem = self.settings.file_size_limit_mb, self.settings.memory_limit_mb
        if refused:
            return (f"reached the process limit ({self.settings.max_processes} processes at once): "
                    f"{refused} new processes were refused, and every process it started was killed")
        if fsize and code == 128 + signal.SIGXFSZ:
            return f"exceeded the file size limit ({fsize} MB)"
        if code == 128 + signal.SIGKILL and oom:
            return "was killed by the kernel for running out of memory"
        if mem and code and _MEMORY_WORDS.search(text[-4000:]):
            return f"exceeded the memory limit ({mem} MB)"
        return None


def no_preview(args: BashArgs) -> str | None:
    """Why a command runs as it is, never in preview: it outlives its call, or it looks like a server or a
    watcher, whose effects are wanted at once (a layer would hold them until it is stopped)."""
    if args.run_in_background:
        return "a background shell outlives its call, so it runs as it is: no preview"
    live = _LIVE.search(args.command) or _WATCH.search(args.command)
    if live is not None:
        return f"`{live.group(0).strip()}` looks like a server or a watcher, whose effects are wanted at once: it " \
               "runs as it is, no preview"
    return None


_LIVE = re.compile(
    r"(?:^|[;&|(]\s*|\s)(?:"
    r"(?:npm|pnpm|yarn|bun)\s+(?:run\s+)?(?:dev|start|serve|watch)\b"
    r"|python3?\s+-m\s+http\.server\b|manage\.py\s+runserver\b|flask\s+run\b|uvicorn\b|gunicorn\b"
    r"|rails\s+s(?:erver)?\b|nodemon\b|next\s+dev\b|vite(?:\s+dev)?\s*(?:$|[;&|])|webpack\s+(?:serve\b|.*--watch\b)"
    r"|jupyter\s+(?:notebook|lab)\b|tail\s+-[a-zA-Z]*[fF]\b|docker(?:-compose|\s+compose)\s+up\b(?!.*\s-d\b)"
    r"|\S+\s+--watch\b)")
"""Commands that run until stopped and whose effects are wanted as they happen."""
_WATCH = re.compile(r"(?:^|[;&|(])\s*watch\s+\S")
"""`watch` as a command, not a word in one."""


def oom_kills() -> int:
    """How many processes the kernel's OOM killer has killed in this process's cgroup (cgroup v2), or 0.

    Two small reads from procfs and sysfs, which never wait for a disk: fine on the loop thread.
    """
    try:
        with open("/proc/self/cgroup", encoding="utf-8") as f:
            group = next((line.split("::", 1)[1].strip() for line in f if line.startswith("0::")), None)
        if group is None:
            return 0
        with open(f"/sys/fs/cgroup{group}/memory.events", encoding="utf-8") as f:
            return next((int(line.split()[1]) for line in f if line.startswith("oom_kill ")), 0)
    except (OSError, ValueError):
        return 0


class BashOutputArgs(ToolArgs):
    model_config = ConfigDict(use_attribute_docstrings=True)

    bash_id: str
    """The id of the background shell (e.g. "bash_1")."""
    filter: str | None = None
    """Only return new output lines matching this regular expression (ripgrep syntax)."""


class BashOutputTool(RunTool[BashOutputArgs]):
    name = ToolName.BASH_OUTPUT
    description = (
        "Read the new output of a background shell started by Bash with run_in_background, with its status "
        "(running, completed, failed, killed) and exit code. Each call returns only output printed since the "
        "last call. filter keeps only the lines matching a regular expression (the others are discarded)."
    )
    Args = BashOutputArgs
    annotations = Annotations(read_only=True, destructive=False)

    def __init__(self, shells: ShellManager) -> None:
        self.shells = shells

    def summary(self, args: BashOutputArgs, workspace: Workspace) -> str:
        return args.bash_id + (f" filtered by {args.filter!r}" if args.filter else "")

    async def run(self, args: BashOutputArgs, ctx: ToolContext) -> ToolOutput:
        got = self.shells.read(args.bash_id)
        output = await filter_lines(got.output, args.filter) if args.filter is not None else got.output
        state = got.status if got.exit_code is None else f"{got.status}, exit code {got.exit_code}"
        text = f"Shell {args.bash_id} ({state}). " + (f"New output:\n{output}" if output else "No new output.")
        return ToolOutput(text, {"shell_id": args.bash_id, "status": got.status, "exit_code": got.exit_code})


async def filter_lines(text: str, pattern: str) -> str:
    """Lines of `text` matching `pattern`, by ripgrep: linear time, so an agent's regex cannot hang the console."""
    rg = find_rg()
    if rg is None:
        raise ToolError(ErrorKind.SYSTEM, "ripgrep is missing, so output cannot be filtered",
                        "Read the output without a filter.")
    proc = await asyncio.create_subprocess_exec(
        rg, "--no-config", "--color=never", "--regexp", pattern, stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, start_new_session=True,
        env={"PATH": os.defpath, "LC_ALL": "C.UTF-8"})
    try:
        async with asyncio.timeout(10):
            out, err = await proc.communicate(text.encode())
    finally:
        if proc.returncode is None:
            proc.kill()
            await shielded(proc.wait())
    if proc.returncode not in (0, 1):
        why = err.decode(errors="replace").strip().splitlines()
        raise ToolError(ErrorKind.INVALID_ARGS, f"filter {pattern!r} is not a valid regular expression"
                        + (f": {why[-1]}" if why else ""), "Escape special characters such as ( [ { with \\.")
    return out.decode(errors="replace").rstrip("\n")


class KillShellArgs(ToolArgs):
    model_config = ConfigDict(use_attribute_docstrings=True)

    shell_id: str
    """The id of the background shell to stop (e.g. "bash_1")."""


class KillShellTool(RunTool[KillShellArgs]):
    name = ToolName.KILL_SHELL
    description = "Stop a background shell started by Bash with run_in_background, and every process it started."
    Args = KillShellArgs
    annotations = Annotations(read_only=False, destructive=False, idempotent=True)

    def __init__(self, shells: ShellManager) -> None:
        self.shells = shells

    def summary(self, args: KillShellArgs, workspace: Workspace) -> str:
        return args.shell_id

    async def run(self, args: KillShellArgs, ctx: ToolContext) -> ToolOutput:
        before = await self.shells.kill(args.shell_id)
        text = (f"Killed background shell {args.shell_id}." if before == "running"
                else f"Shell {args.shell_id} had already ended ({before}).")
        return ToolOutput(text, {"shell_id": args.shell_id, "status": "killed" if before == "running" else before})
