"""Admission (issue 26): what the archive stores of a message, what it quarantines, and why (pure).

:func:`admit` is the one gate between the broker and ``records``: it must never raise, whatever
the bytes, and say either admitted or quarantined with a stable reason. Hypothesis throws JSON of
random shapes and sizes, random bytes and random envelopes at it; the cases below pin each bound.
"""

from __future__ import annotations

import argparse
import json
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tablectl.controller.archive.chains import MAX_RESEND, Gap, plan_resends
from tablectl.controller.archive.gate.admission import (
    MALFORMED,
    MAX_SEQ,
    REASONS,
    Admitted,
    Context,
    Head,
    Limits,
    Quarantined,
    admit,
    refusal_of,
    seq_horizon,
)
from tablectl.controller.archive.gate.options import add_bound_arguments, bounds_of
from tablectl.controller.archive.status import ALARMS_PER_WINDOW, ArchiveStatus
from tablectl.controller.archive.upkeep import Cadence
from tablectl.controller.core import bounded_json
from tablectl.controller.core.errors import ConfigError, MalformedError
from tablectl.controller.core.time import format_moment
from tablectl.controller.journal import canonical_json
from tests.controller.archive.published import publish_journal

NOW = datetime(2026, 12, 7, 12, 0, tzinfo=UTC)
HEX = "ab" * 32


def _record(seq: int = 1, ts: datetime | str = NOW, table: str = "T1", **extra: Any) -> bytes:
    moment = ts if isinstance(ts, str) else format_moment(ts)
    fields = {"table": table, "seq": seq, "ts": moment, "type": "outcome"}
    fields |= {"hash": HEX, "prev_hash": HEX, **extra}
    return canonical_json(fields).encode("utf-8")


def _context(head: Head | None = None, table: str = "T1", **limits: Any) -> Context:
    return Context(f"tablectl/{table}/events", table, NOW, head, Limits(**limits))


def _reason(payload: bytes, context: Context | None = None) -> str | None:
    verdict = admit(payload, context or _context())
    return verdict.reason if isinstance(verdict, Quarantined) else None


# -- never raises ---------------------------------------------------------------------------------

_json = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=40),
    lambda inner: st.lists(inner, max_size=6) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=60,
)
_envelope_keys = st.sampled_from(["table", "seq", "ts", "type", "hash", "prev_hash", "round"])


@given(value=_json)
@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
def test_any_json_is_admitted_or_quarantined_never_raised(value: Any) -> None:
    payload = json.dumps(value).encode("utf-8")
    verdict = admit(payload, _context())
    assert isinstance(verdict, Admitted | Quarantined)
    if isinstance(verdict, Quarantined):
        assert verdict.reason in REASONS
        assert verdict.reason != "error", verdict.detail


@given(
    fields=st.dictionaries(_envelope_keys, _json, max_size=7),
    seq=st.integers(min_value=-5, max_value=2**64),
    year=st.integers(min_value=1, max_value=9999),
    head=st.none() | st.tuples(st.integers(1, MAX_SEQ), st.integers(-800, 800)),
)
@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
def test_any_envelope_keeps_admitted_records_inside_the_windows(
    fields: dict[str, Any], seq: int, year: int, head: tuple[int, int] | None
) -> None:
    limits = Limits()
    at = Head(head[0], NOW + timedelta(days=head[1])) if head else None
    record = {
        "table": "T1",
        "seq": seq,
        "ts": f"{year:04d}-12-31T23:59:59Z",
        "type": "outcome",
        "hash": HEX,
        "prev_hash": HEX,
    }
    record |= fields
    verdict = admit(json.dumps(record).encode("utf-8"), _context(at))
    if isinstance(verdict, Quarantined):
        assert verdict.reason in REASONS
        assert verdict.reason != "error", verdict.detail
        return
    admitted = verdict.record
    assert 1 <= admitted.seq <= seq_horizon(at, NOW, limits)
    first, last = limits.months(NOW)
    assert first <= admitted.month <= last  # a partition only for the window's months
    assert admitted.ts <= NOW + limits.ts_ahead


@given(payload=st.binary(max_size=300))
@settings(max_examples=200)
def test_any_bytes_are_admitted_or_quarantined(payload: bytes) -> None:
    assert isinstance(admit(payload, _context()), Admitted | Quarantined)


# -- the bounds -----------------------------------------------------------------------------------


