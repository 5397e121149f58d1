"""Events of the events API (`events.k8s.io/v1 Event`) and their conversion to and from
core `v1 Event`, field for field as kube-apiserver converts them (both are one storage):
`regarding` is `involvedObject`, `note` is `message`, `reportingController` is
`reportingComponent`, `deprecatedSource/FirstTimestamp/LastTimestamp/Count` are `source`,
`firstTimestamp`, `lastTimestamp`, `count`. Also the API server's checks of an events API
create. Used by the server (it serves both) and `kubestore` (it writes through this one).
Pure: no I/O, no clock.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from vcflow.api import clock, names
from vcflow.api.errors import FieldError
from vcflow.api.event import EventSeries, EventSource, ObjectReference
from vcflow.api.meta import Resource

API_VERSION = "events.k8s.io/v1"
#: core v1 field -> events.k8s.io/v1 field
_TO_V1 = {
    "involvedObject": "regarding",
    "message": "note",
    "reportingComponent": "reportingController",
    "source": "deprecatedSource",
    "firstTimestamp": "deprecatedFirstTimestamp",
    "lastTimestamp": "deprecatedLastTimestamp",
    "count": "deprecatedCount",
}
_TO_CORE = {v1: core for core, v1 in _TO_V1.items()}
#: the lengths kube-apiserver allows (ReportingInstanceLengthLimit, ActionLengthLimit...)
_LIMITS = {"reportingInstance": 128, "action": 128, "reason": 128}
NOTE_LIMIT = 1024


class EventV1(Resource):
    """An events.k8s.io/v1 Event (the served shape; stored as a core v1 Event)."""

    api_version: Literal["events.k8s.io/v1"] = "events.k8s.io/v1"
    kind: Literal["Event"] = "Event"
    event_time: str | None = None
    series: EventSeries | None = None
    reporting_controller: str | None = None
    reporting_instance: str | None = None
    action: str | None = None
    reason: str | None = None
    regarding: ObjectReference = Field(default_factory=ObjectReference)
    related: ObjectReference | None = None
    note: str | None = None
    type: str | None = None
    deprecated_source: EventSource | None = None
    deprecated_first_timestamp: str | None = None
    deprecated_last_timestamp: str | None = None
    deprecated_count: int | None = None


def to_v1(core: dict[str, Any]) -> dict[str, Any]:
    """A core v1 Event (wire form) as an events.k8s.io/v1 one."""
    found = {_TO_V1.get(key, key): value for key, value in core.items()}
    found["apiVersion"] = API_VERSION
    return found


def to_core(event: dict[str, Any]) -> dict[str, Any]:
    """An events.k8s.io/v1 Event (wire form) as a core v1 one."""
    found = {_TO_CORE.get(key, key): value for key, value in event.items()}
    found["apiVersion"] = "v1"
    return found


def field_to_core(path: str) -> str:
    """A field selector's field of the events API as core v1 names it
    (`regarding.name` -> `involvedObject.name`)."""
    head, dot, rest = path.partition(".")
    return _TO_CORE.get(head, head) + dot + rest


micro_time = clock.micro_time


def create_errors(event: dict[str, Any]) -> list[FieldError]:
    """What kube-apiserver refuses in an events.k8s.io/v1 create (ValidateEventCreate):
    `eventTime`, `reportingController` (a qualified name), `reportingInstance`, `action`
    and `reason` required, `type` Normal or Warning, the deprecated fields unset, a
    `series` of at least 2 with its `lastObservedTime`, a note of at most 1 kB."""
    errors: list[FieldError] = []

    def refuse(path: str, message: str) -> None:
        errors.append(FieldError(message, path))

    for path in ("eventTime", "reportingController", "reportingInstance", "action", "reason"):
        if not event.get(path):
            refuse(path, "Required value")
    controller = event.get("reportingController")
    if isinstance(controller, str) and controller:
        for problem in names.label_key_errors(controller):
            refuse("reportingController", f"Invalid value: {controller!r}: {problem}")
    for path, limit in _LIMITS.items():
        value = event.get(path)
        if isinstance(value, str) and len(value) > limit:
            refuse(path, f"Too long: may not be longer than {limit}")
    note = event.get("note")
    if isinstance(note, str) and len(note.encode()) > NOTE_LIMIT:
        refuse("note", f"Too long: may not be longer than {NOTE_LIMIT}")
    if event.get("type") not in ("Normal", "Warning"):
        refuse("type", f"Invalid value: {event.get('type')!r}: has invalid value")
    for path in ("deprecatedSource", "deprecatedFirstTimestamp", "deprecatedLastTimestamp"):
        if event.get(path):
            refuse(path, "Invalid value: needs to be unset")
    if event.get("deprecatedCount"):
        refuse("deprecatedCount", "Invalid value: needs to be unset")
    series = event.get("series")
    if isinstance(series, dict):
        if not isinstance(series.get("count"), int) or series["count"] < 2:
            refuse("series.count", "Invalid value: should be at least 2")
        if not series.get("lastObservedTime"):
            refuse("series.lastObservedTime", "Required value")
    return errors
