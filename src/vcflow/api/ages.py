"""kubectl's ages: `duration.HumanDuration` of k8s.io/apimachinery, and the age of an
RFC 3339 time as `kubectl get` and `describe` print it. Used by the printer columns
(`kubeapi.columns`: `vcflow get` and the server's Table responses) and `vcflow describe`. Pure:
the time is an argument.
"""

from __future__ import annotations

from datetime import datetime

from vcflow.api import clock

UNKNOWN = "<unknown>"


def age(timestamp: str | None, now: datetime) -> str:
    """kubectl's age of an RFC 3339 time or a MicroTime: `45s`, `3m12s`, `17m`, `5h3m`,
    `9h`, `3d4h`, `12d`."""
    if not timestamp:
        return UNKNOWN
    try:
        since = clock.parse_time(timestamp)
    except ValueError:
        return UNKNOWN
    return human_duration((now - since).total_seconds())


def human_duration(seconds: float) -> str:
    """k8s.io/apimachinery `duration.HumanDuration`, rule for rule."""
    total = int(seconds)
    if total < -1:
        return "<invalid>"
    if total < 0:
        return "0s"
    if total < 120:
        return f"{total}s"
    minutes = total // 60
    if minutes < 10:
        return _pair(minutes, "m", total % 60, "s")
    if minutes < 180:
        return f"{minutes}m"
    hours = minutes // 60
    if hours < 8:
        return _pair(hours, "h", minutes % 60, "m")
    if hours < 48:
        return f"{hours}h"
    days = hours // 24
    if hours < 24 * 8:
        return _pair(days, "d", hours % 24, "h")
    if hours < 24 * 365 * 2:
        return f"{days}d"
    if hours < 24 * 365 * 8:
        return _pair(days // 365, "y", days % 365, "d")
    return f"{days // 365}y"


def _pair(big: int, big_unit: str, small: int, small_unit: str) -> str:
    return f"{big}{big_unit}" if small == 0 else f"{big}{big_unit}{small}{small_unit}"
