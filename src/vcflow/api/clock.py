"""Time as an injected dependency: pure code takes `now`, shells take a Clock.

FakeClock drives tests and the conformance runner's virtual time.
"""

from __future__ import annotations

import re
import time
from datetime import UTC, datetime, timedelta
from fractions import Fraction
from typing import Protocol


class Clock(Protocol):
    def now(self) -> datetime:
        """Current time, timezone-aware UTC."""
        ...

    def monotonic(self) -> float:
        """Seconds on a clock that never goes back (for timers and backoff)."""
        ...


class SystemClock:
    def now(self) -> datetime:
        return datetime.now(UTC)

    def monotonic(self) -> float:
        return time.monotonic()


class FakeClock:
    """A clock that moves only when told to."""

    def __init__(self, start: datetime | None = None) -> None:
        self._now = start or datetime(2026, 1, 1, tzinfo=UTC)
        self._mono = 0.0

    def now(self) -> datetime:
        return self._now

    def monotonic(self) -> float:
        return self._mono

    def advance(self, seconds: float) -> None:
        self._now += timedelta(seconds=seconds)
        self._mono += seconds


def rfc3339(moment: datetime) -> str:
    """Kubernetes' timestamp format: second precision, `Z` suffix. (Formatted by hand: the
    controllers stamp every status change, and `strftime` costs twice as much.)"""
    if moment.tzinfo is not UTC:
        moment = moment.astimezone(UTC)
    return (
        f"{moment.year:04d}-{moment.month:02d}-{moment.day:02d}"
        f"T{moment.hour:02d}:{moment.minute:02d}:{moment.second:02d}Z"
    )


_CANONICAL = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z\Z")


def parse_rfc3339(text: str) -> datetime:
    """The inverse of `rfc3339`; ValueError for anything else. The canonical form goes to
    `fromisoformat` (far cheaper than `strptime`, which takes the rest, as before)."""
    if _CANONICAL.match(text):
        return datetime.fromisoformat(text)
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)


def micro_time(moment: datetime) -> str:
    """Kubernetes' MicroTime (Leases, the events API): RFC 3339 with microseconds, UTC."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_time(text: str) -> datetime:
    """A Kubernetes Time or MicroTime (`...:05Z`, `...:05.000123Z`); ValueError otherwise."""
    if "." not in text:
        return parse_rfc3339(text)
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)


def go_duration(seconds: float) -> str:
    """A duration as Go's `time.Duration.String()` writes it for whole seconds: `2m45s`."""
    total = int(seconds)
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes}m{secs}s"
    if minutes:
        return f"{minutes}m{secs}s"
    return f"{secs}s"


_UNITS = {
    "ns": 1,
    "us": 10**3,
    "\u00b5s": 10**3,  # µ (micro sign)
    "\u03bcs": 10**3,  # μ (Greek mu)
    "ms": 10**6,
    "s": 10**9,
    "m": 60 * 10**9,
    "h": 3600 * 10**9,
}
_GO_PART = re.compile(r"(\d*)(?:\.(\d*))?([a-zµμ]*)")
#: The longest Go duration (`time.Duration` is int64 nanoseconds: about 292 years).
MAX_GO_NANOS = 2**63 - 1
#: The longest time any timer of vcflow waits, in seconds (2^31-1: 68 years, the bound of
#: Kubernetes' `activeDeadlineSeconds`); a stored value beyond it waits this long, since
#: Python's clocks and waits overflow far sooner than int64.
MAX_SECONDS = 2**31 - 1


def parse_go_duration(text: str) -> float | None:
    """Seconds of a Go duration string (`1h2m3.5s`, `150ms`, `-1.5h`), as Go's
    `time.ParseDuration` reads it; None when it is not one or is longer than Go's (int64
    nanoseconds)."""
    if text in ("0", ""):
        return 0.0
    sign, rest = (-1, text[1:]) if text[:1] == "-" else (1, text.removeprefix("+"))
    if not rest or rest == "0":
        return 0.0 if rest else None
    total, pos = Fraction(0), 0
    while pos < len(rest):
        match = _GO_PART.match(rest, pos)
        if match is None:  # (never: every part of the pattern may be empty)
            return None
        whole, frac, unit = match.group(1), match.group(2), match.group(3)
        if not (whole or frac) or unit not in _UNITS or len(whole) > 20:
            return None
        total += Fraction(f"{whole or 0}.{(frac or '0')[:20]}") * _UNITS[unit]
        if total > MAX_GO_NANOS:
            return None
        pos = match.end()
    return sign * float(total) / 1e9


def clamped_seconds(seconds: float) -> float:
    """`seconds` within ±MAX_SECONDS: what a timer may wait."""
    return max(-MAX_SECONDS, min(MAX_SECONDS, seconds))


def later(moment: datetime, seconds: float) -> datetime:
    """`moment` plus `seconds` (clamped: a stored value out of range never overflows)."""
    return moment + timedelta(seconds=clamped_seconds(seconds))
