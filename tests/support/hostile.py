"""The hostile publisher of the fault suite's hostile lane (issue 26): what someone who can publish
on the floor's broker sends, without any key.

Two parts, both deterministic for a seed:

* :func:`hostile_messages` — the bounded plan: JSON of random shapes and sizes built by
  hypothesis (:func:`json_shapes`, drawn with :func:`drawn`) published on every topic of the
  prefix, for real table ids and made-up ones, retained and not; and every payload issue 26
  reproduced (:data:`KINDS`): ``seq`` 2**63-1, 10**9 and 10**15, a record dated 9999-12, JSON
  nested 100,000 deep, ``{"seq":[1]}`` and ``{"type":[]}``, a retained deep ``status``, a
  retained ``state`` of ``{"faults":[[1]]}``, a 10 MB record, a record in each of a few hundred
  months, a whole fabricated table, floods of ``devices/d*`` and of tables beyond the
  dashboard's caps, bidi and control characters in ids (control characters in payloads
  only: Mosquitto refuses them in topics), bursts of unsigned ``cmd/resend``;
* :func:`forge_next` — a chain-valid forgery of the record after one a real table published:
  the right ``seq``, ``prev_hash`` and sha256 ``hash``, and no ``auth`` or a wrong one (what
  sha256 over the published records allows; only the table's journal key tells it apart);
* :func:`withheld_replay` — a genuine record's ``seq``, ``hash`` and valid ``auth`` replayed on
  a body dressed as a face-down card the outbox withheld (the one body a keyed archive does not
  re-hash).

Nothing here connects anywhere: the lane (tests/fault/test_hostile_lane.py) publishes.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Final

from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

from tablectl.controller.core.time import format_moment
from tablectl.controller.journal import AUTH, canonical_json, record_hash
from tablectl.controller.journal.anchors import head_mac

__all__ = [
    "ARCHIVED_LEAVES",
    "DEEP",
    "FORGERIES",
    "KINDS",
    "LEAVES",
    "MAX_MESSAGE",
    "MAX_SEQ",
    "MAX_SHAPE",
    "WITHHELD_REPLAY",
    "Message",
    "Sizes",
    "counts",
    "deep",
    "drawn",
    "forge_next",
    "hostile_messages",
    "json_shapes",
    "sha256",
    "withheld_replay",
]

MAX_SEQ: Final = 2**63 - 1
MAX_MESSAGE: Final = 10 * 1024 * 1024 + 4096
"""The largest message of the plan (the 10 MB record and its envelope)."""
MAX_SHAPE: Final = 320 * 1024
"""The largest random-shaped message (beyond the archive's 64 KiB cap, the floor's 256 KiB)."""
DEEP: Final = 100_000
"""Nesting of the deep JSON (issue 26: a RecursionError in every reader that trusted it)."""

LEAVES: Final = (
    "events",
    "anchor",
    "outcome",
    "status",
    "state",
    "alarms",
    "staff",
    "devices/wheel",
    "devices/d0",
    "cmd/resend",
    "cmd/resend/reply",
    "cmd/void",
    "cmd/void/reply",
    "cmd/event",
    "cmd/status",
    "cmd/status/reply",
    "cmd/clear_fault",
    "cmd/clock_confirm",
    "cmd/nonsense",
)
"""Every topic under a table (docs/mqtt.md), and one no table has."""
ARCHIVED_LEAVES: Final = frozenset({"events", "anchor"})
"""What the archive reads as records (a refused one is a row of ``archive_quarantine``)."""
_RETAINABLE: Final = frozenset({"status", "state", "outcome", "anchor"})

KINDS: Final[Mapping[str, str]] = {
    "random JSON shapes (hypothesis)": "any JSON, any size, on every topic of the prefix",
    "broken JSON": "not UTF-8, NaN, truncated, empty, a bare scalar",
    "record with hostile field types": "the envelope of a record with any JSON in its fields",
    'seq/type of the wrong type ({"seq":[1]}, {"type":[]})': "issue 26 #5",
    "seq 2^63-1": "issue 26 #1",
    "seq 10^9": "issue 26 #1",
    "seq 10^15 outcome": "issue 26 #6",
    "forged outcomes at seq 10^9 (a wheel's chi-square)": "issue 26 #3",
    "ts 9999-12": "issue 26 #2",
    "deep JSON (100,000 nested)": "issue 26 #2, #5",
    "retained deep JSON status": "issue 26 #5",
    'retained state {"faults":[[1]]}': "issue 26 #5",
    "10 MB record": "issue 26 #3",
    "partition flood (a record in each of hundreds of months)": "issue 26 #4",
    "fabricated table (a whole chain, no auth)": "issue 26 #3",
    "devices/d* flood": "issue 26 #6",
    "fake tables (beyond the dashboard's table cap)": "issue 26 #6",
    "bidi and control characters in ids": "issue 26 #8",
    "unsigned cmd/resend burst": "issue 26 #7",
    "unsigned commands": "void, event, clear_fault, clock_confirm without a signature",
}
"""Every kind of message of :func:`hostile_messages` (the report's injection kinds)."""

FORGERIES: Final[Mapping[str, str]] = {
    "no auth": "the forged record carries no auth",
    "random auth": "64 random hex digits",
    "auth under another key": "the right MAC, computed with a key that is not the table's",
    "auth of the record before": "the genuine previous record's auth, replayed",
    "auth of the genuine record": "the table's own record at that seq, its auth on the forgery",
}
"""The ``auth`` of a chain-valid forgery (:func:`forge_next`)."""

WITHHELD_REPLAY: Final = "seq, hash and auth of a genuine record on a withheld card's body"
"""A forgery that carries a valid ``auth`` (:func:`withheld_replay`)."""


@dataclass(frozen=True)
class Message:
    """One hostile publish."""

    kind: str
    topic: str
    payload: bytes
    retain: bool = False
    qos: int = 1

    @property
    def leaf(self) -> str:
        """The topic below the table id (``events``, ``cmd/resend``; ``""`` for none)."""
        parts = self.topic.split("/", 2)
        return parts[2] if len(parts) == 3 else ""

    @property
    def table(self) -> str:
        parts = self.topic.split("/", 2)
        return parts[1] if len(parts) >= 2 else ""

    @property
    def archived(self) -> bool:
        """The archive reads it as a record (so a refusal of it is a quarantine row)."""
        return self.leaf in ARCHIVED_LEAVES


@dataclass(frozen=True)
class Sizes:
    """How many messages of the plan's floods (the lane scales them)."""

    shapes: int = 600
    """Random-shaped messages (each a hypothesis example, resized, on a random topic)."""
    months: int = 300
    """Partition flood: records, each dated in another month."""
    forged_run: int = 150
    """Forged zeros from seq 10**9 on a real table (300 in the issue)."""
    fabricated: int = 150
    """Records of the fabricated table (300 in the issue)."""
    devices: int = 20_000
    """``devices/d*`` messages."""
    fake_tables: int = 600
    """Made-up tables, each with a retained ``status`` (beyond ``max_tables``)."""
    resends: int = 300
    """Unsigned ``cmd/resend`` requests per real table."""


# --- hypothesis: JSON of random shapes ----------------------------------------------------------

_ODD_TEXT: Final = st.sampled_from(
    ["\u202e", "\u202a", "\u2066", "\u200f", "\ufeff", "\x07", "\x1b[31m", "</script>", "\ud7ff"]
)


def json_shapes(max_leaves: int = 80) -> st.SearchStrategy[Any]:
    """Any JSON value: scalars (huge integers, floats, text with bidi and control characters)
    in lists and objects nested as hypothesis likes."""
    text = st.text(max_size=60) | _ODD_TEXT
    leaves = (
        st.none()
        | st.booleans()
        | st.integers()
        | st.integers(min_value=-(2**70), max_value=2**70)
        | st.floats(allow_nan=False, allow_infinity=False)
        | text
    )
    return st.recursive(
        leaves,
        lambda children: (
            st.lists(children, max_size=8) | st.dictionaries(text, children, max_size=8)
        ),
        max_leaves=max_leaves,
    )


def drawn(strategy: st.SearchStrategy[Any], count: int, seed_value: int) -> list[Any]:
    """``count`` examples of ``strategy`` (fewer if it runs out), the same for the same seed
    (hypothesis's own generation, derandomized by ``seed_value``: no example database)."""
    found: list[Any] = []

    @seed(seed_value)
    @settings(
        max_examples=count,
        database=None,
        deadline=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(strategy)
    def collect(value: Any) -> None:
        found.append(value)

    collect()
    return found


# --- payloads -----------------------------------------------------------------------------------


def deep(levels: int = DEEP) -> bytes:
    """JSON nested ``levels`` deep (a list of a list of …)."""
    return b"[" * levels + b"]" * levels


def _hex(rng: random.Random) -> str:
    return "".join(rng.choice("0123456789abcdef") for _ in range(64))


def record(
    table: str,
    seq: Any,
    ts: str,
    rng: random.Random,
    *,
    kind: Any = "outcome",
    **extra: Any,
) -> dict[str, Any]:
    """A record's envelope as a forger writes it without a key (hashes that link nowhere)."""
    return {
        "schema": 1,
        "table": table,
        "seq": seq,
        "ts": ts,
        "type": kind,
        "game": "roulette",
        "round": f"{table}-{rng.randrange(1, 999_999):06d}",
        "status": "settled",
        "reason": None,
        "result": {"number": rng.randrange(37), "color": "red", "variant": "european"},
        "prev_hash": _hex(rng),
        "hash": _hex(rng),
        **extra,
    }


def _json(value: Any) -> bytes:
    return canonical_json(value).encode("utf-8") if isinstance(value, dict) else _dumps(value)


def _dumps(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode(
        "utf-8", "surrogatepass"
    )


def _resized(shape: Any, rng: random.Random) -> bytes:
    """The example as published, at a random size from a few bytes to :data:`MAX_SHAPE`: a
    list of copies of it when it is smaller than the size drawn (log-uniform)."""
    one = _dumps(shape)
    target = int(2 ** rng.uniform(1, 18.3))
    if len(one) >= target or len(one) > MAX_SHAPE // 2:
        return one if len(one) <= MAX_SHAPE else _dumps(str(one[: MAX_SHAPE // 2]))
    copies = max(1, min(target // max(1, len(one) + 1), MAX_SHAPE // (len(one) + 1)))
    return b"[" + b",".join([one] * copies) + b"]"


def _month(now: datetime, offset: int) -> str:
    index = now.year * 12 + now.month - 1 + offset
    return f"{index // 12:04d}-{index % 12 + 1:02d}-15T12:00:00.000000Z"


def _chain(table: str, count: int, now: datetime, rng: random.Random) -> list[bytes]:
    """A fabricated table's journal as published: linked by sha256, no ``auth``."""
    head = "0" * 64
    out = []
    for seq in range(1, count + 1):
        body = record(table, seq, format_moment(now - timedelta(seconds=count - seq)), rng)
        body["round"] = f"{table}-{seq:06d}"
        body["prev_hash"] = head
        body["hash"] = head = record_hash(head, body)
        out.append(_json(body))
    return out


_BIDI_IDS: Final = (
    "ROU-\u202e10-UOR",
    "FT-H0\u200f",
    "\u202aBAC-01\u202c",
    "\u2066ROU\u2069-02",
    "L" * 200,
    "é-ü-ß",
)
"""Ids no table's config allows (bidi controls, 200 characters, …). Control characters go in
payloads only: Mosquitto disconnects a client that names a topic with one (MQTT-1.5.3)."""


def _ids(rng: random.Random, real: Sequence[str]) -> str:
    """A table id: a real one, a made-up one, one no config allows, or an archiver's topics
    (``{prefix}/_archive/NAME/status|alarms``)."""
    roll = rng.random()
    if roll < 0.5:
        return rng.choice(real)
    if roll < 0.8:
        return f"GHOST-{rng.randrange(20):02d}"
    if roll < 0.95:
        return rng.choice(_BIDI_IDS)
    return "_archive/archive"


def _broken(rng: random.Random, table: str, now: datetime) -> bytes:
    good = _json(record(table, rng.randrange(1, 100), format_moment(now), rng))
    choice = rng.randrange(7)
    if choice == 0:
        return b"\xff\xfe" + good[2:]
    if choice == 1:
        return good.replace(b'"number":', b'"number":NaN,"x":', 1)
    if choice == 2:
        return good[: rng.randrange(1, len(good))]
    if choice == 3:
        return b""
    if choice == 4:
        return rng.choice([b"1", b'"x"', b"null", b"true", b"[]", b"-0", b"1e999"])
    if choice == 5:
        return good.replace(b'"status":"settled"', b'"status":"\\ud800"')
    return b"{" * rng.randrange(1, 50_000)


def hostile_messages(
    rng: random.Random,
    shapes: Sequence[Any],
    *,
    real: Sequence[str],
    prefix: str,
    now: datetime,
    sizes: Sizes,
    max_tables: int,
    max_devices: int,
) -> list[Message]:
    """The plan (see the module doc), in publishing order: shuffled, so every kind is spread
    over the run, except that each flood stays one run of messages.

    Args:
        rng: the seeded source of every choice.
        shapes: hypothesis examples (:func:`drawn` of :func:`json_shapes`).
        real: the ids of the tables that play.
        prefix: the topic prefix.
        now: the time the records are dated around.
        sizes: the floods' sizes.
        max_tables: the dashboard's table cap (the fake tables are more).
        max_devices: its devices-per-table cap (the devices of one table are more).
    """
    plan = _Plan(rng, list(shapes), list(real), prefix, now)
    plan.shapes(sizes.shapes)
    plan.issue_payloads()
    plan.commands()
    plan.bidi()
    floods = [
        plan.months(sizes.months),
        plan.forged_run(sizes.forged_run),
        plan.fabricated(sizes.fabricated),
        plan.devices(max(sizes.devices, max_devices + 1)),
        plan.fake_tables(max(sizes.fake_tables, max_tables + 1)),
        *(plan.resend_burst(table, sizes.resends) for table in real),
    ]
    out = plan.singles
    rng.shuffle(out)
    for flood in floods:
        at = rng.randrange(len(out) + 1)
        out[at:at] = flood
    return out


class _Plan:
    """:func:`hostile_messages`, one group of kinds at a time."""

    def __init__(
        self,
        rng: random.Random,
        shapes: list[Any],
        real: list[str],
        prefix: str,
        now: datetime,
    ) -> None:
        if not real or not shapes:
            raise ValueError("a plan needs real tables and hypothesis shapes")
        self.rng = rng
        self.shaped = shapes
        self.real = real
        self.prefix = prefix
        self.now = now
        self.ts = format_moment(now)
        self.singles: list[Message] = []

    def add(
        self, kind: str, table: str, leaf: str, payload: bytes, *, retain: bool = False
    ) -> None:
        assert kind in KINDS, kind
        self.singles.append(Message(kind, f"{self.prefix}/{table}/{leaf}", payload, retain))

    def message(self, kind: str, table: str, leaf: str, payload: bytes, **kw: Any) -> Message:
        assert kind in KINDS, kind
        return Message(kind, f"{self.prefix}/{table}/{leaf}", payload, **kw)

    def record(self, table: str, seq: Any, ts: str | None = None, **extra: Any) -> bytes:
        return _json(record(table, seq, ts or self.ts, self.rng, **extra))

    def shapes(self, count: int) -> None:
        """Hypothesis's JSON on every topic, any table id; broken JSON; records whose fields
        hold any JSON."""
        rng, real = self.rng, self.real
        for n in range(count):
            leaf = rng.choice(LEAVES)
            retain = leaf in _RETAINABLE and rng.random() < 0.25
            payload = _resized(self.shaped[n % len(self.shaped)], rng)
            self.add(
                "random JSON shapes (hypothesis)", _ids(rng, real), leaf, payload, retain=retain
            )
        for _ in range(max(5, count // 20)):
            payload = _broken(rng, rng.choice(real), self.now)
            self.add("broken JSON", _ids(rng, real), rng.choice(LEAVES), payload)
        for n in range(max(10, count // 10)):
            table = rng.choice(real)
            body = record(table, rng.randrange(1, 10_000), self.ts, rng)
            body[rng.choice(sorted(body))] = self.shaped[(n * 7) % len(self.shaped)]
            leaf = rng.choice(("events", "anchor", "outcome", "state"))
            self.add("record with hostile field types", table, leaf, _json(body))

    def issue_payloads(self) -> None:
        """Issue 26's reproduced payloads, each on the real tables and a made-up one."""
        add, rec, real = self.add, self.record, self.real
        kind = 'seq/type of the wrong type ({"seq":[1]}, {"type":[]})'
        for table in [*real, "GHOST-00"]:
            for payload in (b'{"seq":[1]}', b'{"type":[]}', b'{"seq":1,"type":"x"}'):
                add(kind, table, "events", payload)
            add(kind, table, "outcome", b'{"seq":"1","type":{}}')
        late = "9999-12-31T23:59:59.000000Z"
        for table in [*real, "GHOST-01"]:
            add("seq 2^63-1", table, "events", rec(table, MAX_SEQ))
            add("seq 2^63-1", table, "anchor", rec(table, MAX_SEQ, kind="anchor"))
            add("seq 10^9", table, "events", rec(table, 10**9))
            add("seq 10^15 outcome", table, "events", rec(table, 10**15))
            add("seq 10^15 outcome", table, "outcome", rec(table, 10**15), retain=True)
            add("ts 9999-12", table, "events", rec(table, self.rng.randrange(2, 50), late))
        add("ts 9999-12", "NEW-1", "events", rec("NEW-1", 1, "9999-12-01T00:00:00Z"))
        kind = "deep JSON (100,000 nested)"
        for leaf in ("events", "anchor", "outcome", "cmd/resend/reply", "cmd/void", "state"):
            add(kind, self.rng.choice(real), leaf, deep())
        add(kind, "GHOST-02", "alarms", deep())
        add(kind, "GHOST-02", "events", b'{"a":' * 5000 + b"1" + b"}" * 5000)
        for table in [*real, "DEEP-1"]:
            add("retained deep JSON status", table, "status", deep(), retain=True)
            add('retained state {"faults":[[1]]}', table, "state", b'{"faults":[[1]]}', retain=True)
        ten = 10 * 1024 * 1024
        add("10 MB record", real[0], "events", rec(real[0], 3, padding="x" * ten))
        add("10 MB record", real[-1], "cmd/resend", b'{"id":"' + b"x" * ten + b'"}')

    def commands(self) -> None:
        """Every command a table takes, unsigned."""
        bodies = {
            "cmd/resend": {"from_seq": 1, "to_seq": MAX_SEQ, "id": "x", "by": "archive"},
            "cmd/void": {"id": "v", "reason": "foreign_object", "round": "?"},
            "cmd/event": {"id": "e", "event": {"type": "winning_number", "number": 0}},
            "cmd/clear_fault": {"id": "c", "device": "wheel", "code": "ss2_fault_5"},
            "cmd/clock_confirm": {"id": "k"},
        }
        for table in [*self.real, "GHOST-03"]:
            for leaf, body in bodies.items():
                self.add("unsigned commands", table, leaf, _dumps(body))

    def bidi(self) -> None:
        kind = "bidi and control characters in ids"
        for table in _BIDI_IDS:
            self.add(kind, table, "status", _dumps({"state": "online"}), retain=True)
            self.add(kind, table, "events", self.record(table, 1))
            self.add(kind, table, f"devices/{table}", _dumps({"available": True}))
        body = {
            "device": "\u202ewheel",
            "available": True,
            "faults": ["\u202e5_tluaf", "\x07\x1b[2J"],
        }
        self.add(kind, self.real[0], "devices/\u202ed-1", _dumps(body))
        state = {"table": "BEL\x07", "phase": "\x1b[31m", "round": "\u202eR", "faults": ["\x00"]}
        self.add(kind, "GHOST-05", "state", _dumps(state), retain=True)

    def months(self, count: int) -> list[Message]:
        """Records each dated in another month, before and after now."""
        kind = "partition flood (a record in each of hundreds of months)"
        out = []
        for n in range(count):
            table = self.rng.choice([*self.real, "FLOOD-00", "FLOOD-01"])
            ts = _month(self.now, self.rng.choice((-1, 1)) * (n + 2))
            out.append(self.message(kind, table, "events", self.record(table, n + 1, ts)))
        return out

    def forged_run(self, count: int) -> list[Message]:
        """Zeros from seq 10**9 on a real table: a wheel the statistics would withdraw."""
        kind, table = "forged outcomes at seq 10^9 (a wheel's chi-square)", self.real[-1]
        return [
            self.message(kind, table, "events", _zero(record(table, 10**9 + n, self.ts, self.rng)))
            for n in range(count)
        ]

    def fabricated(self, count: int) -> list[Message]:
        kind = "fabricated table (a whole chain, no auth)"
        out = [
            self.message(kind, "FAB-01", "events", p)
            for p in _chain("FAB-01", count, self.now, self.rng)
        ]
        out.append(self.message(kind, "FAB-01", "status", _dumps({"state": "online"}), retain=True))
        return out

    def devices(self, count: int) -> list[Message]:
        """Devices of a real table and a made-up one (a tenth retained; QoS 0: a flood)."""
        owners = [self.real[0], "GHOST-04"]
        return [
            self.message(
                "devices/d* flood",
                owners[n % 2],
                f"devices/d{n}",
                _dumps({"device": f"d{n}", "available": False, "faults": ["x" * 60]}),
                retain=n % 10 == 0,
                qos=0,
            )
            for n in range(count)
        ]

    def fake_tables(self, count: int) -> list[Message]:
        kind = "fake tables (beyond the dashboard's table cap)"
        online = _dumps({"state": "online"})
        return [
            self.message(kind, f"FAKE-{n:04d}", "status", online, retain=True) for n in range(count)
        ]

    def resend_burst(self, table: str, count: int) -> list[Message]:
        return [
            self.message(
                "unsigned cmd/resend burst",
                table,
                "cmd/resend",
                _dumps({"id": f"burst-{n}", "from_seq": 1, "to_seq": 10_000}),
            )
            for n in range(count)
        ]


def _zero(body: dict[str, Any]) -> bytes:
    body["result"]["number"] = 0
    body["round"] = f"{body['table']}-{body['seq'] % 1_000_000:06d}"
    return _json(body)


def counts(messages: Iterable[Message]) -> Counter[str]:
    """Messages per kind."""
    return Counter(m.kind for m in messages)


# --- chain-valid forgeries ----------------------------------------------------------------------


def forge_next(
    genuine: Mapping[str, Any],
    template: Mapping[str, Any] | None,
    how: str,
    rng: random.Random,
    *,
    ts: str,
    auth_of: Mapping[str, Any] | None = None,
) -> bytes:
    """An outcome at ``genuine``'s ``seq`` + 1 that links to it: ``prev_hash`` its ``hash``, its
    own ``hash`` the sha256 the chain asks for; ``auth`` as ``how`` (:data:`FORGERIES`) says.

    Args:
        genuine: the table's record the forgery follows (as published).
        template: the table's last outcome (its fields copied), or ``None``.
        how: a key of :data:`FORGERIES`.
        rng: picks the forged number.
        ts: the forgery's time.
        auth_of: the record whose ``auth`` is replayed (``auth of the …`` forgeries).
    """
    table, seq = str(genuine["table"]), int(genuine["seq"]) + 1
    body: dict[str, Any] = {
        k: v for k, v in (template or {}).items() if k not in ("hash", "prev_hash", AUTH)
    }
    result = dict(body.get("result") or {"color": "green", "variant": "european"})
    result["number"] = rng.randrange(37)
    body.update(
        schema=genuine.get("schema", 1),
        table=table,
        seq=seq,
        ts=ts,
        type="outcome",
        game="roulette",
        round=genuine.get("round") or f"{table}-{seq:06d}",
        status="settled",
        reason=None,
        result=result,
        prev_hash=genuine["hash"],
    )
    body["hash"] = record_hash(str(genuine["hash"]), body)
    if how == "random auth":
        body[AUTH] = _hex(rng)
    elif how == "auth under another key":
        body[AUTH] = head_mac(b"not the table's key, 32 bytes !!", table, seq, body["hash"])
    elif how.startswith("auth of the"):
        assert auth_of is not None, how
        assert isinstance(auth_of.get(AUTH), str), how
        body[AUTH] = auth_of[AUTH]
    else:
        assert how == "no auth", how
    return _json(body)


def sha256(payload: bytes) -> str:
    return hashlib.sha256(payload).hexdigest()


def withheld_replay(genuine: Mapping[str, Any], **fields: Any) -> bytes:
    """A genuine record's envelope — ``seq``, ``prev_hash``, ``hash`` and its valid ``auth`` —
    on another body, dressed as a face-down card the outbox withheld (``"card": null``,
    ``"withheld": true``): the one form whose body a keyed archive cannot re-hash (its hash
    covers the journaled card), so the auth, replayed, is the only check left."""
    body = {k: genuine[k] for k in ("schema", "table", "seq", "ts", "prev_hash", "hash", AUTH)}
    body.update(type="card", face_down=True, card=None, withheld=True, **fields)
    return _json(body)
