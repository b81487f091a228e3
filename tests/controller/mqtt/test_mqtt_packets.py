"""The outbox connection's MQTT 3.1.1 codec (controller/mqtt/packets.py): byte vectors from the
spec, split and garbled streams, and round-trip properties (STYLE 2).

Why byte-exact: this codec replaced paho on the outbox's connection, and a broker refuses or
silently misreads a packet that is one byte off; the vectors are the spec's own (OASIS MQTT
3.1.1 §2.2.3 table 2.4, §3.1, §3.3), worked out by hand here rather than through the codec.
"""

from __future__ import annotations

from itertools import pairwise

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tablectl.controller.mqtt.packets import (
    CONNACK_REFUSALS,
    MAX_REMAINING,
    PUBACK,
    Packet,
    PacketError,
    PacketReader,
    connect_packet,
    publish_header,
    publish_packet,
    remaining_length,
)
from tablectl.controller.mqtt.security import connect_failure_hint

PASSWORD = "pw"  # noqa: S105 - a test vector, not a credential


def decode_length(encoded: bytes) -> int:
    """The value of a Remaining Length, decoded as §2.2.3's pseudo-code does (not the codec's)."""
    value, multiplier = 0, 1
    for byte in encoded:
        value += (byte & 0x7F) * multiplier
        multiplier *= 128
        if not byte & 0x80:
            return value
    raise AssertionError(f"{encoded!r} does not end")


def frame(first: int, body: bytes) -> bytes:
    return bytes((first,)) + remaining_length(len(body)) + body


def feed_in_pieces(reader: PacketReader, data: bytes, cuts: list[int]) -> list[Packet]:
    out: list[Packet] = []
    for start, end in pairwise([0, *sorted(cuts), len(data)]):
        out += reader.feed(data[start:end])
    return out


# --- Remaining Length -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("n", "encoded"),
    [  # §2.2.3 table 2.4: the bounds of one to four bytes
        (0, b"\x00"),
        (127, b"\x7f"),
        (128, b"\x80\x01"),
        (16_383, b"\xff\x7f"),
        (16_384, b"\x80\x80\x01"),
        (2_097_151, b"\xff\xff\x7f"),
        (2_097_152, b"\x80\x80\x80\x01"),
        (268_435_455, b"\xff\xff\xff\x7f"),
    ],
)
def test_remaining_length_matches_the_specs_table(n: int, encoded: bytes) -> None:
    assert remaining_length(n) == encoded


@pytest.mark.parametrize("n", [-1, MAX_REMAINING + 1, 2**40])
def test_remaining_length_refuses_what_four_bytes_cannot_carry(n: int) -> None:
    with pytest.raises(ValueError, match="remaining length"):
        remaining_length(n)


@settings(max_examples=500, deadline=None)
@given(st.integers(0, MAX_REMAINING))
def test_remaining_length_round_trips_in_the_fewest_bytes(n: int) -> None:
    encoded = remaining_length(n)
    assert decode_length(encoded) == n
    # The fewest bytes: 7 bits each. A longer form would make the broker read a different packet.
    assert len(encoded) == max(1, (n.bit_length() + 6) // 7)


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 40_000))
def test_the_reader_reads_back_every_remaining_length(n: int) -> None:
    body = bytes(i % 251 for i in range(n))
    packets = PacketReader(max_packet=n).feed(frame(0x30, body))
    assert packets == [Packet(0x30, body)]


# --- PacketReader -----------------------------------------------------------------------------

packet_strategy = st.builds(
    Packet,
    st.integers(0, 255),
    # Long enough that some lengths take two bytes and get cut between them.
    st.binary(max_size=300),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(packet_strategy, max_size=12), st.data())
def test_the_reader_returns_the_same_packets_whatever_the_split(
    packets: list[Packet], data: st.DataObject
) -> None:
    stream = b"".join(frame(p.first, p.body) for p in packets)
    cuts = data.draw(st.lists(st.integers(0, len(stream)), max_size=20), label="cuts")
    assert feed_in_pieces(PacketReader(), stream, cuts) == packets