def test_a_journal_record_as_published_is_admitted(tmp_path: Any) -> None:
    for published in publish_journal(tmp_path / "j.sqlite", "T1", rounds=2, month="2026-11"):
        verdict = admit(published.payload, _context())
        assert isinstance(verdict, Admitted), verdict
        assert verdict.record.seq == published.seq


def test_the_size_cap_comes_first() -> None:
    limits = Limits()
    fits = _record(padding="x" * (limits.max_bytes - len(_record(padding=""))))
    assert len(fits) == limits.max_bytes
    assert _reason(fits) is None
    assert _reason(fits[:-1] + b' "') == "too_large" or _reason(fits + b" ") == "too_large"
    ten_megabytes = b"{" * 10_000_000
    start = time.monotonic()
    verdict = admit(ten_megabytes, _context())
    assert isinstance(verdict, Quarantined)
    assert (verdict.reason, verdict.seq) == ("too_large", None)
    assert time.monotonic() - start < 2  # never parsed (microseconds)


def test_json_nested_too_deep_is_refused_before_and_after_the_parser() -> None:
    assert _reason(_record(result=json.loads("[" * 31 + "]" * 31))) is None  # 32 deep
    assert _reason(_record(result=json.loads("[" * 32 + "]" * 32))) == "too_deep"
    assert _reason(b"[" * 30_000 + b"]" * 30_000) == "too_deep"  # 60 KB: the parser's limit
    assert _reason(b'{"a":' * 5_000 + b"1" + b"}" * 5_000) == "too_deep"
    # Brackets inside strings are not depth.
    assert _reason(_record(note="[" * 1_000)) is None


def test_a_wide_payload_is_walked_quickly() -> None:
    # 63 KB, 21,001 containers; a surrogate pair makes the reader look at every string too.
    wide = _record(result=[[]] * 21_000, note="S").replace(b'"S"', b'"\\ud83c\\udfb2"')
    start = time.monotonic()
    assert _reason(wide) is None
    assert time.monotonic() - start < 2  # ~30 ms here: milliseconds, not a hang


@pytest.mark.parametrize(
    ("payload", "reason"),
    [
        (b"\xff\xfe", "not_json"),
        (b"not json", "not_json"),
        (_record().replace(b'"seq":1', b'"seq":NaN'), "not_json"),
        (_record(n=1).replace(b'"n":1', b'"n":Infinity'), "not_json"),
        (_record(n=1).replace(b'"n":1', b'"n":-Infinity'), "not_json"),
        (_record(n=1).replace(b'"n":1', b'"n":' + b"9" * 33), "not_json"),  # int() is quadratic
        (_record(n=1).replace(b'"n":1', b'"n":' + b"9" * 5_000), "not_json"),
        (_record(note="S").replace(b'"S"', b'"\\ud800"'), "not_json"),
        (_record(note="S").replace(b'"S"', b'"\\udc00x"'), "not_json"),
        (_record().replace(b'"hash"', b'"\\udc00":1,"hash"'), "not_json"),  # in a key
        (b'{"seq":[1]}', "not_record"),
        (b'{"type":[]}', "not_record"),
        (b"[]", "not_record"),
        (_record(seq=0), "not_record"),
        (_record(seq=2**63), "not_record"),
        (_record(table="T2"), "not_record"),
        (_record(ts="0001-01-01T00:00:00+01:00"), "not_record"),
        (_record(ts="2026-12-07T12:00:00"), "not_record"),  # naive
        (_record().replace(HEX.encode(), b"x" * 64, 1), "not_record"),
        (_record(note="a\\u0000b").replace(b"\\\\u0000", b"\\u0000"), "not_record"),
    ],
)
def test_what_is_no_record_is_malformed(payload: bytes, reason: str) -> None:
    verdict = admit(payload, _context())
    assert isinstance(verdict, Quarantined), verdict
    assert (verdict.reason, verdict.malformed) == (reason, True), verdict.detail


def test_a_surrogate_pair_is_one_character_and_fine() -> None:
    assert _reason(_record(note="S").replace(b'"S"', b'"\\ud83c\\udfb2"')) is None


@pytest.mark.parametrize("table", ["", "x" * 65, "a b", "ROU/01", "é", "_archive\x00"])
def test_a_table_id_no_table_may_have_is_refused(table: str) -> None:
    verdict = admit(_record(table=table), _context(table=table))
    assert isinstance(verdict, Quarantined)
    assert verdict.reason == "bad_table"


