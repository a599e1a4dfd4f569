"""Following a growing Claude Code transcript: what reading it costs, against a plain readline loop.

A transcript like the CLI's (its bookkeeping records, request dumps of tens of kilobytes, prompts, texts,
reasoning, tool calls and their results) grows by about a megabyte at a time to `SIZE_MB`; after each
growth it is read from where the last read stopped:
- Belay: `core.transcripts.tail.JsonlTail` and `core.transcripts.claude.ClaudeTranscript` (lines split,
  the CLI's bookkeeping told apart without parsing, the rest parsed into messages and token use);
- the baseline: a plain `readline` loop from the last offset that only splits the lines (no parsing);
- for scale, `json.loads` of every line as well.
Then the same file is followed live through the console's follower (core.outside.transcripts: the reads
on its thread, the records through a real journal), with a 5 ms timer on the event loop: the loop's
longest gap while `SIZE_MB` arrive is what a window's frame budget would see of it.  Last, a transcript of
`WINDOW_MB` grows while a console's window (offscreen, on the qasync loop Qt and asyncio share) shows its
messages as they are read: the GUI thread's longest gap, against the same window while nothing grows.

    python bench/transcript.py          (BELAY_BENCH_GAPS=1: the window's longest gaps, and when, printed too)
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.bus import EventBus  # noqa: E402
from core.ids import AgentId, new_session_id  # noqa: E402
from core.outside.transcripts import Transcripts  # noqa: E402
from core.recorder import Recorder  # noqa: E402
from core.tasks import spawn  # noqa: E402
from core.transcripts.claude import ClaudeTranscript  # noqa: E402
from core.transcripts.tail import JsonlTail  # noqa: E402

SIZE_MB = 64
WINDOW_MB = 300
STEP_BYTES = 1 << 20
ROUNDS = 3


def _record(n: int, rng: random.Random) -> dict[str, object]:
    stamp = f"2026-12-08T00:{n // 600 % 60:02d}:{n // 10 % 60:02d}.000Z"
    base = {"parentUuid": f"p{n}", "isSidechain": False, "uuid": f"u{n}", "timestamp": stamp, "sessionId": "s1",
            "version": "2.1.337", "cwd": "/work/shop"}
    kind = n % 10
    words = " ".join(rng.choice(("the", "config", "loader", "parses", "tests", "fast", "file")) for _ in range(60))
    if kind == 0:
        return {"type": "api-request-blob", "sessionId": "s1", "message": {"role": "system", "content": "x" * 40_000}}
    if kind in (1, 2):
        return {**base, "type": "attachment", "attachment": {"type": "date", "date": "2026-12-08"}}
    if kind == 3:
        return {**base, "type": "user", "message": {"role": "user", "content": words}}
    if kind == 4:
        return {**base, "type": "assistant", "message": {"id": f"msg_{n}", "model": "claude-opus-5-5",
                "content": [{"type": "thinking", "thinking": words, "signature": "s" * 200}],
                "usage": {"input_tokens": 1200, "output_tokens": 80, "cache_read_input_tokens": 5000}}}
    if kind in (5, 6):
        return {**base, "type": "assistant", "message": {"id": f"msg_{n - kind + 4}", "model": "claude-opus-5-5",
                "content": [{"type": "text", "text": words}] if kind == 5 else
                [{"type": "tool_use", "id": f"toolu_{n}", "name": "Edit", "input": {"file_path": "/w/a.py",
                                                                                    "old_string": words}}],
                "usage": {"input_tokens": 1200, "output_tokens": 80, "cache_read_input_tokens": 5000}}}
    return {**base, "type": "user", "message": {"role": "user", "content": [
        {"tool_use_id": f"toolu_{n - 1}", "type": "tool_result", "content": "y" * 3_000}]}}


def transcript_chunks(size_mb: int) -> list[bytes]:
    """The file's growth, about a megabyte at a time (a chunk may end mid-line, as the CLI's writes can)."""
    data = b"".join(transcript_stream(size_mb))
    return [data[i:i + STEP_BYTES] for i in range(0, len(data), STEP_BYTES)]


def transcript_stream(size_mb: int) -> Iterator[bytes]:
    """The same growth made as it is written (a file of hundreds of megabytes is never held whole)."""
    rng = random.Random(38)
    data, n, written = bytearray(), 0, 0
    while written + len(data) < size_mb << 20:
        data += json.dumps(_record(n, rng), separators=(",", ":")).encode() + b"\n"
        n += 1
        if len(data) >= STEP_BYTES:
            written += len(data)
            yield bytes(data)
            data.clear()
    if data:
        yield bytes(data)


def readline_loop(path: Path) -> Callable[[], int]:
    """The baseline: a readline loop from the last offset, a cut line read again when it is finished."""
    offset = 0

    def read() -> int:
        nonlocal offset
        lines = 0
        with open(path, "rb") as file:
            file.seek(offset)
            for line in iter(file.readline, b""):
                if not line.endswith(b"\n"):
                    break
                offset += len(line)
                lines += 1
        return lines
    return read


def readline_json(path: Path) -> Callable[[], int]:
    """The baseline, with `json.loads` of every line (for scale: what parsing everything would cost)."""
    offset = 0

    def read() -> int:
        nonlocal offset
        lines = 0
        with open(path, "rb") as file:
            file.seek(offset)
            for line in iter(file.readline, b""):
                if not line.endswith(b"\n"):
                    break
                offset += len(line)
                json.loads(line)
                lines += 1
        return lines
    return read


def belay(path: Path) -> Callable[[], int]:
    tail, reader = JsonlTail(path), ClaudeTranscript("a1")

    def read() -> int:
        found = tail.read()
        for line in found.lines:
            reader.feed(line)
        messages, tokens, _ = reader.take()
        return len(messages) + len(tokens)
    return read


def follow(chunks: list[bytes], make: Callable[[Path], Callable[[], int]], folder: Path) -> float:
    """Seconds spent reading while the file grows chunk by chunk (the writing is not counted)."""
    path = folder / "t.jsonl"
    path.unlink(missing_ok=True)
    read, spent = make(path), 0.0
    with open(path, "ab") as out:
        for chunk in chunks:
            out.write(chunk)
            out.flush()
            started = time.perf_counter()
            read()
            spent += time.perf_counter() - started
    return spent


async def live_gap(chunks: list[bytes], folder: Path, *, followed: bool = True) -> tuple[float, int]:
    """The loop's longest gap (ms) while the follower reads the growing file, and the messages recorded;
    `followed` False: the same loop, the same writes, nothing followed (the baseline)."""
    path = folder / "live" / "t.jsonl"
    path.parent.mkdir(exist_ok=True)
    path.write_bytes(b"")
    bus = EventBus()
    recorded = 0

    def count(event: object) -> None:
        nonlocal recorded
        recorded += len(getattr(event, "messages", ()))
    bus.listen(count)
    recorder = await Recorder.open(folder / "journal.sqlite3", bus, new_session_id(), folder)
    transcripts = Transcripts(recorder)
    await recorder.session()
    if followed:
        transcripts.follow(path, ClaudeTranscript("a1"))
    loop, gaps, ticking = asyncio.get_running_loop(), [0.0], True

    async def tick() -> None:
        last = loop.time()
        while ticking:
            await asyncio.sleep(0.005)
            now = loop.time()
            gaps.append(now - last - 0.005)
            last = now
    ticker = spawn(tick(), "the loop's ticker")
    try:
        with open(path, "ab") as out:
            for chunk in chunks:
                await asyncio.to_thread(out.write, chunk)  # the agent writes (on its own thread of control)
                out.flush()
                await asyncio.sleep(0.01)
        await transcripts.catch_up(AgentId("a1"))
    finally:
        ticking = False
        await ticker
        await transcripts.aclose()
        await recorder.close()
    return max(gaps) * 1000, recorded


async def window_gap(folder: Path, size_mb: int, *, grows: bool = True) -> tuple[float, int]:
    """The GUI thread's longest gap (ms) while a transcript of `size_mb` grows under a console's open window, and
    the messages its timeline shows; `grows` False: the same window, the same time, nothing written."""
    from core import Console
    from gui.window.runtime.collector import MainThreadCollector
    from gui.window.workspace.window import MainWindow

    workspace = folder / f"ws-{grows}"
    workspace.mkdir()
    path = folder / f"window-{grows}.jsonl"
    path.write_bytes(b"")
    console = Console(workspace, state_dir=folder / f"state-{grows}")
    await console.open()
    window = MainWindow(console)
    window.start()
    window.resize(1024, 640)
    window.show()
    MainThreadCollector.settle()  # as `belay` does once its window is up
    loop, gaps, ticking = asyncio.get_running_loop(), [0.0], True
    moments: list[float] = [0.0]

    async def tick() -> None:
        last = loop.time()
        while ticking:
            await asyncio.sleep(0.005)
            now = loop.time()
            gaps.append(now - last - 0.005)
            moments.append(now)
            last = now
    try:
        agent = await console.start_agent("claude-code bench", "claude-code")
        assert console.outside is not None
        console.outside.transcripts.follow(path, ClaudeTranscript(agent.agent_id))
        await asyncio.sleep(0.5)
        ticker = spawn(tick(), "the GUI thread's ticker")
        stream = transcript_stream(size_mb)
        with open(path, "ab") as out:
            while (chunk := await asyncio.to_thread(next, stream, b"")):  # made off the GUI thread, as an agent would
                if grows:
                    await asyncio.to_thread(out.write, chunk)
                    out.flush()
                await asyncio.sleep(0.01)
        await console.outside.transcripts.catch_up(agent.agent_id, steps=None)
        await asyncio.sleep(1.0)  # the last batch shown
        ticking = False
        await ticker
        if os.environ.get("BELAY_BENCH_GAPS"):
            start = moments[1] if len(moments) > 1 else 0.0
            print(sorted(((round(g * 1000), round(m - start, 2)) for g, m in zip(gaps, moments)), reverse=True)[:8])
        return max(gaps) * 1000, len(window.model.timeline.messages)
    finally:
        await window.tasks.aclose()
        await console.close()
        window.close()


def on_the_window(folder: Path, size_mb: int) -> tuple[float, float, int]:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    os.environ["BELAY_STATE_DIR"], os.environ["BELAY_CONFIG_DIR"] = str(folder / "state"), str(folder / "config")
    from PySide6.QtWidgets import QApplication

    from gui.window.runtime.collector import MainThreadCollector
    from gui.window.runtime.loop import EventLoop

    app = QApplication.instance() or QApplication([])
    collector = MainThreadCollector(app)  # the cycle collector on the GUI thread, in steps, as in the app
    collector.start()
    try:
        with asyncio.Runner(loop_factory=lambda: EventLoop(app)) as runner:
            gap, shown = runner.run(window_gap(folder, size_mb))
            quiet, _ = runner.run(window_gap(folder, size_mb, grows=False))
    finally:
        collector.stop()
    return gap, quiet, shown


def main() -> None:
    chunks = transcript_chunks(SIZE_MB)
    mb = sum(map(len, chunks)) / (1 << 20)
    print(f"transcript: {mb:.0f} MB in {len(chunks)} growths", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        times: dict[str, list[float]] = {"belay": [], "readline": [], "readline_json": []}
        for _ in range(ROUNDS):
            for name, make in (("readline", readline_loop), ("belay", belay), ("readline_json", readline_json)):
                times[name].append(follow(chunks, make, folder))
        best = {name: statistics.median(values) for name, values in times.items()}
        for name, seconds in best.items():
            print(f"{name}: {seconds:.2f} s, {seconds / mb * 1000:.1f} ms/MB", flush=True)
        gaps, bare = [], []
        for _ in range(ROUNDS):
            gap, recorded = asyncio.run(live_gap(chunks, folder))
            gaps.append(gap)
            bare.append(asyncio.run(live_gap(chunks, folder, followed=False))[0])
        gap, alone = statistics.median(gaps), statistics.median(bare)
    per_mb = best["belay"] / mb * 1000
    print(f"followed live: {recorded} messages recorded", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        window, quiet, shown = on_the_window(Path(tmp), WINDOW_MB)
    print(f"window: {shown} messages shown from {WINDOW_MB} MB")
    print(f"RESULT transcript_read_per_mb = {per_mb:.1f} ms/MB ({best['belay'] / best['readline']:.2f} x a plain "
          f"readline loop from the last offset, {best['readline'] / mb * 1000:.1f} ms/MB; json.loads of every line: "
          f"{best['readline_json'] / mb * 1000:.1f} ms/MB)")
    print(f"RESULT transcript_follow_longest_loop_gap = {gap:.1f} ms (while {mb:.0f} MB arrived live, read on the "
          f"follower's thread and journaled; the same loop and writes with nothing followed: {alone:.1f} ms; "
          "a 60 Hz frame is 16.7 ms)")
    print(f"RESULT transcript_window_longest_gui_gap = {window:.1f} ms (a {WINDOW_MB} MB transcript growing under an "
          f"open window that shows its {shown} messages; the same window while nothing grows: {quiet:.1f} ms)")


if __name__ == "__main__":
    main()
