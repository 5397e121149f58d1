"""Kubernetes-style Events (`v1 Event`): what controllers tell users about an object, shown
by `describe` and asserted by the conformance cases (`Created`, `SyncJobFlow`). The fields
of the events API (`eventTime`, `series`, `action`, `reportingComponent`...) are core v1's
too: `kubeapi.eventsv1` converts one shape to the other."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from vcflow.api.meta import Resource, WireModel


class ObjectReference(WireModel):
    api_version: str | None = None
    kind: str = ""
    namespace: str | None = None
    name: str = ""
    uid: str | None = None


class EventSource(WireModel):
    component: str | None = None
    host: str | None = None


class EventSeries(WireModel):
    """A repeated event: how many times, and when last (`MicroTime`)."""

    count: int = 0
    last_observed_time: str | None = None


class Event(Resource):
    api_version: Literal["v1"] = "v1"
    kind: Literal["Event"] = "Event"
    involved_object: ObjectReference = Field(default_factory=ObjectReference)
    reason: str = ""
    message: str = ""
    type: str = "Normal"
    count: int = 1
    first_timestamp: str | None = None
    last_timestamp: str | None = None
    source: EventSource | None = None
    # the events API's (events.k8s.io/v1), kept in core v1 under these names
    event_time: str | None = None
    series: EventSeries | None = None
    action: str | None = None
    related: ObjectReference | None = None
    reporting_component: str | None = None
    reporting_instance: str | None = None

    def first_seen(self) -> str | None:
        """When it first happened: `firstTimestamp`, else the events API's `eventTime`
        (what kubectl prints for an event written through events.k8s.io/v1)."""
        return self.first_timestamp or self.event_time

    def last_seen(self) -> str | None:
        """When it last happened, as kubectl's event printer reads it: the series' last
        observation, else `lastTimestamp`, else the first time."""
        if self.series is not None and self.series.last_observed_time:
            return self.series.last_observed_time
        return self.last_timestamp or self.first_seen()

    def times(self) -> int:
        """How often it happened: the series' count, else `count` (1 for a singleton of the
        events API, which sets none)."""
        if self.series is not None:
            return self.series.count
        return self.count or 1
