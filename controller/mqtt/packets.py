"""The MQTT 3.1.1 packets the outbox's own connection sends and reads (OASIS MQTT 3.1.1, §2–3).

Our own codec because paho cost ~50 µs per QoS 1 message (docs/performance.md). Any packet but
CONNACK, PUBACK and PINGRESP, or broken framing, is a :class:`PacketError`: rebuilt, never guessed.
"""

from __future__ import annotations

from dataclasses import dataclass

CONNACK = 0x20
PUBACK = 0x40
PINGRESP = 0xD0
PINGREQ = b"\xc0\x00"
DISCONNECT = b"\xe0\x00"
MAX_REMAINING = 268_435_455
"""The largest Remaining Length four bytes can carry (§2.2.3)."""

_PUBLISH_QOS1 = 0x32
_RETAIN = 0x01
_PROTOCOL = b"\x00\x04MQTT\x04"  # protocol name and level 4 = 3.1.1 (§3.1.2.1–2)

CONNACK_REFUSALS = {
    1: "Connection refused: unacceptable protocol version",
    2: "Connection refused: identifier rejected",
    3: "Connection refused: broker unavailable",
    4: "Connection refused: bad user name or password",
    5: "Connection refused: not authorised",
}
"""CONNACK return codes 1–5 (§3.2.2.3), worded as paho words them (``connack_string``) so the
publisher's hints (:func:`~.security.connect_failure_hint`) read both connections alike."""


class PacketError(ValueError):
    """Bytes from the broker that are not the MQTT 3.1.1 a publishing client expects."""


@dataclass(frozen=True, slots=True)
class Packet:
    """One packet read from the broker: the first byte (type and flags) and the rest."""

    first: int
    body: bytes

    @property
    def kind(self) -> int:
        """The packet type in the first byte's high nibble, e.g. :data:`PUBACK`."""
        return self.first & 0xF0


def remaining_length(n: int) -> bytes:
    """The variable-length Remaining Length of ``n`` bytes (§2.2.3)."""
    if not 0 <= n <= MAX_REMAINING:
        raise ValueError(f"remaining length {n} outside 0..{MAX_REMAINING}")
    if n < 128:  # every PUBACK and most records' headers: no loop
        return bytes((n,))
    out = bytearray()
    while True:
        n, digit = divmod(n, 128)
        out.append(digit | 0x80 if n else digit)
        if not n:
            return bytes(out)


def _string(text: str | bytes) -> bytes:
    data = text.encode("utf-8") if isinstance(text, str) else text
    if len(data) > 0xFFFF:
        raise ValueError(f"MQTT string of {len(data)} bytes (at most 65535)")
    return len(data).to_bytes(2, "big") + data


def connect_packet(
    client_id: str,
    *,
    keepalive: int,
    username: str | None = None,
    password: str | None = None,
) -> bytes:
    """A CONNECT with a clean session and no Will (§3.1): the journal is the queue, so the broker
    keeps nothing for the outbox."""
    if password is not None and username is None:
        raise ValueError("an MQTT 3.1.1 password needs a user name")
    if not 0 <= keepalive <= 0xFFFF:
        raise ValueError(f"keepalive {keepalive} s outside 0..65535")
    flags = 0x02  # clean session
    payload = [_string(client_id)]
    if username is not None:
        flags |= 0x80
        payload.append(_string(username))
    if password is not None:
        flags |= 0x40
        payload.append(_string(password))
    body = b"".join((_PROTOCOL, bytes((flags,)), keepalive.to_bytes(2, "big"), *payload))
    return b"\x10" + remaining_length(len(body)) + body


def publish_header(topic: str) -> bytes:
    """The encoded topic name of a PUBLISH (§3.3.2.1), kept per topic by the caller."""
    if not topic or "+" in topic or "#" in topic or "\x00" in topic:
        raise ValueError(f"not a topic to publish to: {topic!r}")
    return _string(topic)


def publish_packet(topic: bytes, packet_id: int, payload: bytes, *, retain: bool) -> bytes:
    """A QoS 1 PUBLISH (§3.3): ``topic`` as :func:`publish_header` encoded it."""
    remaining = len(topic) + 2 + len(payload)
    first = _PUBLISH_QOS1 | _RETAIN if retain else _PUBLISH_QOS1
    return b"".join(
        (
            bytes((first,)),
            remaining_length(remaining),
            topic,
            packet_id.to_bytes(2, "big"),
            payload,
        )
    )


class PacketReader:
    """Splits the broker's byte stream into packets, whatever the reads' boundaries. A publishing
    client is only sent short packets: a huge length is a broken or hostile peer."""

    __slots__ = ("_buffer", "_max_packet")

    def __init__(self, max_packet: int = 65_536) -> None:
        self._buffer = bytearray()
        self._max_packet = max_packet

    def feed(self, data: bytes) -> list[Packet]:
        """The packets completed by ``data``, in order."""
        buffer = self._buffer
        buffer += data
        packets: list[Packet] = []
        start = 0
        end = len(buffer)
        while end - start >= 2:
            length, header = self._length(buffer, start + 1, end)
            if length < 0:
                break  # the Remaining Length itself is incomplete
            stop = start + 1 + header + length
            if stop > end:
                break
            packets.append(Packet(buffer[start], bytes(buffer[start + 1 + header : stop])))
            start = stop
        del buffer[:start]
        return packets

    def _length(self, buffer: bytearray, at: int, end: int) -> tuple[int, int]:
        """``(remaining length, bytes it took)``; ``(-1, 0)`` while incomplete."""
        value = 0
        for used in range(4):
            if at + used >= end:
                return -1, 0
            byte = buffer[at + used]
            value |= (byte & 0x7F) << (7 * used)
            if not byte & 0x80:
                if value > self._max_packet:
                    raise PacketError(f"a {value}-byte packet from the broker")
                return value, used + 1
        raise PacketError("a Remaining Length longer than four bytes")
