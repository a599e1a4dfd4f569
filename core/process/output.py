"""A command's output made safe and small: sanitised text, bounded capture, coalesced live chunks.

What a process prints reaches three readers: the agent (capped text), the
journal (a bounded copy) and the window (live chunks).  None of them may
receive live terminal control sequences: a carriage return plus "erase line"
can hide "rm -rf / done" behind "All tests passed", OSC 52 writes the
clipboard, bidi overrides reorder what a reviewer reads.  Everything here is
pure except `Coalescer`, which owns one timer on the loop.
"""

from __future__ import annotations

import asyncio
import codecs
import re
from collections.abc import Callable

SNIFF_BYTES = 8192
HEAD_CHARS = 12_000
TAIL_CHARS = 12_000
"""Head and tail kept for the agent: together with markers they stay under the pipeline's 30,000 chars."""
JOURNAL_BYTES = 1_048_576

_ESCAPES = re.compile(
    r"(?:\x1b\]|\x9d)[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)"  # OSC (title, OSC 8 links, OSC 52 clipboard)
    r"|(?:\x1b[P^_X]|[\x90\x98\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)"  # DCS, SOS, PM, APC strings
    r"|(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?"  # CSI: cursor moves, erase, colours
    r"|\x1b[ -/]*[0-~]?"  # other escapes (charset, keypad, reset), a lone ESC, an unterminated string's opener
)
"""A string sequence needs its terminator to be removed whole: unterminated, only its opener goes, so the
text after it stays visible instead of vanishing to the end of the output."""
_CONTROLS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_INVISIBLE = re.compile(
    "[\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000e0000-\U000e007f]"
)
"""Bidi overrides and isolates, zero-width and other invisible format characters, tag characters."""
_TEXT_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\udc80-\udcff]")
"""Every C0 and C1 control but tab and newline (ESC, CR, BEL, backspace, CSI as \x9b...), and a byte that
was not UTF-8 (as os.fsdecode keeps it in a name, U+DC80 to U+DCFF)."""
_NAME_CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f\udc80-\udcff]")
_NAMED_CONTROLS = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}
MAX_LINE_CHARS = 2000
"""Longest line of a file a tool shows whole (Read, Grep, NotebookRead), as in Claude Code; and the longest
line of a command's output the agent is given, its cut marker included (`cap_lines`, and the wall's filter
of an outside agent's command, core.outside.wall)."""
LINE_MARK_ROOM = 80
"""Room kept for the marker at the end of a command's output line cut to MAX_LINE_CHARS."""

_MAGIC = ((b"\x7fELF", "an ELF executable"), (b"\x89PNG", "a PNG image"), (b"\xff\xd8\xff", "a JPEG image"),
          (b"GIF8", "a GIF image"), (b"%PDF", "a PDF document"), (b"PK\x03\x04", "a zip archive"),
          (b"\x1f\x8b", "gzip data"), (b"BZh", "bzip2 data"), (b"\xfd7zXZ", "xz data"),
          (b"\x28\xb5\x2f\xfd", "zstd data"), (b"SQLite format 3\x00", "an SQLite database"))


def sanitize(text: str) -> str:
    """`text` with no live control characters; what was hidden is shown, never dropped silently.

    A bare carriage return becomes a newline, so a line that would be
    overwritten in a terminal stays visible; invisible format characters
    become visible escapes such as `\\u202e`.
    """
    text = _ESCAPES.sub("", text)
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = _CONTROLS.sub("", text)
    return _INVISIBLE.sub(_visible_escape, text)


def _visible_escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def visible(text: str, *, multiline: bool = True) -> str:
    """`text` as stored (a file's lines, a file's name) with every control character shown as an escape.

    Unlike `sanitize`, which cleans a terminal's output, nothing is removed:
    a file that holds ESC [ 2 J reads as `\\x1b[2J`, so the agent learns
    what the bytes are and the window never receives them live.  Tab and
    newline stay as they are in `multiline` text; in a name (`multiline`
    False) they are escaped too, so a name cannot forge another line.
    """
    controls = _TEXT_CONTROLS if multiline else _NAME_CONTROLS
    return _INVISIBLE.sub(_visible_escape, controls.sub(_control_escape, text))


