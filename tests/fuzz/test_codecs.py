"""Every device codec, fed garbage: it never raises and returns only its own message values.

contracts §7: "garbage on any port never stops the service". The codec tests next to each protocol
check round trips of valid traffic; this suite holds every decoder to the same contract from the
outside, with bytes biased towards each protocol's framing characters (so the fuzzer reaches the
field parsers, not just the resynchronisation) and arbitrary read boundaries: a decoder must give
the same values however the bytes were split, because a serial read or a USB transfer may end
anywhere.
"""

from __future__ import annotations

import importlib
import typing
from collections.abc import Callable
from types import ModuleType
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tablectl.drivers.codec import DecodeError, FrameScanner
from tablectl.drivers.shoe.barcodes import BarcodeCodec, Decoded, Rejected, Signal
from tablectl.drivers.shoe.hid import ENTER, REPORT_SIZE, HidLineDecoder, encode_line
from tablectl.drivers.transports.frames import MAX_EXTENDED_ID, MAX_STANDARD_ID, CanFrame
from tests.fuzz.common import fuzz, split_points

# Each byte-stream protocol: module, framing alphabet that makes garbage look like traffic.
STREAM_CODECS = {
    "tablectl.drivers.ss2.protocol": b"*\r\n 0123456789ABCDEFHIMNOPSTVWXabnsw:;,.-",
    "tablectl.drivers.shuffler.protocol": (
        b"\x02\x03\r\n;-0123456789ABCDEFHJKNQRSTUVWXYZacdhknorstuvx"
    ),
    "tablectl.drivers.bigwheel.protocol": b"$*\r\n,0123456789ABCDEFHKLNPRSTVWXY-",
    "tablectl.drivers.dice.protocol": b"\x02\x03\r\n;,-0123456789ABCDEFHIKLMNORSTUWYabdelru",
}


def _module(name: str) -> ModuleType:
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError:  # pragma: no cover - a codec being written elsewhere
        pytest.skip(f"{name} is not there")


def _allowed(module: ModuleType, name: str) -> tuple[type, ...]:
    """The value types a decoder may return: a union's members (or one class) + DecodeError."""
    declared = getattr(module, name)
    return (*(typing.get_args(declared) or (declared,)), module.DecodeError)


def _garbage(alphabet: bytes) -> st.SearchStrategy[bytes]:
    framed = st.lists(st.sampled_from(list(alphabet)), max_size=300).map(bytes)
    return st.one_of(
        st.binary(max_size=300),
        framed,
        st.tuples(framed, st.binary(max_size=20), framed).map(b"".join),
    )


def _feed_all(make: Callable[[], Any], chunks: list[bytes]) -> list[Any]:
    decoder = make()
    out: list[Any] = []
    for chunk in chunks:
        out.extend(decoder.feed(chunk))
    return out


@pytest.mark.parametrize("name", sorted(STREAM_CODECS))
@pytest.mark.parametrize("decoder", ["Decoder", "CommandDecoder"])
@fuzz(150)
@given(data=st.data())
def test_stream_decoders_take_any_bytes_split_anywhere(
    name: str, decoder: str, data: st.DataObject
) -> None:
    module = _module(name)
    make = getattr(module, decoder)
    allowed = _allowed(module, "Message" if decoder == "Decoder" else "Command")
    stream = data.draw(_garbage(STREAM_CODECS[name]), label="bytes")
    whole = _feed_all(make, [stream])
    assert all(isinstance(item, allowed) for item in whole), whole
    chunks = data.draw(split_points(stream), label="chunks")
    assert _feed_all(make, chunks) == whole


@pytest.mark.parametrize("name", sorted(STREAM_CODECS))
@fuzz(100)
@given(data=st.data())
def test_framings_give_bounded_frames_or_decode_errors(name: str, data: st.DataObject) -> None:
    framing = _module(name).FRAMING
    stream = data.draw(_garbage(STREAM_CODECS[name]))
    out = _feed_all(lambda: FrameScanner(framing), data.draw(split_points(stream)))
    # The scanner owns the buffer: whatever the line does, a frame (start byte, body, end marker
    # and trailer) and a reported raw stay within the framing's bounds.
    longest = framing.max_length + (framing.end is not None) + framing.trailer_length
    for item in out:
        if isinstance(item, DecodeError):
            assert item.reason, item
            assert len(item.raw) <= framing.max_raw, item
        else:
            assert isinstance(item, bytes), item
            assert len(item) <= longest, item


@fuzz(200)
@given(
    st.lists(
        st.binary(min_size=REPORT_SIZE, max_size=REPORT_SIZE) | st.binary(max_size=12),
        max_size=60,
    )
)
def test_hid_reports_give_only_text_lines(reports: list[bytes]) -> None:
    decoder = HidLineDecoder()
    for report in reports:
        lines = decoder.feed(report)
        assert all(isinstance(line, str) and len(line) <= 257 for line in lines)


@fuzz(150)
@given(st.lists(st.binary(max_size=12), max_size=12))
def test_hid_garbage_costs_at_most_the_line_it_hit(junk: list[bytes]) -> None:
    decoder = HidLineDecoder()
    for report in junk:
        decoder.feed(report)
    # Release everything, press and release Enter: whatever the junk typed is one bad line ...
    release, enter = bytes(REPORT_SIZE), bytes([0, 0, ENTER, 0, 0, 0, 0, 0])
    for report in (release, enter, release):
        decoder.feed(report)
    # ... and the next scan reads exactly.
    lines = [line for report in encode_line("B7731-KH") for line in decoder.feed(report)]
    assert lines == ["B7731-KH"]


CODECS = [
    BarcodeCodec(),
    BarcodeCodec(deck_serials=["B7731"], barcodes={"0001": "AS"}),
    BarcodeCodec(
        pattern=r"(?P<deck>\d{5})(?P<suit>[1-4])(?P<rank>\d{2})",
        suit_map={"1": "S", "2": "H", "3": "D", "4": "C"},
        rank_map={"01": "A", "10": "T", "11": "J", "12": "Q", "13": "K"},
    ),
]


@fuzz(300)
@given(
    st.one_of(
        st.text(max_size=120),
        st.text(alphabet="0123456789-/:ABCDHJKQST \t", max_size=20),
        st.binary(max_size=20),
        st.integers(),
        st.none(),
    )
)
def test_barcode_codecs_are_total(barcode: object) -> None:
    for codec in CODECS:
        assert isinstance(codec.decode(barcode), Decoded | Signal | Rejected)


@fuzz(300)
@given(
    st.one_of(
        st.tuples(st.integers(0, MAX_STANDARD_ID), st.binary(max_size=8), st.just(False)),
        st.tuples(st.integers(0, MAX_EXTENDED_ID), st.binary(max_size=8), st.just(True)),
    )
)
def test_drum_can_frames_decode_to_values(frame: tuple[int, bytes, bool]) -> None:
    module = _module("tablectl.drivers.drum.protocol")
    allowed = _allowed(module, "DrumMessage")
    result = module.decode(CanFrame(frame[0], frame[1], is_extended_id=frame[2]))
    assert isinstance(result, allowed)
