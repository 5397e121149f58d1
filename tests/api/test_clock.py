"""Kubernetes timestamps: `rfc3339` formats by hand and `parse_rfc3339` takes a fast path for
the canonical form; both must agree with `strftime`/`strptime` on what they accept."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vcflow.api.clock import MAX_SECONDS, later, parse_go_duration, parse_rfc3339, rfc3339

# (years before 1000: `strftime` does not pad them to four digits, as RFC 3339 wants)
MOMENTS = st.datetimes(
    min_value=datetime(1000, 1, 1), max_value=datetime(9999, 12, 30), timezones=st.just(UTC)
)


@given(MOMENTS)
def test_formatting_and_parsing_agree_with_the_standard_library(moment: datetime) -> None:
    text = rfc3339(moment)
    assert text == moment.strftime("%Y-%m-%dT%H:%M:%SZ")
    assert parse_rfc3339(text) == datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    assert parse_rfc3339(text) == moment.replace(microsecond=0)


def test_other_zones_are_written_in_utc() -> None:
    east = timezone(timedelta(hours=2))
    assert rfc3339(datetime(2026, 1, 1, 1, 30, tzinfo=east)) == "2025-12-31T23:30:00Z"


def test_non_canonical_text_is_parsed_as_strptime_would() -> None:
    assert parse_rfc3339("2026-1-2T3:4:5Z") == datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)


@pytest.mark.parametrize(
    "text",
    [
        "2026-13-01T00:00:00Z",
        "2026-01-01T00:00:60Z",
        "2026-01-01 00:00:00Z",
        "2026-01-01T00:00:00",
        "2026-01-01T00:00:00+00:00",
        "2026-01-01T00:00:00.5Z",
        "2026-W01-1T00:00:00Z",
        "",
    ],
)
def test_anything_else_is_refused(text: str) -> None:
    with pytest.raises(ValueError):
        parse_rfc3339(text)


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("0", 0.0),
        ("1h2m3.5s", 3723.5),
        ("150ms", 0.15),
        ("-1.5h", -5400.0),
        ("+5s", 5.0),
        (".5s", 0.5),
        ("1\u00b5s", 1e-6),
        ("2562047h", 2562047 * 3600.0),  # Go's longest whole-hour duration
    ],
)
def test_go_durations_read_as_go_reads_them(text: str, seconds: float) -> None:
    assert parse_go_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["1.5", "abc", "1h30", "1d", "2562048h", "9" * 5000 + "h"])
def test_what_go_refuses_is_no_duration(text: str) -> None:
    assert parse_go_duration(text) is None  # beyond int64 nanoseconds too: no overflow later


def test_a_time_that_far_away_is_clamped_not_overflowed() -> None:
    start = datetime(2026, 1, 1, tzinfo=UTC)
    assert later(start, 10**18) == start + timedelta(seconds=MAX_SECONDS)
    assert later(start, 30) == start + timedelta(seconds=30)