def _control_escape(match: re.Match[str]) -> str:
    char = match.group()
    code = ord(char) - 0xDC00 if ord(char) >= 0xDC80 else ord(char)  # a stray byte shows as that byte
    return _NAMED_CONTROLS.get(char) or f"\\x{code:02x}"


def cut_line(line: str, limit: int = MAX_LINE_CHARS) -> str:
    """`line` up to `limit` characters; past it, a marker saying how many were left out (as Claude Code cuts)."""
    if len(line) <= limit:
        return line
    return f"{line[:limit]}... [line cut: {len(line) - limit:,} of {len(line):,} characters not shown]"


def cap_lines(text: str, limit: int = MAX_LINE_CHARS, *, tail: bool = False) -> str:
    """A command's output with every line longer than `limit` cut so that, its marker included, it fits: one
    line of 50 MB (a minified bundle, `yes | tr -d '\\n'`) would otherwise fill what the agent is given.
    `tail`: the text is the end of an output, so its first line is the end of a longer one: kept by its end."""
    lines = text.split("\n")
    if all(len(line) <= limit for line in lines):
        return text
    keep = limit - LINE_MARK_ROOM
    capped = [line if len(line) <= limit else
              f"{line[:keep]}... [line cut: {len(line) - keep:,} more characters not shown]" for line in lines]
    if tail and len(lines[0]) > limit:
        capped[0] = f"[line cut: {len(lines[0]) - keep:,} more characters not shown] ...{lines[0][-keep:]}"
    return "\n".join(capped)


def looks_binary(data: bytes) -> bool:
    """Whether `data` is not text: a NUL byte or invalid UTF-8 in its first 8 KB."""
    return _binary(data[:SNIFF_BYTES], complete=len(data) <= SNIFF_BYTES)


def _binary(head: bytes, complete: bool) -> bool:
    if b"\0" in head:
        return True
    try:
        # An incremental decoder tolerates a multi-byte character cut at the end when more follows.
        codecs.getincrementaldecoder("utf-8")().decode(head, final=complete)
    except UnicodeDecodeError:
        return True
    return False


def summarize_binary(total_bytes: int, head: bytes, noun: str = "output") -> str:
    """One line about binary output (or a binary "file"), naming the format when its magic number is known."""
    what = next((name for magic, name in _MAGIC if head.startswith(magic)), "")
    return f"Binary {noun}, {total_bytes:,} bytes{f' ({what})' if what else ''}; not shown."


def decode_head(data: bytes) -> str:
    """UTF-8 text of `data`, dropping a character cut at its end."""
    return codecs.getincrementaldecoder("utf-8")(errors="replace").decode(data, final=False)


def decode_tail(data: bytes) -> str:
    """UTF-8 text of `data`, dropping a character cut at its start."""
    skip = 0
    while skip < min(len(data), 3) and 0x80 <= data[skip] < 0xC0:
        skip += 1
    return data[skip:].decode("utf-8", errors="replace")


class OutputCapture:
    """A process's output in bounded memory: first and last bytes, a journal copy, the total.

    Memory stays at head + tail + journal bytes however much the process
    prints, so `cat /dev/zero` costs the console nothing but time.
    """

    def __init__(self, head_bytes: int = HEAD_CHARS, tail_bytes: int = TAIL_CHARS,
                 journal_bytes: int = JOURNAL_BYTES) -> None:
        self.head_bytes, self.tail_bytes, self.journal_bytes = head_bytes, tail_bytes, journal_bytes
        self._head = bytearray()
        self._tail = bytearray()
        self._journal = bytearray()
        self.total = 0

    def feed(self, chunk: bytes) -> None:
        """Account for one chunk as the process printed it."""
        self.total += len(chunk)
        if len(self._journal) < self.journal_bytes:
            self._journal += chunk[: self.journal_bytes - len(self._journal)]
        room = self.head_bytes - len(self._head)
        if room > 0:
            self._head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self._tail += chunk[-self.tail_bytes:]
            del self._tail[: max(len(self._tail) - self.tail_bytes, 0)]

    @property
    def truncated(self) -> bool:
        """Whether the text for the agent leaves part of the output out."""
        return self.total > len(self._head) + len(self._tail)

    @property
    def binary(self) -> bool:
        head = bytes(self._head[:SNIFF_BYTES])
        return _binary(head, complete=self.total <= len(head))

    def text_for_agent(self) -> str:
        """Head, a marker naming how much was cut, and tail; sanitised, each line capped; or the binary summary."""
        if self.binary:
            return summarize_binary(self.total, bytes(self._head[:64]))
        limit = self.head_bytes + self.tail_bytes  # invisible characters grow when escaped: cap the text too
        if not self.truncated:
            return cap_lines(sanitize(bytes(self._head + self._tail).decode("utf-8", errors="replace"))[:limit])
        head = cap_lines(sanitize(decode_head(bytes(self._head)))[: self.head_bytes])
        tail = cap_lines(sanitize(decode_tail(bytes(self._tail)))[-self.tail_bytes:], tail=True)
        cut = self.total - len(self._head) - len(self._tail)
        return f"{head}\n[... {cut:,} bytes cut ...]\n{tail}"

    def journal_text(self) -> str:
        """The output as the journal keeps it: up to `journal_bytes`, sanitised, with a marker past that."""
        if self.binary:
            return summarize_binary(self.total, bytes(self._head[:64]))
        text = sanitize(decode_head(bytes(self._journal)))
        dropped = self.total - len(self._journal)
        return f"{text}\n[... {dropped:,} more bytes not kept ...]" if dropped > 0 else text

    def __repr__(self) -> str:
        return f"<OutputCapture {self.total:,} bytes{' truncated' if self.truncated else ''}>"


