"""What an archiver says about itself: alarms with stable codes, the retained status (pure)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from tablectl.controller.archive.chains import ChainBreak, ChainState, Gap, GapChange, Walk
from tablectl.controller.archive.status import ArchiveStatus
from tablectl.controller.archive.verifier import KeyRing, TablePass

T0 = datetime(2026, 11, 30, 10, 0, tzinfo=UTC)


def _pass(**kw: object) -> TablePass:
    base: dict[str, object] = {
        "table": "ROU-01",
        "walk": Walk(ChainState(10, "a" * 64), checked=10, withheld=1, anchors=2),
        "gaps": GapChange(),
        "resends": [],
        "last_seq": 10,
    }
    return TablePass(**{**base, **kw})  # type: ignore[arg-type]


def test_topics_live_beside_the_tables() -> None:
    status = ArchiveStatus("tablectl", "arch-1", share="archive")
    assert status.status_topic == "tablectl/_archive/arch-1/status"
    assert status.alarms_topic == "tablectl/_archive/arch-1/alarms"


def test_a_gap_is_reported_at_each_request_until_filled() -> None:
    status = ArchiveStatus("tablectl", "arch-1")
    gap = Gap("ROU-01", 11, 14, T0, requests=1)
    asked = status.passed(
        _pass(gaps=GapChange(open=[gap]), resends=[gap], last_seq=15), T0 + timedelta(seconds=5)
    )
    assert [(a["code"], a["table"], a["from_seq"], a["to_seq"], a["requests"]) for a in asked] == [
        ("gap", "ROU-01", 11, 14, 2)
    ]
    now = status.status(T0)
    assert (now["gaps_open"], now["missing"], now["gaps"][0]["from_seq"]) == (1, 4, 11)
    filled = status.passed(_pass(gaps=GapChange(filled=[gap])), T0 + timedelta(seconds=6))
    assert [a["code"] for a in filled] == ["gap_filled"]
    assert status.status(T0)["gaps_open"] == 0
    assert status.counters.gaps_filled == 1
    # A gap that was never asked for (records arriving out of order) is not news.
    quiet = Gap("ROU-01", 20, 20, T0)
    assert status.passed(_pass(gaps=GapChange(filled=[quiet])), T0) == []


def test_a_break_is_alarmed_once_and_listed_in_every_status() -> None:
    status = ArchiveStatus("tablectl", "arch-1")
    why = "content does not match its hash"
    broke = ChainBreak("ROU-01", 57, why)
    state = ChainState(56, "b" * 64, 57, why)
    [alarm] = status.passed(_pass(walk=Walk(state, broke=broke), broke=broke), T0)
    assert (alarm["code"], alarm["table"], alarm["seq"], alarm["reason"]) == (
        "chain_broken",
        "ROU-01",
        57,
        why,
    )
    assert status.passed(_pass(walk=Walk(state)), T0) == []
    assert status.status(T0)["broken"] == [{"table": "ROU-01", "seq": 57, "reason": why}]


def test_the_database_going_and_coming_is_said_once_each() -> None:
    status = ArchiveStatus("tablectl", "arch-1")
    assert status.database(True, "connected", T0) is None
    gone = status.database(False, "connection refused", T0)
    assert gone is not None
    assert (gone["code"], gone["detail"]) == ("db_unavailable", "connection refused")
    assert status.database(False, "again", T0) is None
    back = status.database(True, "connected", T0)
    assert back is not None
    assert back["code"] == "db_available"
    assert status.status(T0)["db"] == "available"


def test_the_goodbye_carries_the_final_counters_the_will_does_not() -> None:
    status = ArchiveStatus("tablectl", "arch-1")
    status.counters.stored = 42
    assert status.offline() == {"schema": 1, "archive": "arch-1", "state": "offline"}
    goodbye = status.offline(T0)
    assert (goodbye["state"], goodbye["counters"]["stored"]) == ("offline", 42)


def test_the_status_says_whose_authorship_is_unverified() -> None:
    """Issue 26: without the tables' key the archive stores records in order, not proven theirs,
    and says so; with a key for some tables only, it names the others it has seen."""
    unkeyed = ArchiveStatus("tablectl", "arch-1")
    assert unkeyed.status(T0)["authorship"]["state"] == "unverified"
    keyed = ArchiveStatus("tablectl", "arch-1", keys=KeyRing(default=b"k" * 32))
    assert keyed.status(T0)["authorship"] == {"state": "keyed"}
    partial = ArchiveStatus("tablectl", "arch-1", keys=KeyRing(per_table={"ROU-01": b"k" * 32}))
    partial.passed(_pass(), T0)
    partial.passed(_pass(table="BAC-02"), T0)
    assert partial.status(T0)["authorship"] == {"state": "partial", "unverified": ["BAC-02"]}