def test_the_seq_window_is_counted_from_the_verified_head() -> None:
    head = Head(1_000, NOW - timedelta(seconds=60))
    limits = Limits()
    horizon = seq_horizon(head, NOW, limits)
    assert horizon == 1_000 + 100_000 + 600  # 60 s at 10 records a second
    assert _reason(_record(horizon), _context(head)) is None
    verdict = admit(_record(horizon + 1), _context(head))
    assert isinstance(verdict, Quarantined)
    assert (verdict.reason, verdict.seq) == ("seq_ahead", horizon + 1)
    assert not verdict.malformed
    assert _reason(_record(MAX_SEQ), _context(head)) == "seq_ahead"
    assert _reason(_record(10**9), _context(head)) == "seq_ahead"


def test_a_table_with_nothing_verified_gets_the_whole_history() -> None:
    limits = Limits()
    # A first start: the table's newest records may be far along (a year at 10 a second).
    assert seq_horizon(None, NOW, limits) == 100_000 + 10 * 400 * 86_400
    assert _reason(_record(300_000_000)) is None
    assert _reason(_record(10**9)) == "seq_ahead"
    assert _reason(_record(MAX_SEQ)) == "seq_ahead"
    # Its history, resent from its journal (>= 90 days), is dated up to max_age back.
    assert _reason(_record(1, NOW - timedelta(days=399))) is None
    assert _reason(_record(1, NOW - timedelta(days=401))) == "ts_too_old"
    assert _reason(_record(1, NOW + timedelta(minutes=59))) is None
    assert _reason(_record(1, NOW + timedelta(minutes=61))) == "ts_ahead"


def test_an_archive_that_was_away_takes_what_the_table_journaled_meanwhile() -> None:
    head = Head(5_000, NOW - timedelta(days=2))
    assert _reason(_record(5_000 + 100_000 + 10 * 86_400), _context(head)) is None


def test_times_after_the_head_may_not_be_older_than_it_by_more_than_the_slack() -> None:
    head = Head(1_000, NOW - timedelta(hours=3))
    assert _reason(_record(1_001, NOW - timedelta(hours=3, minutes=30)), _context(head)) is None
    verdict = admit(_record(1_001, NOW - timedelta(days=2)), _context(head))
    assert isinstance(verdict, Quarantined)
    assert verdict.reason == "ts_behind"
    assert "verified head" in verdict.detail
    # At or before the head (a redelivery, or a conflict the verifier names): max_age only.
    assert _reason(_record(999, NOW - timedelta(days=30)), _context(head)) is None
    assert _reason(_record(999, NOW - timedelta(days=500)), _context(head)) == "ts_too_old"


def test_the_poison_of_the_issue_is_quarantined() -> None:
    assert _reason(_record(2, "9999-12-31T23:59:59.000000Z")) == "ts_ahead"
    assert _reason(_record(2, "9999-12-31T23:59:59+00:00")) == "ts_ahead"
    assert _reason(_record(2, "1700-01-01T00:00:00Z")) == "ts_too_old"


def test_every_admitted_month_is_inside_the_window() -> None:
    first, last = Limits().months(NOW)
    assert (first.year, first.month, last.year, last.month) == (2025, 11, 2026, 12)
    months = set()
    for offset in range(-5_000, 5_000):
        verdict = admit(_record(1, NOW + timedelta(days=offset / 3)), _context())
        if isinstance(verdict, Admitted):
            months.add(verdict.record.month)
    assert len(months) <= 14
    assert all(first <= month <= last for month in months)