class LiveText:
    """Bytes to sanitised text for live display, chunk by chunk; says once when the output is binary."""

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._sniffed = 0
        self.binary = False

    def feed(self, chunk: bytes) -> str:
        if self.binary:
            return ""
        text = self._decoder.decode(chunk)
        if self._sniffed < SNIFF_BYTES and ("\0" in text or "\ufffd" in text):
            self.binary = True
            return "[binary output, not shown live]\n"
        self._sniffed += len(chunk)
        return sanitize(text)

    def resync(self) -> None:
        """Forget a character cut at the end of the last chunk (the chunks after it were skipped)."""
        self._decoder.reset()


class Coalescer:
    """Live output in few, bounded chunks: at most one call to `sink` per interval, each at most `max_chars`.

    A flood (`yes`) would otherwise publish thousands of events a second;
    what does not fit in an interval's chunk is counted and named in the
    next one ("[... 1,234 characters not shown live ...]").  The agent's copy
    is separate and complete within its own caps.
    """

    def __init__(self, sink: Callable[[str], object], *, interval_s: float = 0.1, max_chars: int = 16_384) -> None:
        self._sink, self.interval_s, self.max_chars = sink, interval_s, max_chars
        self._loop = asyncio.get_running_loop()
        self._buffer: list[str] = []
        self._size = 0
        self._skipped = 0
        self._last_flush = float("-inf")
        self._timer: asyncio.TimerHandle | None = None
        self._closed = False

    def feed(self, text: str) -> None:
        """Queue `text` (already sanitised) for the next chunk."""
        if self._closed or not text:
            return
        room = self.max_chars - self._size
        if room > 0:
            self._buffer.append(text[:room])
            self._size += min(len(text), room)
        self._skipped += max(len(text) - max(room, 0), 0)
        if self._size >= self.max_chars and self._loop.time() - self._last_flush >= self.interval_s:
            self.flush()
        elif self._timer is None:
            # Set after the last flush, so two chunks are never closer than one interval.
            self._timer = self._loop.call_later(self.interval_s, self.flush)

    @property
    def full(self) -> bool:
        """Whether this interval's chunk is full: further output would only be counted."""
        return self._size >= self.max_chars

    def skip(self, amount: int) -> None:
        """Count output not even decoded because the chunk was full."""
        if not self._closed:
            self._skipped += amount

    def flush(self) -> None:
        """Send what is queued now."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if not self._buffer and not self._skipped:
            return
        text = "".join(self._buffer)
        if self._skipped:
            text += f"\n[... about {self._skipped:,} characters not shown live ...]\n"
        self._buffer, self._size, self._skipped = [], 0, 0
        self._last_flush = self._loop.time()
        self._sink(text)

    def close(self) -> None:
        """Flush the rest and stop: later feeds are ignored, no timer is left behind."""
        if not self._closed:
            self.flush()
            self._closed = True

    def __repr__(self) -> str:
        return f"<Coalescer {self._size} chars queued, {self._skipped} skipped{' closed' if self._closed else ''}>"
