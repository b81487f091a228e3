"""The dashboard's and watch's pure parts against a hostile publisher (issue 26, items 5, 6, 8).

Anyone who can publish on the floor's broker may send anything: the floor reads it bounded,
type-checks every field, counts what it refuses and never raises; forged records that do not
link to the table's chain are never shown; tables and devices are capped and forgotten when
their retained topics are cleared; what is shown is printable (no bidi override). The same
scenarios with real Mosquitto, HTTP and Chromium: ``tests/integration/test_dashboard_hostile.py``.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest

from tablectl.controller.tools.dashboard.auth import BusyError, Throttle
from tablectl.controller.tools.dashboard.floor import Floor
from tablectl.controller.tools.dashboard.pages import fragments, page
from tablectl.controller.tools.summary import printable
from tablectl.controller.tools.watch import MessageFilter, format_message
from tests.support.dashboard import Chain

P = "tablectl"
DEEP = b'{"a":' * 5000 + b"1" + b"}" * 5000
POISON = [b'{"seq":[1]}', b'{"type":[]}', b'{"seq":1,"type":{}}', DEEP, b"[" * 40 + b"]" * 40]
ANYWHERE = [DEEP, b"[" * 40 + b"]" * 40, b"{}" + b" " * 70_000, b"not json", b"[1]", b"\xff"]
"""Malformed on every topic."""
PER_LEAF = {
    "events": [b'{"seq":[1]}', b'{"type":[]}', b'{"seq":1,"type":{}}', b'{"seq":1e400}'],
    "outcome": [b'{"seq":[1]}', b'{"seq":2,"hash":"a","prev_hash":"b","result":[]}'],
    "status": [b'{"state":[]}', b'{"faults":[[1]]}', b'{"locked":"yes"}'],
    "state": [b'{"faults":[[1]]}', b'{"devices":[]}', b'{"rounds":"7"}', b'{"seq":true}'],
    "alarms": [b'{"type":[]}', b'{"type":"fault","code":{"a":1}}'],
    "devices/x": [b'{"available":"yes"}', b'{"faults":"x"}'],
    "staff": [
        b'{"dealer":"D-1"}',
        b'{"dealer":{"person":[1]}}',
        b'{"dealer":{"name":"no person"}}',
        b'{"dealer":{"person":"' + b"D" * 65 + b'"}}',
        b'{"dealer":{"person":"D-1","since":7}}',
        b'{"supervisors":{"person":"S-1"}}',
        b'{"technicians":[{"person":"T-1"},"T-2"]}',
    ],
}
"""Malformed on one topic: a field every reader uses, of the wrong type."""


def _send(floor: Floor, table: str, leaf: str, body: object) -> str | None:
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    return floor.ingest(f"{P}/{table}/{leaf}", raw)


def _state(table: str, seq: int, **more: Any) -> dict[str, Any]:
    return {
        "table": table,
        "game": "roulette",
        "phase": "open",
        "round": f"{table}-{seq:06d}",
        "seq": seq,
        "faults": [],
        "devices": {"wheel": {"faults": []}},
        "journal": {"available": True},
        **more,
    }


def _table(floor: Floor, chain: Chain, spins: int) -> None:
    _send(floor, chain.table, "status", {"state": "online"})
    for n in range(spins):
        _send(floor, chain.table, "events", chain.record("bets_closed"))
        _send(floor, chain.table, "events", chain.spin(n + 1))
    _send(floor, chain.table, "state", _state(chain.table, chain.seq))


# --- 5. one message never freezes the floor -------------------------------------------------------


@pytest.mark.parametrize(
    ("leaf", "payload"),
    [(leaf, p) for leaf, payloads in PER_LEAF.items() for p in [*payloads, *ANYWHERE]],
)
def test_a_poison_message_is_counted_and_changes_nothing(leaf: str, payload: bytes) -> None:
    floor = Floor(P)
    chain = Chain("ROU-01")
    _table(floor, chain, 3)
    before = floor.tile("ROU-01")
    assert floor.ingest(f"{P}/ROU-01/{leaf}", payload) is None
    assert floor.tile("ROU-01") == before
    assert sum(floor.malformed.values()) == 1
    # The floor goes on: the next real record is taken.
    _send(floor, "ROU-01", "events", chain.spin(36))
    _send(floor, "ROU-01", "state", _state("ROU-01", chain.seq))
    tile = floor.tile("ROU-01")
    assert tile is not None
    assert tile.last_outcome is not None
    assert tile.last_outcome.numbers == (36,)


def test_a_state_with_faults_of_the_wrong_shape_never_breaks_a_page() -> None:
    floor = Floor(P)
    _send(floor, "ROU-01", "state", {"faults": [[1]]})
    _send(floor, "ROU-02", "state", {"devices": {"wheel": {"faults": [{"x": 1}]}}})
    _send(floor, "ROU-03", "status", {"state": ["online"]})
    assert floor.malformed == {"bad_field": 3}
    assert floor.tables() == []
    assert "waiting for tables" in page(floor, "floor")


def test_every_field_is_checked_and_strings_are_bounded() -> None:
    floor = Floor(P)
    _send(floor, "T", "state", _state("T", 1, phase="p" * 10_000, faults=["f" * 10_000]))
    tile = floor.tile("T")
    assert tile is not None
    assert tile.phase is not None
    assert len(tile.phase) <= 200
    assert all(len(f) <= 200 for f in tile.faults)
    assert floor.ingest(f"{P}/T/state", b"x" * 70_000) is None
    assert floor.malformed == {"too_large": 1}
    assert floor.ingest(f"{P}/{'T' * 65}/status", b"{}") is None
    assert floor.malformed["bad_topic"] == 1


def test_a_feed_counts_and_logs_each_reason_once_per_interval(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from tablectl.controller.tools.dashboard.subscriber import FloorFeed  # noqa: PLC0415

    now = [1_800_000_000.0]
    feed = FloorFeed(Floor(P), clock=lambda: now[0])
    for _ in range(5):
        feed.ingest(f"{P}/T/events", b'{"seq":[1]}')
    feed.ingest(f"{P}/T/events", DEEP)
    now[0] += 61
    feed.ingest(f"{P}/T/events", b'{"seq":[1]}')
    captured = capsys.readouterr()
    err = captured.out + captured.err
    assert feed.floor.malformed == {"bad_field": 6, "too_deep": 1}
    lines = [line for line in err.splitlines() if "dashboard_malformed" in line]
    assert len(lines) == 3, err  # bad_field, too_deep, bad_field again a minute later
    assert "more_since_last=4" in lines[2] or '"more_since_last": 4' in lines[2]


# --- 6. forged data never outlasts the real data ------------------------------------------------


def test_a_forged_outcome_far_ahead_is_never_the_last_outcome() -> None:
    floor = Floor(P)
    chain = Chain("ROU-01")
    _table(floor, chain, 5)
    forged = Chain("ROU-01")
    forged.seq, forged.head = 10**15 - 1, chain.head
    _send(floor, "ROU-01", "events", forged.spin(0))
    tile = floor.tile("ROU-01")
    assert tile is not None
    assert tile.last_outcome is not None
    assert tile.last_outcome.seq == chain.seq
    assert floor.spins("ROU-01") == (1, 2, 3, 4, 5)
    # The table goes on: its own outcomes are shown, the forgery never.
    _send(floor, "ROU-01", "events", chain.spin(7))
    _send(floor, "ROU-01", "state", _state("ROU-01", chain.seq))
    assert floor.spins("ROU-01") == (1, 2, 3, 4, 5, 7)
    assert all(e.seq != 10**15 for e in floor.history("ROU-01"))


@pytest.mark.parametrize("skip", [0, 1])
def test_forged_outcomes_for_the_next_seqs_neither_show_nor_hide_the_real_ones(skip: int) -> None:
    floor = Floor(P)
    chain = Chain("ROU-01")
    _table(floor, chain, 5)
    # 300 forged zeros from the next seq on (or one further: an island the dashboard cannot
    # link yet), chained among themselves from a made-up hash.
    prev = "b" * 64
    for seq in range(chain.seq + 1 + skip, chain.seq + 301 + skip):
        record_hash = hashlib.sha256(f"forged{seq}".encode()).hexdigest()
        body = {
            "seq": seq,
            "type": "outcome",
            "game": "roulette",
            "status": "settled",
            "result": {"number": 0},
            "prev_hash": prev,
            "hash": record_hash,
        }
        _send(floor, "ROU-01", "events", body)
        prev = record_hash
    assert floor.spins("ROU-01") == (1, 2, 3, 4, 5)
    # The real ones come: none is a "duplicate", every forged zero is gone.
    for number in (17, 22, 31):
        _send(floor, "ROU-01", "events", chain.record("bets_closed"))
        _send(floor, "ROU-01", "events", chain.spin(number))
        _send(floor, "ROU-01", "state", _state("ROU-01", chain.seq))
    assert floor.spins("ROU-01") == (1, 2, 3, 4, 5, 17, 22, 31)
    tile = floor.tile("ROU-01")
    assert tile is not None
    assert tile.last_outcome is not None
    assert tile.last_outcome.numbers == (31,)
    assert floor.refused["unlinked"] >= 300


def test_records_lacking_continuity_are_shown_once_the_state_covers_them() -> None:
    floor = Floor(P)
    chain = Chain("ROU-01")
    for _ in range(10):
        chain.record("bets_closed")  # published before the dashboard started
    _send(floor, "ROU-01", "state", _state("ROU-01", chain.seq))
    _send(floor, "ROU-01", "events", chain.spin(9))  # no predecessor seen: one past the state
    assert floor.spins("ROU-01") == (9,)
    _send(floor, "ROU-01", "events", chain.spin(4))  # links: shown though ahead of the state
    assert floor.spins("ROU-01") == (9, 4)


def test_a_chain_valid_fork_is_shown_with_a_warning() -> None:
    floor = Floor(P)
    chain = Chain("ROU-01")
    _table(floor, chain, 2)
    head = chain.head
    real = chain.spin(8)
    fork = Chain("ROU-01")
    fork.seq, fork.head = chain.seq - 1, head
    _send(floor, "ROU-01", "events", fork.spin(0))
    _send(floor, "ROU-01", "events", real)
    tile = floor.tile("ROU-01")
    assert tile is not None
    assert f"two records claim seq {chain.seq}" in tile.warnings


def test_devices_and_tables_are_capped_and_forgotten_when_cleared() -> None:
    floor = Floor(P, max_tables=10, max_devices=4)
    chain = Chain("ROU-01")
    _table(floor, chain, 1)
    for i in range(50):
        _send(floor, "ROU-01", f"devices/d{i}", {"available": False, "faults": ["x"]})
    tile = floor.tile("ROU-01")
    assert tile is not None
    assert len(tile.devices) == 4
    assert floor.refused["devices"] == 46
    for i in range(30):
        _send(floor, f"FAKE-{i}", "status", {"state": "online"})
    assert len(floor.tables()) == 10
    assert floor.refused["tables"] == 21
    # An event-only table (no retained topic) makes room for one with a retained topic.
    for i in range(9):
        _send(floor, f"FAKE-{i}", "status", b"")  # cleared: gone
    assert floor.tables() == ["ROU-01"]
    _send(floor, "ROU-01", "devices/d0", b"")
    tile = floor.tile("ROU-01")
    assert tile is not None
    assert "d0" not in [d.device for d in tile.devices]
    html = "".join(f.html for f in fragments(floor, "floor"))
    assert "FAKE-0" not in html
    assert fragments(floor, "table", "FAKE-0")[1].html == ""  # the tile's removal


def test_event_only_tables_make_room_for_retained_ones() -> None:
    floor = Floor(P, max_tables=3)
    for i in range(3):
        _send(floor, f"JUNK-{i}", "events", Chain(f"JUNK-{i}").record("bets_closed"))
    _send(floor, "ROU-01", "status", {"state": "online"})
    assert "ROU-01" in floor.tables()
    assert len(floor.tables()) == 3


# --- 8. printable text --------------------------------------------------------------------------


def test_bidi_controls_are_removed_from_every_shown_id() -> None:
    floor = Floor(P)
    table = "ROU-\u202e10-UOR"
    _send(floor, table, "status", {"state": "online"})
    state = {"game": "roulette", "phase": "open\u2066x", "faults": ["a\u200fb"]}
    _send(floor, table, "state", state)
    html = page(floor, "floor")
    for control in ("\u202e", "\u2066", "\u200f"):
        assert control not in html
    assert "ROU-10-UOR" in html
    assert printable("ROU-\u202e10-UOR") == "ROU-10-UOR"
    assert printable("a\x1b[31mb\nc") == "a [31mb c"


# --- watch's reading ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("topic", "payload"),
    [
        *(("p/T/events", p) for p in PER_LEAF["events"]),
        *((f"p/T/{leaf}", p) for leaf in ("events", "status", "outcome") for p in ANYWHERE),
    ],
)
def test_watch_reads_every_payload_without_raising(topic: str, payload: bytes) -> None:
    assert MessageFilter().is_new(topic, payload)
    line = format_message(topic, payload)
    assert line is not None
    assert line.kind == "other"
    assert len(line.text) < 200


@pytest.mark.parametrize(
    ("payload", "reason"),
    [
        (DEEP, "too_deep"),
        (b'{"a":' * 40 + b"1" + b"}" * 40, "too_deep"),
        (b"{}" + b" " * 70_000, "too_large"),
        ('{"seq": 1}'.encode("utf-16"), "not_json"),  # tables publish UTF-8 only
        (b"not json", "not_json"),
        (b'{"state": "\\ud800"}', "not_json"),  # a lone surrogate
        (b'{"seq": NaN}', "bad_number"),
        (b'{"seq": Infinity}', "bad_number"),
        (b'{"seq": ' + b"1" * 33 + b"}", "bad_number"),
        (b"[1]", "not_object"),
    ],
)
def test_a_payload_the_bounded_reader_refuses_is_counted_by_its_reason(
    payload: bytes, reason: str
) -> None:
    # The reader itself: core/test_bounded_json.py; here, what the dashboard counts.
    floor = Floor(P)
    assert floor.ingest(f"{P}/T/status", payload) is None
    assert floor.malformed == {reason: 1}
    assert floor.ingest(f"{P}/T/status", b'{"state": "online"}') == "T"
    assert floor.malformed == {reason: 1}


def test_watch_de_duplicates_by_seq_and_hash() -> None:
    seen = MessageFilter()
    real = b'{"seq": 5, "type": "x", "hash": "aa", "prev_hash": "00"}'
    forged = b'{"seq": 5, "type": "x", "hash": "bb", "prev_hash": "00"}'
    assert seen.is_new("p/T/events", forged)
    assert seen.is_new("p/T/events", real)
    assert not seen.is_new("p/T/events", real)
    assert seen.is_new("p/T/status", b'{"state": "online"}')
    assert seen.is_new("p/T/status", b"")  # cleared
    assert seen.is_new("p/T/status", b'{"state": "online"}')


# --- 8. the login's throttle ---------------------------------------------------------------------


async def test_the_throttle_delays_exponentially_per_key_and_forgets_a_success() -> None:
    now = [100.0]
    throttle = Throttle(first=0.5, most=8.0, clock=lambda: now[0])
    keys = ["source 10.0.0.1", "user pit"]
    assert throttle.delay(keys) == 0
    steps = [throttle.failed(keys) for _ in range(6)]
    assert steps == [0.5, 1.0, 2.0, 4.0, 8.0, 8.0]
    assert throttle.delay(["source 10.0.0.1"]) == 8.0
    assert throttle.delay(["user pit"]) == 8.0
    assert throttle.delay(["source 10.0.0.2", "user boss"]) == 0  # anyone else: no wait
    now[0] += 8.0
    assert throttle.delay(keys) == 0
    throttle.succeeded(keys)
    assert throttle.failed(keys) == 0.5


async def test_the_throttle_lets_a_few_wait_and_refuses_more() -> None:
    import asyncio  # noqa: PLC0415

    throttle = Throttle(first=0.2, queue=2)
    keys = ["source a"]
    throttle.failed(keys)
    entered: list[int] = []

    async def attempt(n: int) -> None:
        async with throttle.turn(keys):
            entered.append(n)

    first = asyncio.create_task(attempt(1))
    second = asyncio.create_task(attempt(2))
    await asyncio.sleep(0.01)
    with pytest.raises(BusyError):
        async with throttle.turn(keys):
            pass
    await asyncio.gather(first, second)
    assert entered == [1, 2]


def test_an_outcome_older_than_the_links_kept_is_not_shown() -> None:
    """Issue 26 (the hostile lane found it): forged outcomes at seqs whose records the dashboard
    has already forgotten (past LINKS) could not be linked, and were shown beside the table's own
    in its history, billboard and statistics."""
    floor = Floor("tablectl")
    chain = Chain("ROU-01")
    topic = "tablectl/ROU-01"
    floor.ingest(f"{topic}/status", b'{"state":"online"}', retained=True)
    for n in range(350):
        for body in (chain.record("bets_closed"), chain.spin(n % 36 + 1)):
            floor.ingest(f"{topic}/events", json.dumps(body).encode())
    floor.ingest(f"{topic}/state", json.dumps(chain.state()).encode(), retained=True)
    forged = Chain(chain.table)
    forged.seq, forged.head = 49, "f" * 64
    for _ in range(20):
        assert floor.ingest(f"{topic}/events", json.dumps(forged.spin(0)).encode()) is None
    seqs = [entry.seq for entry in floor.history("ROU-01")]
    assert len(seqs) == 350
    assert len(set(seqs)) == len(seqs)  # the table's own, once each
    assert floor.refused["unlinked"] >= 20
