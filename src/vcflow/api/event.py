"""Kubernetes-style Events (`v1 Event`): what controllers tell users about an object, shown
by `describe` and asserted by the conformance cases (`Created`, `SyncJobFlow`)."""

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
