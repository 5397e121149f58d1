"""KubeStore's Events through the events API (`events.k8s.io/v1`), as a cluster's
controllers are to write them: a core v1 `Event` of the controllers' `Recorder` goes out
with `eventTime` (MicroTime), `reportingController` "vcflow", `reportingInstance`,
`action` (its reason), `series` when it counts more than one, and no `deprecated*` field
(the API server refuses them on create); one read back gets core v1's `firstTimestamp`,
`lastTimestamp`, `count` and `source` again, from those, so `describe` shows it as
embedded. Used by `store` and `calls`.
"""

from __future__ import annotations

import socket
from datetime import UTC, datetime
from typing import Any

from vcflow.kubeapi import eventsv1

REPORTING_CONTROLLER = "vcflow"


def default_instance() -> str:
    """The `reportingInstance` of this process: `vcflow-<host name>` (a pod's name, in a
    cluster), at most 128 characters as the API server wants."""
    return f"{REPORTING_CONTROLLER}-{socket.gethostname()}"[:128]


def outgoing(core: dict[str, Any], *, instance: str) -> dict[str, Any]:
    """A core v1 Event (wire form) as the events API creates it."""
    event = eventsv1.to_v1(core)
    first = event.pop("deprecatedFirstTimestamp", None)
    last = event.pop("deprecatedLastTimestamp", None)
    count = event.pop("deprecatedCount", None) or 1
    event.pop("deprecatedSource", None)
    now = eventsv1.micro_time(datetime.now(UTC))
    event.setdefault("eventTime", _micro(first) or now)
    event.setdefault("reportingController", REPORTING_CONTROLLER)
    event.setdefault("reportingInstance", instance)
    event.setdefault("action", event.get("reason") or "Unknown")
    event.setdefault("type", "Normal")
    if count > 1 and "series" not in event:
        event["series"] = {"count": count, "lastObservedTime": _micro(last) or now}
    return event


def incoming(event: dict[str, Any]) -> dict[str, Any]:
    """An events API Event (wire form) as core v1, its legacy fields filled in from the
    new ones when it has none (`firstTimestamp` from `eventTime`, `lastTimestamp` and
    `count` from `series`, `source.component` from `reportingController`)."""
    core = eventsv1.to_core(event)
    when = _seconds(core.get("eventTime"))
    given = core.get("series")
    series: dict[str, Any] = given if isinstance(given, dict) else {}
    if when and not core.get("firstTimestamp"):
        core["firstTimestamp"] = when
    if when and not core.get("lastTimestamp"):
        core["lastTimestamp"] = _seconds(series.get("lastObservedTime")) or when
    if not core.get("count"):
        core["count"] = series.get("count") or 1
    source = core.get("source")
    if not (isinstance(source, dict) and source.get("component")) and core.get(
        "reportingComponent"
    ):
        core["source"] = {"component": core["reportingComponent"]}
    return core


def _micro(stamp: Any) -> str | None:
    """`2026-01-01T00:00:00Z` as MicroTime (`2026-01-01T00:00:00.000000Z`)."""
    if not isinstance(stamp, str) or not stamp.endswith("Z"):
        return None
    return stamp if "." in stamp else stamp[:-1] + ".000000Z"


def _seconds(stamp: Any) -> str | None:
    """MicroTime as core v1's second-precision Time."""
    if not isinstance(stamp, str) or not stamp.endswith("Z"):
        return None
    return stamp.split(".", 1)[0].removesuffix("Z") + "Z"
