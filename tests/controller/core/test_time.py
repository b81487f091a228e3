"""The one time module: what tablectl writes, and the rule that naive times are refused."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tablectl.controller.core.errors import TimeFormatError
from tablectl.controller.core.time import (
    earlier,
    format_moment,
    format_ts,
    not_before,
    parse_moment,
    parse_ts,
    parse_ts_seconds,
)


def test_the_written_form_is_utc_with_z_and_microseconds() -> None:
    assert format_ts(0) == "1970-01-01T00:00:00.000000Z"
    moment = datetime(2026, 11, 30, 11, 0, 0, 123456, tzinfo=timezone(timedelta(hours=1)))
    assert format_moment(moment) == "2026-11-30T10:00:00.123456Z"
    assert format_moment(moment, "seconds") == "2026-11-30T10:00:00Z"


@given(st.floats(min_value=0, max_value=4e9, allow_nan=False))
def test_what_is_written_reads_back(at: float) -> None:
    text = format_ts(at)
    assert parse_ts_seconds(text) == pytest.approx(at, abs=1e-6)
    assert format_moment(parse_ts(text) or datetime.min) == text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-11-30T10:00:00Z", datetime(2026, 11, 30, 10, tzinfo=UTC)),
        ("2026-11-30T11:00:00+01:00", datetime(2026, 11, 30, 10, tzinfo=UTC)),
        ("2026-11-30T10:00:00.5+00:00", datetime(2026, 11, 30, 10, 0, 0, 500000, tzinfo=UTC)),
    ],
)
def test_times_with_a_zone_read_as_utc(text: str, expected: datetime) -> None:
    assert parse_ts(text) == expected
    assert parse_moment(text, "--since") == expected


@pytest.mark.parametrize(
    "text",
    ["2026-11-30T10:00:00", "2026-11-30", "yesterday", "", "2026-11-30T10:00:00Z" + " " * 40, 5],
)
def test_naive_and_non_iso_times_are_no_time(text: object) -> None:
    assert parse_ts(text) is None
    assert parse_ts_seconds(text) is None


def test_a_person_is_told_why_a_time_is_refused() -> None:
    with pytest.raises(TimeFormatError, match=r"--since: '2026-11-30T10:00' has no zone; add Z"):
        parse_moment("2026-11-30T10:00", "--since")
    with pytest.raises(TimeFormatError, match=r"--until: not an ISO date/time: 'soon'"):
        parse_moment("soon", "--until")
    assert issubclass(TimeFormatError, ValueError)


@given(st.floats(min_value=0, max_value=4e9), st.floats(min_value=0, max_value=4e9))
def test_written_times_order_as_text(a: float, b: float) -> None:
    first, second = format_ts(a), format_ts(b)
    assert earlier(first, second) is (
        datetime.fromisoformat(first) < datetime.fromisoformat(second)
    )


@pytest.mark.parametrize(
    ("ts", "than", "expected"),
    [
        ("2026-11-30T10:00:00.000000Z", "2026-11-30T10:00:00.000001Z", True),
        ("2026-11-30T11:00:00+01:00", "2026-11-30T10:00:00.000001Z", True),
        ("2026-11-30T10:00:00Z", "2026-11-30T10:00:00.000000Z", False),
        ("2026-11-30T10:00:00", "2026-11-30T11:00:00.000000Z", None),  # naive: no time
        ("soon", "2026-11-30T11:00:00.000000Z", None),
    ],
)
def test_earlier_parses_only_what_is_not_written_form(
    ts: str, than: str, *, expected: bool | None
) -> None:
    assert earlier(ts, than) is expected
    assert not_before(ts, than) == (than if expected else ts)