def test_the_reader_keeps_a_packet_cut_anywhere_until_it_is_complete() -> None:
    stream = frame(PUBACK, b"\x00\x07") + frame(0x30, b"x" * 200) + b"\xd0\x00"
    reader = PacketReader()
    out: list[Packet] = []
    for i in range(len(stream)):  # one byte a read: every boundary, the length's two included
        out += reader.feed(stream[i : i + 1])
    assert out == [Packet(PUBACK, b"\x00\x07"), Packet(0x30, b"x" * 200), Packet(0xD0, b"")]
    assert out[0].kind == PUBACK
    assert reader.feed(b"") == []


@pytest.mark.parametrize(
    "header",
    [
        b"\x40\x80\x80\x80\x80\x01",  # five bytes of Remaining Length
        b"\x40\xff\xff\xff\xff",  # the fourth still says "more": refused before a fifth comes
    ],
)
def test_a_remaining_length_of_five_bytes_is_a_packet_error(header: bytes) -> None:
    with pytest.raises(PacketError, match="longer than four bytes"):
        PacketReader(max_packet=MAX_REMAINING).feed(header)


def test_a_packet_over_max_packet_is_refused_from_its_header_alone() -> None:
    # Refused before its body arrives: a broken or hostile peer does not make us buffer it.
    with pytest.raises(PacketError, match="65537-byte packet"):
        PacketReader().feed(b"\x30" + remaining_length(65_537))
    assert PacketReader(max_packet=10).feed(frame(0x30, b"0123456789")) == [
        Packet(0x30, b"0123456789")
    ]
    with pytest.raises(PacketError, match="11-byte packet"):
        PacketReader(max_packet=10).feed(frame(0x30, b"0123456789a"))


def test_good_packets_come_out_before_a_broken_length_fails_the_stream() -> None:
    reader = PacketReader()
    assert reader.feed(b"\x40\x02\x00\x01\x40") == [Packet(PUBACK, b"\x00\x01")]
    with pytest.raises(PacketError):
        reader.feed(b"\xff\xff\xff\xff")


@settings(max_examples=500, deadline=None)
@given(st.binary(max_size=400), st.data())
def test_garbage_gives_packets_or_a_packet_error_and_nothing_else(
    garbage: bytes, data: st.DataObject
) -> None:
    # pytest-timeout would catch a feed that loops forever; each call must also return.
    cuts = data.draw(st.lists(st.integers(0, len(garbage)), max_size=10), label="cuts")
    reader = PacketReader(max_packet=200)
    try:
        packets = feed_in_pieces(reader, garbage, cuts)
    except PacketError:
        return
    assert sum(2 + len(p.body) for p in packets) <= len(garbage)
    assert all(len(p.body) <= 200 for p in packets)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(packet_strategy, min_size=1, max_size=8),
    st.lists(st.tuples(st.integers(0, 10_000), st.integers(0, 255)), min_size=1, max_size=4),
    st.data(),
)
def test_a_corrupted_stream_gives_packets_or_a_packet_error_and_nothing_else(
    packets: list[Packet], flips: list[tuple[int, int]], data: st.DataObject
) -> None:
    stream = bytearray(b"".join(frame(p.first, p.body) for p in packets))
    for at, value in flips:
        stream[at % len(stream)] = value
    cuts = data.draw(st.lists(st.integers(0, len(stream)), max_size=10), label="cuts")
    try:
        out = feed_in_pieces(PacketReader(max_packet=300), bytes(stream), cuts)
    except PacketError:
        return
    assert sum(2 + len(p.body) for p in out) <= len(stream)


# --- CONNECT ----------------------------------------------------------------------------------


def test_connect_packet_bytes_with_user_and_password() -> None:
    expected = (
        b"\x10\x25"  # CONNECT, 37 bytes follow
        b"\x00\x04MQTT\x04"  # protocol name, level 4 (3.1.1)
        b"\xc2"  # user name, password, clean session; no Will
        b"\x00\x1e"  # keepalive 30 s
        b"\x00\x0dBAC-01-outbox"
        b"\x00\x06BAC-01"
        b"\x00\x02pw"
    )
    assert connect_packet("BAC-01-outbox", keepalive=30, username="BAC-01", password=PASSWORD) == (
        expected
    )


