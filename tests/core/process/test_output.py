"""Output: sanitising terminal tricks, bounded capture with head and tail, coalesced live chunks."""

from __future__ import annotations

import asyncio

from core.process.output import (
    MAX_LINE_CHARS,
    Coalescer,
    LiveText,
    OutputCapture,
    cut_line,
    looks_binary,
    sanitize,
    summarize_binary,
    visible,
)


def test_cr_and_erase_line_cannot_hide_earlier_text() -> None:
    shown = sanitize("rm -rf / done\r\033[2K\033[1A\033[2KAll tests passed\n")
    assert "rm -rf / done" in shown and "All tests passed" in shown
    assert "\033" not in shown and "\r" not in shown


def test_osc52_clipboard_and_osc8_links_are_removed() -> None:
    shown = sanitize("a\033]52;c;Y3VybCBldmlsfHNo\007b \033]8;;https://evil.invalid\033\\click\033]8;;\033\\ c")
    assert shown == "ab click c"


def test_an_unterminated_string_sequence_does_not_swallow_the_rest() -> None:
    assert sanitize("ok\033]0;rm -rf ~ \033[31mdone\n") == "ok0;rm -rf ~ done\n"


def test_csi_colours_c0_c1_and_lone_escapes_are_removed() -> None:
    assert sanitize("\033[1;31mred\033[0m\x07\x08\x9b2J\x1bcx\x1b") == "red" + "x"
    assert sanitize("tab\tand\nnewline\r\n") == "tab\tand\nnewline\n"


def test_bidi_and_invisible_characters_become_visible_escapes() -> None:
    shown = sanitize("safe\u202eexe.txt\u200b\ufeff\u2066x\u2028\U000e0041")
    assert shown == "safe\\u202eexe.txt\\u200b\\ufeff\\u2066x\\u2028\\U000e0041"


def test_ordinary_unicode_is_kept() -> None:
    assert sanitize("héllo wörld — ✓ 日本") == "héllo wörld — ✓ 日本"


def test_binary_detection_and_summary() -> None:
    assert looks_binary(b"abc\0def")
    assert looks_binary(b"\xff\xfe not utf-8")
    assert not looks_binary("é".encode() * 5000)  # a character cut at 8 KB is not binary
    assert summarize_binary(5_000_000, b"\x89PNG\r\n") == "Binary output, 5,000,000 bytes (a PNG image); not shown."
    assert summarize_binary(12, b"\0\1") == "Binary output, 12 bytes; not shown."


def test_capture_keeps_head_and_tail_with_a_marker() -> None:
    capture = OutputCapture(head_bytes=100, tail_bytes=100, journal_bytes=1000)
    capture.feed(b"START" + b"x" * 10_000)
    for _ in range(100):
        capture.feed(b"m" * 50_000)
    capture.feed(b"y" * 10_000 + b"END")
    text = capture.text_for_agent()
    assert text.startswith("START") and text.endswith("END")
    assert "[... 5,019,808 bytes cut ...]" in text
    assert len(text) < 300 and capture.truncated and capture.total == 5_020_008
    assert capture.journal_text().startswith("START" + "x" * 995)
    assert "more bytes not kept" in capture.journal_text()


def test_capture_of_small_output_is_whole_and_sanitised() -> None:
    capture = OutputCapture(head_bytes=10, tail_bytes=10)
    for piece in (b"0123456", b"789\033[2Kabcdef"):
        capture.feed(piece)
    assert capture.text_for_agent() == "0123456789abcdef" and not capture.truncated


def test_capture_does_not_split_a_character_at_the_cut() -> None:
    capture = OutputCapture(head_bytes=5, tail_bytes=5)
    capture.feed("ééé".encode() + b"-" * 100 + "ééé".encode())
    text = capture.text_for_agent()
    assert "\ufffd" not in text and text.startswith("éé") and text.endswith("éé")


def test_capture_summarises_binary_output() -> None:
    capture = OutputCapture()
    capture.feed(b"\0" * 3_000_000)
    assert capture.text_for_agent() == "Binary output, 3,000,000 bytes; not shown."


def test_live_text_sanitises_and_gives_up_on_binary() -> None:
    live = LiveText()
    assert live.feed("é".encode()[:1]) == ""
    assert live.feed("é".encode()[1:] + b"\033[31m!") == "é!"
    assert live.feed(b"\0\0") == "[binary output, not shown live]\n"
    assert live.feed(b"more") == ""


def test_coalescer_batches_small_pieces_into_one_chunk_per_interval() -> None:
    async def scenario() -> None:
        chunks: list[str] = []
        coalescer = Coalescer(chunks.append, interval_s=0.2, max_chars=100)
        for _ in range(10):
            coalescer.feed("abc")
        assert chunks == []  # nothing until the interval passes
        await asyncio.sleep(0.3)
        assert chunks == ["abc" * 10]
        coalescer.feed("x" * 150)  # full, but the last chunk went out less than an interval ago
        coalescer.feed("y" * 10)
        assert len(chunks) == 1
        coalescer.close()
        coalescer.feed("ignored")
        assert chunks[1:] == ["x" * 100 + "\n[... about 60 characters not shown live ...]\n"]

    asyncio.run(scenario())


def test_coalescer_sends_a_full_chunk_at_once_when_allowed() -> None:
    async def scenario() -> None:
        chunks: list[str] = []
        coalescer = Coalescer(chunks.append, interval_s=10, max_chars=100)
        coalescer.feed("x" * 150)
        assert chunks == ["x" * 100 + "\n[... about 50 characters not shown live ...]\n"]
        assert coalescer.full is False
        coalescer.close()

    asyncio.run(scenario())


def test_coalescer_close_cancels_its_timer() -> None:
    async def scenario() -> list[str]:
        chunks: list[str] = []
        coalescer = Coalescer(chunks.append, interval_s=0.05)
        coalescer.feed("once")
        coalescer.close()
        await asyncio.sleep(0.1)
        return chunks

    assert asyncio.run(scenario()) == ["once"]


def test_a_files_control_characters_are_shown_as_escapes_not_removed() -> None:
    shown = visible("ok\033]52;c;Y3Vyb\007 \033[2Jx\rmore\x9b1m\u202e\ttab\nline")
    assert shown == "ok\\x1b]52;c;Y3Vyb\\x07 \\x1b[2Jx\\rmore\\x9b1m\\u202e\ttab\nline"


def test_a_name_cannot_forge_a_second_line_and_shows_bytes_that_were_not_utf8() -> None:
    assert visible("a\n  - b\tc", multiline=False) == "a\\n  - b\\tc"
    assert visible(b"caf\xe9\x1b".decode("utf-8", "surrogateescape"), multiline=False) == "caf\\xe9\\x1b"


def test_a_long_line_is_cut_with_how_much_was_left_out() -> None:
    assert cut_line("y" * 10) == "y" * 10
    assert cut_line("y" * 2500) == "y" * 2000 + "... [line cut: 500 of 2,500 characters not shown]"


def test_one_enormous_line_of_a_commands_output_is_cut_to_the_line_cap_marker_included() -> None:
    capture = OutputCapture()
    capture.feed(b"a" * 50_000_000 + b"\nshort\n")
    text = capture.text_for_agent()
    assert max(len(line) for line in text.splitlines()) <= MAX_LINE_CHARS
    assert "a... [line cut: 10,080 more characters not shown]" in text and "bytes cut ...]" in text
    assert text.endswith("short\n")