def test_a_defect_in_a_check_is_a_quarantine_not_an_exception(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from tablectl.controller.archive.gate import admission  # noqa: PLC0415

    def broken(*_: Any) -> int:
        raise ZeroDivisionError("a bug")

    monkeypatch.setattr(admission, "seq_horizon", broken)
    verdict = admit(_record(), _context())
    assert isinstance(verdict, Quarantined)
    assert (verdict.reason, verdict.detail) == ("error", "ZeroDivisionError: a bug")


def test_the_depth_cap_is_the_limit_given() -> None:
    record = _record(result=[1, {"b": []}])  # 4 deep
    assert _reason(record, _context(max_depth=4)) is None
    verdict = admit(record, _context(max_depth=3))
    assert isinstance(verdict, Quarantined)
    assert (verdict.reason, verdict.detail) == ("too_deep", "JSON nested deeper than 3")


def test_every_refusal_of_the_bounded_reader_is_a_malformed_reason_here() -> None:
    # The reader (tests/controller/core/test_bounded_json.py) is shared with the dashboard, whose
    # codes differ in two words; archive_quarantine.reason keeps the archive's.
    for reason in bounded_json.REASONS:
        code, detail = refusal_of(MalformedError(reason, "why"))
        assert code in REASONS
        assert code in MALFORMED
        assert detail == "why"
    assert refusal_of(MalformedError("bad_number", "NaN is not JSON"))[0] == "not_json"
    assert refusal_of(MalformedError("not_object", "a JSON list"))[0] == "not_record"


# -- resends, alarms, options ---------------------------------------------------------------------


def test_resend_requests_are_bounded_whatever_the_gap() -> None:
    huge = Gap("T1", 2, MAX_SEQ - 1, NOW)
    start = time.monotonic()
    requests, asked = plan_resends([huge], 4)
    assert time.monotonic() - start < 1  # four requests, not 9e14
    assert requests == [(2 + n * MAX_RESEND, 1 + (n + 1) * MAX_RESEND) for n in range(4)]
    assert asked == [huge]
    small = [Gap("T1", 5, 7, NOW), Gap("T1", 20, 20, NOW), Gap("T1", 30, 31, NOW)]
    requests, asked = plan_resends(list(reversed(small)), 2)
    assert requests == [(5, 7), (20, 20)]
    assert asked == small[:2]  # the third is not asked: not marked, due next pass
    assert plan_resends(small, 0) == ([], [])


def test_a_flood_of_refusals_is_a_few_alarms_that_say_how_many_were_held() -> None:
    status = ArchiveStatus("tablectl", "arch-1")
    item = Quarantined("ts_ahead", "late", "tablectl/T1/events", "T1", b"{}", 7)
    alarms = [status.quarantine(item, NOW, monotonic=100.0 + n / 1000) for n in range(100)]
    sent = [a for a in alarms if a is not None]
    assert len(sent) == ALARMS_PER_WINDOW
    assert (sent[0]["code"], sent[0]["table"], sent[0]["seq"], sent[0]["reason"]) == (
        "quarantined",
        "T1",
        7,
        "ts_ahead",
    )
    assert status.held_alarms(105.0) == []  # the window is not over
    [held] = status.held_alarms(111.0)  # it is: the last one held, and how many more
    assert (held["code"], held["suppressed"]) == ("quarantined", 89)
    assert status.held_alarms(112.0) == []
    for n in range(30):  # a second flood, told by the next alarm sent
        status.quarantine(item, NOW, monotonic=112.0 + n / 1000)
    later = status.quarantine(item, NOW, monotonic=122.0)
    assert later is not None
    assert later["suppressed"] == 21
    assert status.counters.quarantined == 131
    assert status.quarantined_by_reason == {"ts_ahead": 131}
    bad = Quarantined("too_deep", "deep", "tablectl/T1/events", "T1", b"[[")
    alarm = status.quarantine(bad, NOW, monotonic=111.0)
    assert alarm is not None
    assert (alarm["code"], alarm["topic"], alarm["reason"]) == (
        "malformed",
        "tablectl/T1/events",
        "too_deep",
    )
    assert status.counters.malformed == 1
    assert status.status(NOW)["quarantined"] == {"too_deep": 1, "ts_ahead": 131}


def _args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_bound_arguments(parser)
    return parser.parse_args(list(argv))


def test_the_options_and_their_defaults() -> None:
    limits, cadence = bounds_of(_args(), Cadence(gap_timeout=2))
    assert limits == Limits()
    assert (cadence.gap_timeout, cadence.resend_per_table, cadence.resend_per_pass) == (2, 4, 100)
    limits, cadence = bounds_of(
        _args("--max-message-bytes", "4096", "--ts-slack-back", "60", "--resend-per-pass", "9"),
        Cadence(),
    )
    assert (limits.max_bytes, limits.ts_back, cadence.resend_per_pass) == (
        4096,
        timedelta(minutes=1),
        9,
    )
    for bad in (("--max-json-depth", "1"), ("--seq-rate", "nan"), ("--resend-per-table", "0")):
        with pytest.raises(ConfigError, match=bad[0]):
            bounds_of(_args(*bad), Cadence())
