"""Time as an injected dependency: pure code takes `now`, shells take a Clock.

FakeClock drives tests and the conformance runner's virtual time.
"""

from __future__ import annotations

import re
import time
from datetime import UTC, datetime, timedelta
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


_UNITS = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}


def parse_go_duration(text: str) -> float | None:
    """Seconds of a Go duration string (`1h2m3.5s`, `150ms`); None when it is not one."""
    if text in ("0", ""):
        return 0.0
    parts = re.findall(r"(\d+(?:\.\d*)?|\.\d+)(h|ms|us|µs|ns|m|s)", text)
    if not parts or "".join(n + u for n, u in parts) != text.lstrip("+"):
        return None
    return sum(float(n) * _UNITS[u] for n, u in parts)
