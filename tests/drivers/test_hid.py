"""Boot-keyboard report decoding: vectors (shift, held keys, rollover, split lines, malformed
reports) and the encode_line → decode round trip the simulator relies on."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tablectl.drivers.shoe.hid import UNMAPPED, HidLineDecoder, encode_line

RELEASE = bytes(8)


def key(usage: int, modifiers: int = 0, *more: int) -> bytes:
    return bytes([modifiers, 0, usage, *more, *([0] * (5 - len(more)))])


def feed_all(decoder: HidLineDecoder, reports: list[bytes]) -> list[str]:
    lines: list[str] = []
    for report in reports:
        lines += decoder.feed(report)
    return lines


ENTER = [key(0x28), RELEASE]


@pytest.mark.parametrize(
    ("reports", "expected"),
    [
        # K (shift+k), H (shift+h), Enter
        ([key(0x0E, 0x02), RELEASE, key(0x0B, 0x02), RELEASE, *ENTER], ["KH"]),
        # right shift counts as shift; no shift gives lower case
        ([key(0x0E, 0x20), RELEASE, key(0x0B), RELEASE, *ENTER], ["Kh"]),
        # 1 0 H: digits and shifted digits
        ([key(0x1E), RELEASE, key(0x27), RELEASE, key(0x0B, 0x02), RELEASE, *ENTER], ["10H"]),
        ([key(0x1E, 0x02), RELEASE, *ENTER], ["!"]),
        # punctuation a barcode uses: - / . space _
        (
            [key(u, m) for u, m in ((0x2D, 0), (0x38, 0), (0x37, 0), (0x2C, 0), (0x2D, 2))] + ENTER,
            ["-/. _"],
        ),
        # keypad digits and keypad Enter
        ([key(0x59), RELEASE, key(0x62), RELEASE, key(0x58), RELEASE], ["10"]),
        # a held key counts once, however many reports repeat it
        ([key(0x0E, 2)] * 5 + [RELEASE, *ENTER], ["K"]),
        # shift pressed alone first (modifier-only report), then the key, then releases
        ([key(0, 0x02), key(0x04, 0x02), key(0, 0x02), RELEASE, *ENTER], ["A"]),
        # the same key twice needs a release in between: TT
        ([key(0x17, 2), RELEASE, key(0x17, 2), RELEASE, *ENTER], ["TT"]),
        # two keys in one report (fast scanner): slot order; the first stays held
        ([key(0x0E, 2, 0x0B), key(0x0B, 2), RELEASE, *ENTER], ["KH"]),
        # a rollover (phantom) report in the middle changes nothing
        ([key(0x0E, 2), bytes([2, 0, 1, 1, 1, 1, 1, 1]), key(0x0E, 2), RELEASE, *ENTER], ["K"]),
        # unmapped keys (F1, Tab) and Ctrl chords become U+FFFD, never vanish
        (
            [key(0x3A), RELEASE, key(0x2B), RELEASE, key(0x04, 0x01), RELEASE, *ENTER],
            ["\ufffd" * 3],
        ),
        # an Enter alone is an empty line (the driver decides what it means)
        (ENTER, [""]),
        # two lines
        ([key(0x04), RELEASE, *ENTER, key(0x05), RELEASE, *ENTER], ["a", "b"]),
    ],
)
def test_vectors(reports: list[bytes], expected: list[str]) -> None:
    assert feed_all(HidLineDecoder(), reports) == expected


def test_line_split_over_many_feeds_and_chunks() -> None:
    decoder = HidLineDecoder()
    reports = encode_line("B7-KH") + encode_line("CUT")
    out = [decoder.feed(r) for r in reports]
    assert [line for lines in out for line in lines] == ["B7-KH", "CUT"]
    assert sum(1 for lines in out if lines) == 2  # each line completes on its own Enter


@pytest.mark.parametrize("bad", [b"", b"\x00" * 7, b"\x00" * 9, bytes(64), b"\x02\x00\x0e"])
def test_malformed_reports_are_counted_and_ignored(bad: bytes) -> None:
    decoder = HidLineDecoder()
    reports = [key(0x0E, 2), RELEASE, bad, key(0x0B, 2), RELEASE, *ENTER]
    assert feed_all(decoder, reports) == ["KH"]
    assert decoder.malformed == 1


def test_phantom_and_unmapped_are_counted() -> None:
    decoder = HidLineDecoder()
    feed_all(decoder, [bytes([0, 0, 1, 1, 1, 1, 1, 1]), key(0x3A), RELEASE, *ENTER])
    assert (decoder.phantom, decoder.unmapped) == (1, 1)


def test_overlong_line_is_cut_and_marked_unreadable() -> None:
    decoder = HidLineDecoder()
    (line,) = feed_all(decoder, encode_line("A" * 300))
    assert line == "A" * 256 + UNMAPPED
    assert decoder.overflows == 1
    assert feed_all(decoder, encode_line("KH")) == ["KH"]


def test_reset_forgets_held_keys_and_partial_line() -> None:
    decoder = HidLineDecoder()
    feed_all(decoder, [key(0x0E, 2)])  # K held when the link dropped
    decoder.reset()
    assert feed_all(decoder, [key(0x0E, 2), RELEASE, *ENTER]) == ["K"]


def test_encode_line_shape() -> None:
    assert encode_line("K") == [key(0x0E, 0x02), RELEASE, key(0x28), RELEASE]
    assert encode_line("k", enter=False) == [key(0x0E), RELEASE]
    assert encode_line(UNMAPPED, enter=False)[0] == key(0x3A)


@pytest.mark.parametrize("text", ["\x00", "é", "\n", "\t"])
def test_encode_line_refuses_untypable_characters(text: str) -> None:
    with pytest.raises(ValueError, match="no key types"):
        encode_line(text)


BARCODE_TEXT = st.text(
    alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E) | st.just(UNMAPPED),
    max_size=40,
)


@given(st.lists(BARCODE_TEXT, max_size=5))
def test_round_trip(lines: list[str]) -> None:
    decoder = HidLineDecoder()
    reports = [r for line in lines for r in encode_line(line)]
    assert feed_all(decoder, reports) == lines
    assert (decoder.malformed, decoder.phantom) == (0, 0)