def test_connect_packet_bytes_anonymous_and_user_only() -> None:
    assert connect_packet("t", keepalive=0) == b"\x10\x0d\x00\x04MQTT\x04\x02\x00\x00\x00\x01t"
    assert connect_packet("t", keepalive=65_535, username="ü") == (
        b"\x10\x11\x00\x04MQTT\x04\x82\xff\xff\x00\x01t\x00\x02\xc3\xbc"
    )


def test_a_long_client_id_gets_a_two_byte_remaining_length() -> None:
    packet = connect_packet("c" * 200, keepalive=60)
    assert packet[1:3] == remaining_length(10 + 2 + 200) == b"\xd4\x01"
    assert PacketReader().feed(packet) == [Packet(0x10, packet[3:])]


def test_a_password_without_a_user_name_is_refused() -> None:
    with pytest.raises(ValueError, match="password needs a user name"):
        connect_packet("t", keepalive=30, password=PASSWORD)


@pytest.mark.parametrize("keepalive", [-1, 65_536])
def test_a_keepalive_outside_two_bytes_is_refused(keepalive: int) -> None:
    with pytest.raises(ValueError, match="keepalive"):
        connect_packet("t", keepalive=keepalive)


def test_a_string_over_65535_bytes_is_refused() -> None:
    with pytest.raises(ValueError, match="65536 bytes"):
        connect_packet("t", keepalive=30, username="u", password="p" * 65_536)


@pytest.mark.parametrize("code", [4, 5])
def test_credential_refusals_read_as_credentials_to_the_publishers_hint(code: int) -> None:
    hint = connect_failure_hint(f"outbox connection: {CONNACK_REFUSALS[code]}")
    assert hint is not None
    assert "credentials" in hint


@pytest.mark.parametrize("code", [1, 2, 3])
def test_other_refusals_give_no_credentials_hint(code: int) -> None:
    assert connect_failure_hint(f"outbox connection: {CONNACK_REFUSALS[code]}") is None


# --- PUBLISH ----------------------------------------------------------------------------------


def test_publish_packet_bytes() -> None:
    topic = publish_header("a/b")
    assert topic == b"\x00\x03a/b"
    assert publish_packet(topic, 0x1234, b"hi", retain=False) == b"\x32\x09\x00\x03a/b\x12\x34hi"
    assert publish_packet(topic, 1, b"", retain=True) == b"\x33\x07\x00\x03a/b\x00\x01"
    assert publish_packet(topic, 0xFFFF, b"", retain=False)[-2:] == b"\xff\xff"


def test_a_publish_topic_is_counted_in_utf8_bytes() -> None:
    assert publish_header("t/é") == b"\x00\x04t/\xc3\xa9"


def test_a_large_publish_gets_a_multi_byte_remaining_length() -> None:
    payload = b"p" * 20_000
    packet = publish_packet(publish_header("t"), 9, payload, retain=False)
    assert packet[:4] == b"\x32" + remaining_length(3 + 2 + 20_000) == b"\x32\xa5\x9c\x01"
    assert packet[4:] == b"\x00\x01t\x00\x09" + payload


@pytest.mark.parametrize("topic", ["", "a/+/c", "+", "a/#", "#", "a\x00b", "x" * 65_536])
def test_publish_header_refuses_what_is_no_topic_to_publish_to(topic: str) -> None:
    with pytest.raises(ValueError):  # noqa: PT011 - two messages: topic rule or string length
        publish_header(topic)


topic_strategy = st.text(
    st.characters(codec="utf-8", exclude_characters="+#\x00"),
    min_size=1,
    max_size=40,
)


@settings(max_examples=300, deadline=None)
@given(topic_strategy, st.integers(1, 0xFFFF), st.binary(max_size=500), st.booleans())
def test_publish_packet_round_trips_through_the_reader(
    topic: str, packet_id: int, payload: bytes, retain: bool
) -> None:
    (packet,) = PacketReader().feed(
        publish_packet(publish_header(topic), packet_id, payload, retain=retain)
    )
    assert packet.first == (0x33 if retain else 0x32)  # PUBLISH, QoS 1, DUP 0
    size = int.from_bytes(packet.body[:2], "big")
    assert packet.body[2 : 2 + size].decode("utf-8") == topic
    assert int.from_bytes(packet.body[2 + size : 4 + size], "big") == packet_id
    assert packet.body[4 + size :] == payload
